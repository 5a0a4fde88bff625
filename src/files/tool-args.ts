/**
 * Checking the file tools' arguments. The model's arguments are hostile or
 * sloppy: wrong types, numbers as strings, `""` or `null` for "not given".
 * Each check either returns a clean value or throws a `FileToolError` whose
 * message says what to send instead. Schema validation in dispatch catches
 * most of this first; the handlers are also called directly (execute_code,
 * embedders), so they check again.
 */

import { FileToolError } from "./errors.js";

const typeName = (value: unknown): string => (value === null ? "null" : Array.isArray(value) ? "array" : typeof value);

/** `""`, `null` and `undefined` mean "not given" for optional arguments. */
export const isAbsent = (value: unknown): boolean => value === undefined || value === null || value === "";

export function requiredString(value: unknown, name: string): string {
  if (typeof value !== "string") throw new FileToolError("invalid_args", `${name} must be a string, got ${typeName(value)}.`);
  return value;
}

export function optionalString(value: unknown, name: string): string | undefined {
  if (isAbsent(value)) return undefined;
  return requiredString(value, name);
}

export function optionalBoolean(value: unknown, name: string, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value === "boolean") return value;
  if (value === "true") return true;
  if (value === "false") return false;
  throw new FileToolError("invalid_args", `${name} must be true or false, got ${JSON.stringify(value)}.`);
}

export function optionalInteger(value: unknown, name: string, limits: { min: number; max: number; fallback: number }): number {
  if (isAbsent(value)) return limits.fallback;
  const n = typeof value === "string" && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== "number" || !Number.isInteger(n)) throw new FileToolError("invalid_args", `${name} must be an integer, got ${JSON.stringify(value)}.`);
  if (n < limits.min || n > limits.max) throw new FileToolError("invalid_args", `${name} must be between ${limits.min} and ${limits.max}, got ${n}.`);
  return n;
}

export function optionalChoice<T extends string>(value: unknown, name: string, choices: readonly T[], fallback: T): T {
  if (isAbsent(value)) return fallback;
  if (typeof value === "string" && (choices as readonly string[]).includes(value)) return value as T;
  throw new FileToolError("invalid_args", `${name} must be one of ${choices.map((c) => JSON.stringify(c)).join(", ")}, got ${JSON.stringify(value)}.`);
}

// Paths: C0 controls and DEL: a newline would break the scripts' line protocol (and
// no sane file name has one); the others are almost always a model's mistake.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

/** Checks a path argument; returns it unchanged. */
export function checkPathArgument(value: unknown, name = "path"): string {
  if (typeof value !== "string") {
    throw new FileToolError("invalid_args", `${name} must be a string, got ${value === null ? "null" : Array.isArray(value) ? "array" : typeof value}.`);
  }
  if (value.trim() === "") throw new FileToolError("invalid_args", `${name} must not be empty.`);
  if (CONTROL_CHARS.test(value)) {
    throw new FileToolError("invalid_args", `${name} must not contain NUL, newline, tab or other control characters.`);
  }
  if (value.length > 4096) throw new FileToolError("invalid_args", `${name} is longer than 4096 characters.`);
  return value;
}
