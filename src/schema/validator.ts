import { createRequire } from "node:module";
import type { ErrorObject, ValidateFunction } from "ajv";
import type { JsonSchema, StandardSchemaLike, ValidationIssue } from "../registry/types.js";
import { isThenable } from "../util/text.js";
import { linearRegExp } from "./linear-regexp.js";

/**
 * What a validator answers: `undefined` (valid as given), the issues the model
 * should fix, or `{ value }` — the arguments as the schema library parsed them
 * (zod defaults and transforms applied), which the handler then receives.
 */
export type ValidationOutcome = undefined | ValidationIssue[] | { value: Record<string, unknown> };

/** A compiled argument validator. Standard Schema validators may answer asynchronously. */
export type ArgumentValidator = (args: Record<string, unknown>) => ValidationOutcome | Promise<ValidationOutcome>;

type AjvInstance = import("ajv").default;
let sharedAjv: AjvInstance | undefined;

// Ajv is loaded on the first validation, not at import: listing tools must stay fast.
function ajv(): AjvInstance {
  if (sharedAjv === undefined) {
    const require = createRequire(import.meta.url);
    const AjvClass = (require("ajv") as { default: typeof import("ajv").default }).default;
    // Patterns run on a linear-time engine: schemas come from MCP servers and plugins (see linear-regexp.ts).
    sharedAjv = new AjvClass({ allErrors: true, strict: false, validateFormats: false, addUsedSchema: false, code: { regExp: linearRegExp } });
  }
  return sharedAjv;
}

/** Compiles a JSON Schema into a validator (code generation, once per tool). */
export function compileJsonSchemaValidator(schema: JsonSchema): ArgumentValidator {
  const { $schema: _dialect, ...compilable } = schema;
  const validate: ValidateFunction = ajv().compile(compilable);
  return (args) => (validate(args) ? undefined : ajvIssues(validate.errors ?? [], args));
}

export function compileStandardSchemaValidator(schema: StandardSchemaLike): ArgumentValidator {
  const standard = schema["~standard"];
  return (args) => {
    const outcome = standard.validate(args);
    return isThenable(outcome) ? Promise.resolve(outcome).then(standardOutcome) : standardOutcome(outcome);
  };
}

function standardOutcome(outcome: Awaited<ReturnType<StandardSchemaLike["~standard"]["validate"]>>): ValidationOutcome {
  if (outcome.issues === undefined) {
    const value = outcome.value;
    return value !== null && typeof value === "object" && !Array.isArray(value) ? { value: value as Record<string, unknown> } : undefined;
  }
  return outcome.issues.map((issue) => ({
    path: (issue.path ?? []).map((segment) => String(typeof segment === "object" ? segment.key : segment)).join("."),
    message: issue.message,
  }));
}

function ajvIssues(errors: readonly ErrorObject[], args: Record<string, unknown>): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    const issue = ajvIssue(error, args);
    const key = `${issue.path}\u0000${issue.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
  }
  return issues;
}

function ajvIssue(error: ErrorObject, args: Record<string, unknown>): ValidationIssue {
  const base = pointerToPath(error.instancePath);
  const join = (child: string) => (base === "" ? child : `${base}.${child}`);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return { path: join(String(params.missingProperty)), message: "is required", keyword: "required" };
    case "additionalProperties":
      return {
        path: join(String(params.additionalProperty)),
        message: "is not a parameter of this tool",
        keyword: "additionalProperties",
      };
    case "enum":
      return {
        path: base,
        message: `must be one of: ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`,
        keyword: "enum",
      };
    case "type":
      return { path: base, message: typeMessage(String(params.type), valueAt(args, error.instancePath)), keyword: "type" };
    default:
      return { path: base, message: error.message ?? `fails ${error.keyword}`, keyword: error.keyword };
  }
}

/** Longest part of a rejected string quoted back in a message. */
const MAX_QUOTED_CHARS = 40;

/**
 * `must be of type integer, got the string "abc"`: saying what arrived tells
 * the model what to change. Dispatch already converted strings that spell a
 * number or boolean (see dispatch/coerce-arguments.ts); a decimal string for
 * an integer is named as such, since "must be of type integer" alone reads as
 * a complaint about the quotes.
 */
function typeMessage(expected: string, value: unknown): string {
  if (typeof value === "string" && expected.split(",").includes("integer") && !expected.split(",").includes("number")) {
    const number = value.trim() === "" ? Number.NaN : Number(value);
    if (Number.isFinite(number) && !Number.isInteger(number)) return `must be a whole number (type integer), got ${quote(value)}`;
  }
  return `must be of type ${expected}, got ${describeValue(value)}`;
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "string":
      return `the string ${quote(value)}`;
    case "number":
    case "boolean":
      return `the ${typeof value} ${String(value)}`;
    case "object":
      return "an object";
    default:
      return typeof value;
  }
}

function quote(text: string): string {
  return text.length <= MAX_QUOTED_CHARS ? JSON.stringify(text) : `${JSON.stringify(text.slice(0, MAX_QUOTED_CHARS)).slice(0, -1)}…"`;
}

/** The value a JSON Pointer names inside the validated arguments. */
function valueAt(root: unknown, pointer: string): unknown {
  if (pointer === "") return root;
  let value = root;
  for (const part of pointer.slice(1).split("/")) {
    if (value === null || typeof value !== "object") return undefined;
    const key = part.replace(/~1/g, "/").replace(/~0/g, "~");
    value = Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
  }
  return value;
}

/** `/a/0/b~1c` → `a.0.b/c` — the model reads dotted paths more easily than JSON Pointers. */
function pointerToPath(pointer: string): string {
  if (pointer === "") return "";
  return pointer
    .slice(1)
    .split("/")
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))
    .join(".");
}

/** One line the model can act on: `query: is required; limit: must be <= 10`. */
export function describeIssues(issues: readonly ValidationIssue[]): string {
  return issues.map((issue) => (issue.path === "" ? issue.message : `${issue.path}: ${issue.message}`)).join("; ");
}
