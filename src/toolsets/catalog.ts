import { BUILTIN_TOOLSETS } from "./builtin-toolsets.js";
import { LEGACY_TOOLSETS } from "./legacy.js";
import { closeMatches } from "./suggest.js";
import type { ResolveResult, SelectOptions, ToolIndex, ToolsetDefinition, ToolsetOrigin } from "./types.js";

/** Names that resolve to every registered tool. */
const ALL_ALIASES: ReadonlySet<string> = new Set(["all", "*"]);

/** Caches keyed by arbitrary (user-typed) names are dropped wholesale past this size. */
const MAX_CACHED_NAMES = 4096;

/** A toolset name met while expanding `includes`. */
interface Reached {
  readonly name: string;
  /** The toolset whose `includes` named it; `undefined` for the name being resolved. */
  readonly from: string | undefined;
  /** Static, defined or legacy (known without asking the index). */
  readonly declared: boolean;
}

/** The index-independent part of a resolution; cached until `define()`/`remove()`. */
interface Expansion {
  /** Tools listed by every static/defined/legacy toolset reached. */
  readonly tools: ReadonlySet<string>;
  /** Every toolset name reached; each one's registered tools join the result. */
  readonly reached: readonly Reached[];
  /** `all` or `*` was reached. */
  readonly all: boolean;
  /** Cycle warnings. */
  readonly warnings: readonly string[];
}

/** An internal result. May be shared through a cache: never mutated once built. */
interface Resolved {
  readonly tools: ReadonlySet<string>;
  readonly unknown: readonly string[];
  readonly warnings: readonly string[];
}

function validateDefinition(def: ToolsetDefinition, what: string): ToolsetDefinition {
  if (def === null || typeof def !== "object") throw new TypeError(`${what}: a toolset definition must be an object`);
  if (typeof def.name !== "string" || def.name.trim() === "") {
    throw new TypeError(`${what}: a toolset needs a non-empty string name`);
  }
  if (ALL_ALIASES.has(def.name)) throw new TypeError(`${what}: "${def.name}" is reserved (it means every registered tool)`);
  const strings = (value: unknown, field: string): readonly string[] => {
    if (value === undefined) return Object.freeze([]);
    if (!Array.isArray(value) || value.some((v) => typeof v !== "string" || v === "")) {
      throw new TypeError(`${what}: toolset "${def.name}" ${field} must be an array of non-empty strings`);
    }
    return Object.freeze([...new Set(value as string[])]);
  };
  const kind = def.kind;
  if (kind !== undefined && kind !== "toolset" && kind !== "composite" && kind !== "preset") {
    throw new TypeError(`${what}: toolset "${def.name}" has an invalid kind ${JSON.stringify(kind)}`);
  }
  const copy: ToolsetDefinition = {
    name: def.name,
    description: typeof def.description === "string" ? def.description : "",
    tools: strings(def.tools, "tools"),
    includes: strings(def.includes, "includes"),
  };
  if (kind !== undefined) copy.kind = kind;
  return Object.freeze(copy);
}

