/**
 * The recursive walk shared by the converters that rewrite a schema node by
 * node (Gemini, OpenAI strict). Neither provider takes boolean schemas or
 * `allOf`, and both must follow local `$ref`s without looping, so those parts
 * live here once; a converter states only what its provider does with a
 * `$ref` and with a node that needs no further resolving.
 *
 * Tool schemas come from third parties (MCP servers, plugins), so the walk
 * must end on any JSON, however deep or self-referencing. Three limits make
 * sure of it, each leaving a typed placeholder with a note where it cuts:
 * a `$ref` is followed at most `recursionLimit` times along one path; the
 * walk goes at most `MAX_DEPTH` schemas deep, which also keeps it far from
 * the call-stack limit; and `$ref` targets copied into one conversion add up
 * to at most `MAX_INLINED` characters, so refs that fan out (each level
 * referring twice to the next) cannot multiply the output without bound.
 */
import type { JsonSchema } from "../registry/types.js";
import type { SchemaNode } from "./types.js";
import { isPlainObject } from "./clone.js";
import { objectParameters } from "./parameters.js";
import { depthOf, followRefs, refName, resolveLocalRef } from "./refs.js";
import { mergeAllOf } from "./allOf.js";
import { annotate, render } from "./notes.js";
import { declaredTypes, inferType, tupleItems } from "./shape.js";

/** How many schemas deep a conversion goes (each followed `$ref` and merged `allOf` counts as one); deeper ones become a placeholder. */
export const MAX_DEPTH = 100;

/** Roughly how many characters of JSON the `$ref` targets copied into one conversion may add up to; later refs are cut. */
export const MAX_INLINED = 1_000_000;

export interface WalkContext {
  readonly root: SchemaNode;
  /** Refs inlined on the current path, outermost first. */
  readonly stack: readonly string[];
  /** Shared by the whole conversion. */
  readonly state: WalkState;
}

/** What one conversion keeps track of; converting is synchronous, so a counter can follow the walk up and down. */
export interface WalkState {
  /** How many schemas are being converted around the current one. */
  depth: number;
  /** Characters of JSON inlined so far. */
  inlined: number;
  /** JSON size of every input object measured so far. */
  readonly sizes: WeakMap<object, number>;
}

/** Why a ref's target is not inlined where it is met. */
export type RefLimit = "recursion" | "size";

