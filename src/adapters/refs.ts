/**
 * Local `$ref` resolution for the converters that must inline or unwrap
 * references. Only same-document refs (`#`, `#/$defs/X`, `#/definitions/X`,
 * any `#/...` pointer) are resolved: tool schemas are exported standalone,
 * so a remote ref could never be followed by the provider either.
 */
import type { SchemaNode } from "./types.js";
import { isPlainObject } from "./clone.js";

/** The referenced node, or `undefined` when the ref is remote or points nowhere. */
export function resolveLocalRef(root: SchemaNode, ref: string): SchemaNode | undefined {
  const path = pointerPath(ref);
  if (path === undefined) return undefined;
  let node: unknown = root;
  for (const key of path) {
    if (Array.isArray(node)) node = node[Number(key)];
    // Own properties only: `#/$defs/__proto__` or `#/constructor` must not reach Object.prototype.
    else if (isPlainObject(node)) node = Object.hasOwn(node, key) ? node[key] : undefined;
    else return undefined;
  }
  return isPlainObject(node) ? node : undefined;
}

/** The decoded segments of a local ref (`[]` for `#`), or `undefined` for any other ref. */
export function pointerPath(ref: string): string[] | undefined {
  if (ref === "#") return [];
  if (!ref.startsWith("#/")) return undefined;
  try {
    return ref
      .slice(2)
      .split("/")
      .map((raw) => decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~"));
  } catch {
    return undefined; // a malformed %-escape: the ref points nowhere
  }
}

/**
 * Where `ref` leads once the refs that are nothing but a ref are followed:
 * the first schema on the way, `undefined` when the chain ends at nothing,
 * or `"loop"` when it only comes back to a ref already passed (`A: {$ref: B},
 * B: {$ref: A}`), so that no schema is ever reached. Terminates because a
 * ref string is never followed twice.
 */
export function followRefs(root: SchemaNode, ref: string): SchemaNode | undefined | "loop" {
  let node = resolveLocalRef(root, ref);
  // Nearly always the target is a schema of its own, and there is nothing to follow.
  if (node === undefined || typeof node.$ref !== "string") return node;
  const seen = new Set<string>([ref]);
  while (node !== undefined && typeof node.$ref === "string") {
    if (seen.has(node.$ref)) return "loop";
    seen.add(node.$ref);
    node = resolveLocalRef(root, node.$ref);
  }
  return node;
}

/** The last segment of a ref, for messages ("#/$defs/Node" -> "Node"; "#/x/oneOf/0" -> "oneOf/0"). */
export function refName(ref: string): string {
  const segments = ref.split("/");
  const last = segments.pop();
  if (!last || last === "#") return "root";
  const before = segments.pop();
  return /^\d+$/.test(last) && before && before !== "#" ? `${before}/${last}` : last;
}

/** How many times `ref` is already being expanded on the current path. */
export function depthOf(stack: readonly string[], ref: string): number {
  let n = 0;
  for (const r of stack) if (r === ref) n++;
  return n;
}
