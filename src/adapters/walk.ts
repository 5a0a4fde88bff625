/**
 * The recursive walk shared by the converters that rewrite a schema node by
 * node (Gemini, OpenAI strict). Neither provider takes boolean schemas or
 * `allOf`, and both must follow local `$ref`s without looping, so those parts
 * live here once; a converter states only what its provider does with a
 * `$ref` and with a node that needs no further resolving.
 */
import type { JsonSchema } from "../registry/types.js";
import type { SchemaNode } from "./types.js";
import { isPlainObject } from "./clone.js";
import { objectParameters } from "./parameters.js";
import { depthOf, refName, resolveLocalRef } from "./refs.js";
import { mergeAllOf } from "./allOf.js";
import { annotate, render } from "./notes.js";
import { tupleItems } from "./shape.js";

export interface WalkContext {
  readonly root: SchemaNode;
  /** Refs inlined on the current path, outermost first. */
  readonly stack: readonly string[];
}

/** A `$ref` met on the walk, resolved against the root. */
export interface RefSite {
  readonly ref: string;
  /** The keywords beside the `$ref`; they refine the target (draft 2019+), so they win on conflict. */
  readonly siblings: SchemaNode;
  /** `undefined` when the ref is remote or points nowhere. */
  readonly target: SchemaNode | undefined;
  /** Inlining the target once more on this path would pass the recursion limit. */
  readonly recursive: boolean;
  /** Converts the target with the siblings laid over it, one level deeper on the stack. */
  inline(): SchemaNode;
}

export interface ConverterRules {
  /** How many times one `$ref` may be inlined along a single path before the walk stops following it. */
  readonly recursionLimit: number;
  ref(site: RefSite, ctx: WalkContext): SchemaNode;
  /** A schema object with neither `$ref` nor `allOf` left to resolve. */
  node(node: SchemaNode, ctx: WalkContext): SchemaNode;
}

export interface Walker {
  /** Converts a tool's parameters, which are also the root every local `$ref` resolves against. */
  parameters(parameters: JsonSchema | undefined): SchemaNode;
  convert(input: unknown, ctx: WalkContext): SchemaNode;
}

export function schemaWalker(rules: ConverterRules): Walker {
  function convert(input: unknown, ctx: WalkContext): SchemaNode {
    // `true` and a missing schema both mean "any value".
    if (input === true || input === undefined) return anyValue(undefined, []);
    if (!isPlainObject(input)) return anyValue(undefined, ["no value is accepted"]);
    if (typeof input.$ref === "string") return convertRef(input, input.$ref, ctx);
    if (Array.isArray(input.allOf)) return convertAllOf(input, input.allOf, ctx);
    return rules.node(input, ctx);
  }

  function convertRef(node: SchemaNode, ref: string, ctx: WalkContext): SchemaNode {
    const { $ref: _ref, ...siblings } = node;
    const target = resolveLocalRef(ctx.root, ref);
    const site: RefSite = {
      ref,
      siblings,
      target,
      recursive: depthOf(ctx.stack, ref) >= rules.recursionLimit,
      inline: () => convert({ ...target, ...siblings }, { ...ctx, stack: [...ctx.stack, ref] }),
    };
    return rules.ref(site, ctx);
  }

  function convertAllOf(node: SchemaNode, allOf: unknown[], ctx: WalkContext): SchemaNode {
    const { allOf: _allOf, ...base } = node;
    const members: SchemaNode[] = [];
    const notes: string[] = [];
    let stack = ctx.stack;
    for (const member of allOf) {
      if (!isPlainObject(member)) continue;
      if (typeof member.$ref !== "string") {
        members.push(member);
        continue;
      }
      const { $ref: ref, ...siblings } = member;
      const target = resolveLocalRef(ctx.root, ref);
      if (!target || depthOf(stack, ref) >= rules.recursionLimit) {
        notes.push(`must also match ${refName(ref)}`);
        continue;
      }
      stack = [...stack, ref];
      members.push({ ...target, ...siblings });
    }
    const { merged, conflicts } = mergeAllOf(base, members);
    for (const conflict of conflicts) notes.push(`must also match ${render(conflict)}`);
    const out = convert(merged, { ...ctx, stack });
    return annotate(out, out.description, notes);
  }

  return {
    parameters(parameters) {
      const root = objectParameters(parameters);
      return convert(root, { root, stack: [] });
    },
    convert,
  };
}

/** A schema with no type of its own. Neither provider accepts a typeless node; a string is always a valid instance of "any". */
export function anyValue(description: unknown, notes: readonly string[]): SchemaNode {
  return annotate({ type: "string" }, description, notes);
}

/**
 * The branches of an `anyOf` or `oneOf`. "Exactly one of" has no spelling in
 * either provider; "any of" is the closest and usually equivalent for
 * arguments, so a `oneOf` beside an `anyOf` is restated in `notes`.
 */
export function unionOf(node: SchemaNode, notes: string[]): unknown[] | undefined {
  if (Array.isArray(node.anyOf) && Array.isArray(node.oneOf)) {
    notes.push(`must also match exactly one of ${render(node.oneOf)}`);
  }
  return Array.isArray(node.anyOf) ? node.anyOf : Array.isArray(node.oneOf) ? node.oneOf : undefined;
}

/**
 * The converted `items` of an array schema, or `undefined` when it gives
 * none. Neither provider has tuples, so a tuple becomes "any of its members"
 * and its order is restated in `notes`.
 */
export function itemsOf(node: SchemaNode, notes: string[], convert: (schema: unknown) => SchemaNode): SchemaNode | undefined {
  if (isPlainObject(node.items) || typeof node.items === "boolean") return convert(node.items);
  const tuple = tupleItems(node);
  if (!tuple || tuple.length === 0) return undefined;
  const branches = tuple.map((schema) => convert(schema));
  notes.push(`items in order: ${tuple.map(render).join(", ")}`);
  return branches.length === 1 ? (branches[0] as SchemaNode) : { anyOf: branches };
}
