/**
 * Neither Gemini nor OpenAI strict mode accepts `allOf`, but in tool schemas
 * it almost always means "this object plus these extra properties" (zod's
 * `.and()`, Pydantic inheritance). Such intersections flatten into a single
 * object schema losslessly; whatever does not flatten cleanly is handed back
 * so the caller can describe it instead of silently dropping it.
 */
import type { SchemaNode } from "./types.js";
import { isPlainObject, setOwn } from "./clone.js";

export interface MergeResult {
  merged: SchemaNode;
  /** Keywords of later members that contradicted earlier ones, one entry per member. */
  conflicts: SchemaNode[];
}

/** Whether two JSON values are equal (key order aside); without recursion, since members may be nested very deep. */
function same(a: unknown, b: unknown): boolean {
  const pending: [unknown, unknown][] = [[a, b]];
  while (pending.length > 0) {
    const [x, y] = pending.pop() as [unknown, unknown];
    if (x === y) continue;
    if (typeof x !== "object" || typeof y !== "object" || x === null || y === null) return false;
    if (Array.isArray(x) !== Array.isArray(y)) return false;
    const keys = Object.keys(x);
    if (keys.length !== Object.keys(y).length) return false;
    for (const key of keys) {
      if (!Object.hasOwn(y, key)) return false;
      pending.push([(x as Record<string, unknown>)[key], (y as Record<string, unknown>)[key]]);
    }
  }
  return true;
}

/**
 * Merges `members` (already dereferenced) into `base` (the node that held
 * the `allOf`, minus the `allOf` itself). Nested `allOf`s of members are
 * concatenated, not merged, so the caller's next pass handles them.
 */
export function mergeAllOf(base: SchemaNode, members: readonly SchemaNode[]): MergeResult {
  const merged: SchemaNode = { ...base };
  const conflicts: SchemaNode[] = [];
  for (const member of members) {
    const conflict: SchemaNode = {};
    for (const [key, value] of Object.entries(member)) {
      const current = Object.hasOwn(merged, key) ? merged[key] : undefined;
      if (current === undefined) {
        setOwn(merged, key, value);
      } else if (key === "properties" && isPlainObject(current) && isPlainObject(value)) {
        const props: Record<string, unknown> = { ...current };
        for (const [name, schema] of Object.entries(value)) {
          const known = Object.hasOwn(props, name) ? props[name] : undefined;
          if (known === undefined || same(known, schema)) setOwn(props, name, schema);
          // Same property constrained twice: intersect it on the next pass.
          else setOwn(props, name, { allOf: [known, schema] });
        }
        merged.properties = props;
      } else if (key === "required" && Array.isArray(current) && Array.isArray(value)) {
        merged.required = [...new Set([...current, ...value])];
      } else if (key === "allOf" && Array.isArray(current) && Array.isArray(value)) {
        merged.allOf = [...current, ...value];
      } else if (key === "description" || key === "title") {
        // The outer node's annotation describes the whole; a member's adds nothing the model needs twice.
        continue;
      } else if (!same(current, value)) {
        setOwn(conflict, key, value);
      }
    }
    if (Object.keys(conflict).length > 0) conflicts.push(conflict);
  }
  return { merged, conflicts };
}