function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Resolves toolset names into tool names: built-in toolsets, composites and
 * presets (expanded through `includes`, cycle-safely), toolsets defined at run
 * time (`define`), dynamic toolsets (tools registered under a toolset name no
 * definition declares, e.g. an MCP server's), legacy `*_tools` names, and
 * `all`/`*`.
 *
 * Results are tool *names*; whether a tool is registered and available is for
 * the caller to check. A static toolset's tools are its declared tools plus the
 * registered tools of that toolset name, so a plugin tool registered under
 * `web` joins `web`.
 *
 * Caching: the index-independent expansion of each name is cached until
 * `define()`/`remove()`. Anything derived from the index is cached only when
 * the index offers `generation()`, and then per generation; otherwise the index
 * is asked on every call.
 */
export class ToolsetCatalog {
  readonly #index: ToolIndex;
  readonly #builtins = new Map<string, ToolsetDefinition>();
  readonly #defined = new Map<string, ToolsetDefinition>();
  readonly #legacy = new Map<string, readonly string[]>();
  readonly #expansions = new Map<string, Expansion>();

  /** The index generation the caches below belong to (`undefined`: nothing cached). */
  #generation: number | undefined;
  readonly #resolved = new Map<string, Resolved>();
  #allTools: ReadonlySet<string> | undefined;

  constructor(index: ToolIndex, builtins: readonly ToolsetDefinition[] = BUILTIN_TOOLSETS) {
    this.#index = index;
    for (const def of builtins) {
      const copy = validateDefinition(def, "ToolsetCatalog");
      if (this.#builtins.has(copy.name)) throw new TypeError(`ToolsetCatalog: duplicate built-in toolset "${copy.name}"`);
      this.#builtins.set(copy.name, copy);
    }
    // Legacy names keep meaning the shipped toolsets' tools, whatever builtins this catalog was given.
    for (const [name, modern] of Object.entries(LEGACY_TOOLSETS)) {
      const tools = BUILTIN_TOOLSETS.find((def) => def.name === modern)?.tools;
      if (tools === undefined) throw new TypeError(`ToolsetCatalog: legacy toolset "${name}" names unknown toolset "${modern}"`);
      this.#legacy.set(name, tools);
    }
  }

  // ---- Definitions ------------------------------------------------------------

  /**
   * Adds or replaces a toolset at run time (MCP servers, plugins, user config).
   * A defined toolset shadows a built-in or legacy name of the same name until
   * removed. Returns the stored (validated, frozen) copy.
   */
  define(def: ToolsetDefinition): ToolsetDefinition {
    const copy = validateDefinition(def, "ToolsetCatalog.define");
    this.#defined.set(copy.name, copy);
    this.#invalidate();
    return copy;
  }

  /**
   * Removes a toolset added with `define()`; a shadowed built-in becomes visible
   * again. Built-ins cannot be removed. Returns whether something was removed.
   */
  remove(name: string): boolean {
    if (!this.#defined.delete(name)) return false;
    this.#invalidate();
    return true;
  }

  /**
   * The definition behind a name: a defined or built-in definition as declared
   * (use `resolve()` for its effective tools), or a synthesized one for a
   * dynamic toolset (its registered tools) or a legacy name. `undefined` for
   * `all`/`*` and unknown names.
   */
  get(name: string): ToolsetDefinition | undefined {
    const declared = this.#static(name);
    if (declared) return declared;
    const legacy = this.#legacy.get(name);
    if (legacy) {
      return Object.freeze({
        name,
        description: "Legacy toolset name, kept for backward compatibility.",
        tools: legacy,
        includes: Object.freeze([]),
        kind: "toolset" as const,
      });
    }
    const registered = [...this.#index.toolsInToolset(name)];
    if (registered.length === 0) return undefined;
    return Object.freeze({
      name,
      description: `Dynamic toolset: the tools registered under "${name}".`,
      tools: Object.freeze([...new Set(registered)].sort(byName)),
      includes: Object.freeze([]),
      kind: "toolset" as const,
    });
  }

  /** Every built-in and defined definition (defined ones shadow built-ins), sorted by name. */
  definitions(): ToolsetDefinition[] {
    const names = new Set([...this.#builtins.keys(), ...this.#defined.keys()]);
    return [...names].sort(byName).map((name) => this.#static(name)!);
  }

  /** Built-in, defined and dynamic (from the index) toolset names, sorted. Legacy names and `all` are not listed. */
  names(): string[] {
    const names = new Set<string>(this.#builtins.keys());
    for (const name of this.#defined.keys()) names.add(name);
    for (const name of this.#index.registeredToolsets()) names.add(name);
    return [...names].sort(byName);
  }

  /** Whether `name` resolves to something: a listed name, a legacy name, or `all`/`*`. */
  has(name: string): boolean {
    return this.origin(name) !== undefined;
  }

  /** Up to three known names (listed, legacy or `all`) that look like `name`, best first; for messages about a typo. */
  suggest(name: string): string[] {
    return closeMatches(name, [...this.names(), ...this.#legacy.keys(), "all"]);
  }

  /** Where a name comes from, or `undefined` if it is unknown. */
  origin(name: string): ToolsetOrigin | undefined {
    if (ALL_ALIASES.has(name)) return "all";
    if (this.#defined.has(name)) return "defined";
    if (this.#builtins.has(name)) return "builtin";
    if (this.#legacy.has(name)) return "legacy";
    for (const _ of this.#index.toolsInToolset(name)) return "dynamic";
    return undefined;
  }

  /**
   * The toolsets that list `tool`: definitions whose `tools` name it, and the
   * toolset it is registered under. With `transitive`, every listed toolset
   * whose resolution contains it (composites and presets too). Sorted.
   */
  toolsetsOfTool(tool: string, options: { transitive?: boolean } = {}): string[] {
    const out = new Set<string>();
    if (options.transitive) {
      const caching = this.#sync();
      for (const name of this.names()) if (this.#resolve(name, caching).tools.has(tool)) out.add(name);
      return [...out].sort(byName);
    }
    for (const def of this.definitions()) if (def.tools.includes(tool)) out.add(def.name);
    for (const toolset of this.#index.registeredToolsets()) {
      if (out.has(toolset)) continue;
      for (const name of this.#index.toolsInToolset(toolset)) {
        if (name === tool) {
          out.add(toolset);
          break;
        }
      }
    }
    return [...out].sort(byName);
  }

  // ---- Resolution -------------------------------------------------------------

  /** Resolves one name. Never throws for unknown names: they land in `unknown` with a warning. */
  resolve(name: string): ResolveResult {
    const caching = this.#sync();
    const r = this.#resolve(name, caching);
    // Cached results are shared and must be copied; uncached ones are fresh.
    if (!caching) return r as ResolveResult;
    return { tools: new Set(r.tools), unknown: [...r.unknown], warnings: [...r.warnings] };
  }

  /** The union of several names' resolutions (warnings deduplicated). */
  resolveMany(names: Iterable<string>): ResolveResult {
    return this.select({ enabled: names });
  }

  /**
   * The selection `get_tool_definitions()` makes:
   * - `enabled` given (even empty) → the union of those toolsets;
   * - otherwise → every registered tool;
   * - then, in both cases, the tools of the `disabled` toolsets are removed.
   *
   * Deliberate difference from the Python original, which ignores
   * `disabled_toolsets` when `enabled_toolsets` is given: here `disabled`
   * always subtracts. Removal is by tool, so disabling `terminal` also removes
   * `terminal` from a preset that includes it. Returns names only; the caller
   * filters by registration and availability.
   */
  select(options: SelectOptions = {}): ResolveResult {
    const caching = this.#sync();
    const unknown = new Set<string>();
    const warnings = new Set<string>();
    const merge = (r: Resolved): void => {
      for (const u of r.unknown) unknown.add(u);
      for (const w of r.warnings) warnings.add(w);
    };

    let tools: Set<string>;
    if (options.enabled != null) {
      tools = new Set();
      for (const name of options.enabled) {
        const r = this.#resolve(name, caching);
        merge(r);
        // Without a generation every result is freshly built, so the first one can be adopted.
        if (tools.size === 0) tools = caching ? new Set(r.tools) : (r.tools as Set<string>);
        else for (const t of r.tools) tools.add(t);
      }
    } else {
      const all = this.#all(caching);
      // Without a generation `all` is a fresh set this call owns; with one it is shared.
      tools = caching ? new Set(all) : (all as Set<string>);
    }

    if (options.disabled != null) {
      for (const name of options.disabled) {
        const r = this.#resolve(name, caching);
        merge(r);
        if (tools.size === 0) continue;
        for (const t of r.tools) tools.delete(t);
      }
    }
    return { tools, unknown: [...unknown], warnings: [...warnings] };
  }

  // ---- Internals --------------------------------------------------------------

  #static(name: string): ToolsetDefinition | undefined {
    return this.#defined.get(name) ?? this.#builtins.get(name);
  }

  #invalidate(): void {
    this.#expansions.clear();
    this.#resolved.clear();
  }

  /** Drops index-derived caches when the generation moved. Returns whether caching is possible. */
  #sync(): boolean {
    const generationOf = this.#index.generation;
    if (typeof generationOf !== "function") {
      if (this.#generation !== undefined) {
        this.#generation = undefined;
        this.#resolved.clear();
        this.#allTools = undefined;
      }
      return false;
    }
    const generation = generationOf.call(this.#index);
    if (generation !== this.#generation) {
      this.#generation = generation;
      this.#resolved.clear();
      this.#allTools = undefined;
    }
    return true;
  }

  #all(caching: boolean): ReadonlySet<string> {
    if (!caching) return new Set(this.#index.toolNames());
    this.#allTools ??= new Set(this.#index.toolNames());
    return this.#allTools;
  }

  #resolve(name: string, caching: boolean): Resolved {
    if (caching) {
      const hit = this.#resolved.get(name);
      if (hit) return hit;
    }
    const r = this.#compute(name, caching);
    if (caching) {
      if (this.#resolved.size >= MAX_CACHED_NAMES) this.#resolved.clear();
      this.#resolved.set(name, r);
    }
    return r;
  }

  #compute(name: string, caching: boolean): Resolved {
    if (ALL_ALIASES.has(name)) {
      const all = this.#all(caching);
      return { tools: all, unknown: [], warnings: [] };
    }
    const expansion = this.#expand(name);
    const tools = new Set(expansion.tools);
    if (expansion.all) for (const t of this.#all(caching)) tools.add(t);
    const unknown: string[] = [];
    const warnings: string[] = [];
    for (const reached of expansion.reached) {
      let found = false;
      for (const t of this.#index.toolsInToolset(reached.name)) {
        tools.add(t);
        found = true;
      }
      if (found || reached.declared) continue;
      if (reached.from === undefined) {
        unknown.push(reached.name);
        warnings.push(this.#unknownWarning(`Unknown toolset "${reached.name}"`, reached.name));
      } else {
        warnings.push(
          this.#unknownWarning(`Toolset "${reached.from}" includes unknown toolset "${reached.name}"`, reached.name),
        );
      }
    }
    warnings.push(...expansion.warnings);
    return { tools, unknown, warnings };
  }

  #unknownWarning(message: string, name: string): string {
    const matches = this.suggest(name);
    return matches.length > 0 ? `${message}; did you mean: ${matches.join(", ")}?` : message;
  }

  /** Expands `includes` depth-first. A name met again on the current path is a cycle: warned about, not followed. */
  #expand(root: string): Expansion {
    const cached = this.#expansions.get(root);
    if (cached) return cached;

    const tools = new Set<string>();
    const reached: Reached[] = [];
    const warnings: string[] = [];
    const visited = new Set<string>();
    const path: string[] = [];
    let all = false;

    const visit = (name: string, from: string | undefined): void => {
      if (ALL_ALIASES.has(name)) {
        all = true;
        return;
      }
      const onPath = path.indexOf(name);
      if (onPath >= 0) {
        warnings.push(`Toolset cycle: ${[...path.slice(onPath), name].join(" -> ")} (not followed)`);
        return;
      }
      if (visited.has(name)) return;
      visited.add(name);

      const def = this.#static(name);
      if (def) {
        reached.push({ name, from, declared: true });
        for (const t of def.tools) tools.add(t);
        path.push(name);
        for (const include of def.includes) visit(include, name);
        path.pop();
        return;
      }
      const legacy = this.#legacy.get(name);
      if (legacy) {
        reached.push({ name, from, declared: true });
        for (const t of legacy) tools.add(t);
        return;
      }
      reached.push({ name, from, declared: false });
    };
    visit(root, undefined);

    const expansion: Expansion = { tools, reached, all, warnings };
    if (this.#expansions.size >= MAX_CACHED_NAMES) this.#expansions.clear();
    this.#expansions.set(root, expansion);
    return expansion;
  }
}
