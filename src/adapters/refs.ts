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
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(node)) node = node[Number(key)];
    else if (isPlainObject(node)) node = node[key];
    else return undefined;
  }
  return isPlainObject(node) ? node : undefined;
}

/** The last segment of a ref, for messages ("#/$defs/Node" -> "Node"). */
export function refName(ref: string): string {
  const last = ref.split("/").pop();
  return last && last !== "#" ? last : "root";
}

/** How many times `ref` is already being expanded on the current path. */
export function depthOf(stack: readonly string[], ref: string): number {
  let n = 0;
  for (const r of stack) if (r === ref) n++;
  return n;
}
