/**
 * When a provider cannot take a JSON Schema keyword, dropping it silently
 * would let the model send values the tool then rejects. The adapters instead
 * restate the constraint in words inside the node's description, which every
 * provider shows to the model. This module owns that wording, so that the
 * Gemini and strict-mode exports phrase the same constraint the same way.
 */
import type { SchemaNode } from "./types.js";
import { isPlainObject } from "./clone.js";

const MAX_RENDERED = 160;

/** Compact JSON for a value quoted inside a description, shortened so one huge enum cannot swamp it. */
export function render(value: unknown): string {
  const text = jsonPrefix(value, MAX_RENDERED) ?? String(value);
  return text.length > MAX_RENDERED ? `${text.slice(0, MAX_RENDERED - 1)}…` : text;
}

/**
 * `JSON.stringify(value)` for the JSON values found in a schema, but only
 * its first `limit` characters and a little more: writing stops there, so
 * quoting a huge or deeply nested subschema costs no more than a short one
 * (and cannot overflow the stack: every level writes at least one character).
 * `undefined` when the value has no JSON form, as for `JSON.stringify`.
 */
function jsonPrefix(value: unknown, limit: number): string | undefined {
  let out = "";
  const write = (v: unknown, inArray: boolean): boolean => {
    if (typeof v === "string") out += JSON.stringify(v.length > limit ? v.slice(0, limit) : v);
    else if (typeof v === "number") out += Number.isFinite(v) ? String(v) : "null";
    else if (typeof v === "boolean" || v === null) out += String(v);
    else if (Array.isArray(v)) {
      out += "[";
      for (let i = 0; i < v.length && out.length <= limit; i++) {
        if (i > 0) out += ",";
        write(v[i], true);
      }
      out += "]";
    } else if (typeof v === "object") {
      out += "{";
      let first = true;
      for (const [key, item] of Object.entries(v)) {
        if (out.length > limit) break;
        if (item === undefined || typeof item === "function" || typeof item === "symbol") continue;
        out += `${first ? "" : ","}${JSON.stringify(key)}:`;
        first = false;
        write(item, false);
      }
      out += "}";
    } else if (inArray) out += "null";
    else return false;
    return true;
  };
  return write(value, false) ? out : undefined;
}

function plural(n: unknown, one: string, many: string): string {
  return n === 1 ? `1 ${one}` : `${String(n)} ${many}`;
}

/**
 * The sentence for one dropped keyword of `node`, or `undefined` when the
 * keyword carries no constraint worth telling the model (e.g. `uniqueItems:false`).
 */
export function noteFor(keyword: string, node: SchemaNode): string | undefined {
  const v = node[keyword];
  switch (keyword) {
    case "minLength":
      return `at least ${plural(v, "character", "characters")}`;
    case "maxLength":
      return `at most ${plural(v, "character", "characters")}`;
    case "pattern":
      return `must match pattern ${String(v)}`;
    // Draft-04 spelled exclusive bounds as booleans beside minimum/maximum.
    case "minimum":
      return node.exclusiveMinimum === true ? `greater than ${render(v)}` : `at least ${render(v)}`;
    case "maximum":
      return node.exclusiveMaximum === true ? `less than ${render(v)}` : `at most ${render(v)}`;
    case "exclusiveMinimum":
      if (typeof v === "number") return `greater than ${v}`;
      return v === true && typeof node.minimum === "number" ? `greater than ${node.minimum}` : undefined;
    case "exclusiveMaximum":
      if (typeof v === "number") return `less than ${v}`;
      return v === true && typeof node.maximum === "number" ? `less than ${node.maximum}` : undefined;
    case "multipleOf":
      return `a multiple of ${render(v)}`;
    case "minItems":
      return `at least ${plural(v, "item", "items")}`;
    case "maxItems":
      return `at most ${plural(v, "item", "items")}`;
    case "uniqueItems":
      return v === true ? "no duplicate items" : undefined;
    case "minProperties":
      return `at least ${plural(v, "property", "properties")}`;
    case "maxProperties":
      return `at most ${plural(v, "property", "properties")}`;
    case "format":
      return `format: ${String(v)}`;
    case "default":
      return `default: ${render(v)}`;
    case "const":
      return `must be ${render(v)}`;
    case "enum":
      return Array.isArray(v) ? `one of: ${v.map(render).join(", ")}` : undefined;
    case "examples":
      return Array.isArray(v) && v.length > 0 ? `e.g. ${v.map(render).join(", ")}` : undefined;
    case "not":
      return `must not match ${render(v)}`;
    case "if": {
      const parts = [`if it matches ${render(v)}`];
      if (node.then !== undefined) parts.push(`then it must match ${render(node.then)}`);
      if (node.else !== undefined) parts.push(`otherwise it must match ${render(node.else)}`);
      return parts.join(", ");
    }
    case "additionalProperties":
      if (v === true) return "any other properties are allowed";
      return isPlainObject(v) ? `other properties: ${render(v)}` : undefined;
    case "unevaluatedProperties":
      return isPlainObject(v) ? `other properties: ${render(v)}` : undefined;
    case "patternProperties":
      return isPlainObject(v)
        ? Object.entries(v).map(([p, s]) => `properties matching ${p}: ${render(s)}`).join("; ")
        : undefined;
    case "propertyNames":
      return `property names: ${render(v)}`;
    case "dependentRequired":
      return isPlainObject(v)
        ? Object.entries(v).map(([k, deps]) => `if ${k} is given, also give ${render(deps)}`).join("; ")
        : undefined;
    case "dependentSchemas":
      return isPlainObject(v)
        ? Object.entries(v).map(([k, s]) => `if ${k} is given, the object must match ${render(s)}`).join("; ")
        : undefined;
    case "contains": {
      const min = node.minContains;
      const max = node.maxContains;
      const count =
        typeof min === "number" || typeof max === "number"
          ? ` (${[typeof min === "number" ? `at least ${min}` : "", typeof max === "number" ? `at most ${max}` : ""].filter(Boolean).join(", ")})`
          : "";
      return `must contain items matching ${render(v)}${count}`;
    }
    case "prefixItems":
      return Array.isArray(v) ? `items in order: ${v.map(render).join(", ")}` : undefined;
    case "deprecated":
      return v === true ? "deprecated" : undefined;
    default:
      return undefined;
  }
}

/** Appends notes to a description in one parenthesised clause; leaves it untouched when there are none. */
export function withNotes(description: unknown, notes: readonly string[]): string | undefined {
  const base = typeof description === "string" && description.trim() !== "" ? description.trim() : undefined;
  if (notes.length === 0) return base;
  const clause = `(${notes.join("; ")})`;
  return base ? `${base} ${clause}` : clause;
}

/** The notes for those of `keywords` that `node` sets, in the order given. */
export function notesFor(node: SchemaNode, keywords: readonly string[]): string[] {
  const notes: string[] = [];
  for (const key of keywords) {
    if (node[key] === undefined) continue;
    const note = noteFor(key, node);
    if (note) notes.push(note);
  }
  return notes;
}

/** Sets `out.description` to `description` plus `notes`, leaving it unset when both are empty. */
export function annotate(out: SchemaNode, description: unknown, notes: readonly string[]): SchemaNode {
  const text = withNotes(description, notes);
  if (text !== undefined) out.description = text;
  return out;
}
