/**
 * Reading what a JSON Schema node *means* when it does not say so directly:
 * generated schemas often omit `type` beside `properties`, or spell a null
 * alternative three different ways. Both rewriting adapters need the same
 * answers, so they live here.
 */
import type { SchemaNode } from "./types.js";
import { isPlainObject } from "./clone.js";

/** True for a schema that only admits `null` (`{type:"null"}`, `{const:null}`, `{enum:[null]}`). */
export function isNullSchema(node: unknown): boolean {
  if (!isPlainObject(node)) return false;
  if (node.type === "null" || node.const === null) return true;
  return Array.isArray(node.enum) && node.enum.length > 0 && node.enum.every((v) => v === null);
}

/** The node's `type` as a list, or `undefined` when it declares none. */
export function declaredTypes(node: SchemaNode): string[] | undefined {
  if (typeof node.type === "string") return [node.type];
  if (Array.isArray(node.type)) return node.type.filter((t): t is string => typeof t === "string");
  return undefined;
}

/** The type a typeless schema evidently means, judged by its other keywords. */
export function inferType(node: SchemaNode): string | undefined {
  if (node.properties !== undefined || node.additionalProperties !== undefined || node.required !== undefined) {
    return "object";
  }
  if (node.items !== undefined || node.prefixItems !== undefined) return "array";
  const values = Array.isArray(node.enum) ? node.enum : "const" in node ? [node.const] : [];
  const present = values.filter((v) => v !== null);
  if (present.length > 0) {
    if (present.every((v) => typeof v === "string")) return "string";
    if (present.every((v) => typeof v === "boolean")) return "boolean";
    if (present.every((v) => Number.isInteger(v))) return "integer";
    if (present.every((v) => typeof v === "number")) return "number";
  }
  if (node.minLength !== undefined || node.maxLength !== undefined || node.pattern !== undefined) return "string";
  if (node.minimum !== undefined || node.maximum !== undefined || node.multipleOf !== undefined) return "number";
  return undefined;
}

/** The tuple members of an array schema, in either the 2020-12 (`prefixItems`) or draft-04 (`items: [...]`) spelling. */
export function tupleItems(node: SchemaNode): unknown[] | undefined {
  if (Array.isArray(node.prefixItems)) return node.prefixItems;
  if (Array.isArray(node.items)) return node.items;
  return undefined;
}