/** A `$ref` met on the walk, resolved against the root. */
export interface RefSite {
  readonly ref: string;
  /** The keywords beside the `$ref`; they refine the target (draft 2019+), so they win on conflict. */
  readonly siblings: SchemaNode;
  /** `undefined` when the ref is remote, points nowhere, or leads only to other refs in a loop (`unresolved` says which). */
  readonly target: SchemaNode | undefined;
  /** When there is no target, the note saying why ("refers to …, which is not part of this schema"). */
  readonly unresolved: string | undefined;
  /**
   * Set when the target must not be inlined here: "recursion" when this ref
   * is already expanded `recursionLimit` times on the path, "size" when the
   * conversion has inlined as much as `MAX_INLINED` allows.
   */
  readonly limit: RefLimit | undefined;
  /** Converts the target with the siblings laid over it, one level deeper on the stack. */
  inline(): SchemaNode;
  /** A typed stand-in for the target, with a note saying it is not spelled out here and why. */
  placeholder(): SchemaNode;
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

/** The types a placeholder may take: the JSON types both providers know. */
const PLACEHOLDER_TYPES: readonly string[] = ["object", "array", "string", "number", "integer", "boolean"];

export function schemaWalker(rules: ConverterRules): Walker {
  function convert(input: unknown, ctx: WalkContext): SchemaNode {
    // `true` and a missing schema both mean "any value".
    if (input === true || input === undefined) return anyValue(undefined, []);
    if (!isPlainObject(input)) return anyValue(undefined, ["no value is accepted"]);
    const { state } = ctx;
    if (state.depth >= MAX_DEPTH) {
      return placeholder(input, input.description, `nested more than ${MAX_DEPTH} levels deep; not spelled out`, ctx);
    }
    state.depth++;
    try {
      if (typeof input.$ref === "string") return convertRef(input, input.$ref, ctx);
      if (Array.isArray(input.allOf)) return convertAllOf(input, input.allOf, ctx);
      return rules.node(input, ctx);
    } finally {
      state.depth--;
    }
  }

  /** A node of the schema's own type (or `object`) and no structure, converted by the rules so it is valid for the provider. */
  function placeholder(node: SchemaNode, description: unknown, note: string, ctx: WalkContext): SchemaNode {
    const declared = declaredTypes(node)?.find((t) => PLACEHOLDER_TYPES.includes(t));
    const type = declared ?? inferType(node) ?? "object";
    return annotate(rules.node({ type }, ctx), description, [note]);
  }

  function convertRef(node: SchemaNode, ref: string, ctx: WalkContext): SchemaNode {
    const { $ref: _ref, ...siblings } = node;
    let target = resolveLocalRef(ctx.root, ref);
    let unresolved: string | undefined;
    if (target === undefined) unresolved = `refers to ${ref}, which is not part of this schema`;
    // A target that is itself a ref may lead round in a loop without ever reaching a schema.
    // (One that ends at a missing target is followed: that ref is then named with its own siblings.)
    else if (typeof target.$ref === "string" && followRefs(ctx.root, ref) === "loop") {
      target = undefined;
      unresolved = `refers to ${ref}, which only leads back to itself`;
    }
    let size = 0;
    let limit: RefLimit | undefined;
    if (target) {
      if (depthOf(ctx.stack, ref) >= rules.recursionLimit) limit = "recursion";
      else {
        size = jsonSize(target, ctx.state.sizes);
        if (ctx.state.inlined + size > MAX_INLINED) limit = "size";
      }
    }
    const site: RefSite = {
      ref,
      siblings,
      target,
      unresolved,
      limit,
      inline: () => {
        ctx.state.inlined += size;
        return convert({ ...copyOf(target ?? {}), ...siblings }, { ...ctx, stack: [...ctx.stack, ref] });
      },
      placeholder: () => {
        const merged = { ...target, ...siblings };
        const why =
          limit === "size"
            ? "not spelled out, because the schema grows too large with its references expanded"
            : "the structure repeats recursively and is not spelled out at this depth";
        return placeholder(merged, merged.description, `a nested ${refName(ref)}; ${why}`, ctx);
      },
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
      const size = target && depthOf(stack, ref) < rules.recursionLimit ? jsonSize(target, ctx.state.sizes) : Infinity;
      if (!target || ctx.state.inlined + size > MAX_INLINED) {
        notes.push(`must also match ${refName(ref)}`);
        continue;
      }
      ctx.state.inlined += size;
      stack = [...stack, ref];
      members.push({ ...copyOf(target), ...siblings });
    }
    const { merged, conflicts } = mergeAllOf(base, members);
    for (const conflict of conflicts) notes.push(`must also match ${render(conflict)}`);
    const out = convert(merged, { ...ctx, stack });
    return annotate(out, out.description, notes);
  }

  return {
    parameters(parameters) {
      const root = objectParameters(parameters);
      return convert(root, { root, stack: [], state: { depth: 0, inlined: 0, sizes: new WeakMap() } });
    },
    convert,
  };
}

/**
 * Whether `value` nests at most `levels` deep, so that a converter may copy
 * it into the output as it is and the output still serialises (V8's
 * JSON.stringify fails a few thousand levels down). Checked without
 * recursion, stopping at the first part nested too deep.
 */
export function fitsDepth(value: unknown, levels = MAX_DEPTH): boolean {
  if (typeof value !== "object" || value === null) return true;
  const pending: [unknown, number][] = [[value, 0]];
  while (pending.length > 0) {
    const [v, depth] = pending.pop() as [unknown, number];
    if (typeof v !== "object" || v === null) continue;
    if (depth >= levels) return false;
    for (const child of Object.values(v)) pending.push([child, depth + 1]);
  }
  return true;
}

/**
 * A ref target as copied to where the ref is. Its definitions stay behind:
 * refs resolve against the root, so they are kept (and converted) where they
 * are written, and a copy of them would only repeat them.
 */
function copyOf(target: SchemaNode): SchemaNode {
  const { $defs: _defs, definitions: _definitions, ...rest } = target;
  return rest;
}

/**
 * Roughly how many characters `value` takes as JSON. Measured without
 * recursion (inputs may be nested far deeper than the stack allows) and
 * remembered per object, so a conversion measures each part of its input once.
 */
function jsonSize(value: unknown, sizes: WeakMap<object, number>): number {
  if (typeof value !== "object" || value === null) return scalarSize(value);
  const known = sizes.get(value);
  if (known !== undefined) return known;
  // Parents come before their children in `order`, so walking it backwards sizes children first.
  const order: object[] = [];
  const pending: object[] = [value];
  while (pending.length > 0) {
    const node = pending.pop() as object;
    order.push(node);
    for (const child of Object.values(node)) {
      if (typeof child === "object" && child !== null && !sizes.has(child)) pending.push(child);
    }
  }
  for (let i = order.length - 1; i >= 0; i--) {
    const node = order[i] as object;
    let size = 2;
    for (const [key, child] of Object.entries(node)) {
      const childSize = typeof child === "object" && child !== null ? (sizes.get(child) ?? 0) : scalarSize(child);
      size += key.length + 4 + childSize;
    }
    sizes.set(node, size);
  }
  return sizes.get(value) ?? 0;
}

function scalarSize(value: unknown): number {
  return typeof value === "string" ? value.length + 2 : String(value).length;
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
