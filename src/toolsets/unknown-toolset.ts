/**
 * A toolset selection naming a toolset that does not exist. A typo in an
 * enabled list silently empties the tool list, one in a disabled list silently
 * keeps a toolset the caller meant to remove: both are errors, raised before
 * anything is selected. Names that resolve (built-in, defined, dynamic, legacy
 * `*_tools`, `all`/`*`) are fine; a toolset that exists but whose tools are all
 * unavailable is not an error (the list is just shorter).
 */
import type { SelectOptions } from "./types.js";

/** Which list of a selection a name came from. */
export type ToolsetListName = "enabled" | "disabled";

/** One name of a selection that resolves to nothing. */
export interface UnknownToolset {
  name: string;
  list: ToolsetListName;
  /** Its position in that list (0-based), so a caller can point at it (`--enable`, `toolsets.enabled[2]`). */
  index: number;
  /** Known names that look like it, best first (may be empty). */
  suggestions: string[];
}

/** What `findUnknownToolsets` needs of a catalog (`ToolsetCatalog` has it). */
export interface ToolsetNames {
  has(name: string): boolean;
  suggest(name: string): string[];
}

/** `Unknown toolset "webb"; did you mean: web, web_tools?` */
export function describeUnknownToolset(unknown: Pick<UnknownToolset, "name" | "suggestions">): string {
  const base = `Unknown toolset ${JSON.stringify(unknown.name)}`;
  return unknown.suggestions.length > 0 ? `${base}; did you mean: ${unknown.suggestions.join(", ")}?` : base;
}

/** Thrown by `selectTools`/`getToolDefinitions` (unless `unknownToolsets: "warn"`) for a selection that names an unknown toolset. */
export class UnknownToolsetError extends Error {
  override readonly name = "UnknownToolsetError";
  /** Every unknown name, enabled ones first, in the order given. */
  readonly unknown: readonly UnknownToolset[];

  constructor(unknown: readonly UnknownToolset[]) {
    super(
      `${unknown.map((u) => `${describeUnknownToolset(u)} (in the ${u.list} toolsets)`).join("; ")}. ` +
        "A name must be a built-in, defined or registered toolset, a legacy *_tools name, or all.",
    );
    this.unknown = Object.freeze(unknown.map((u) => Object.freeze({ ...u, suggestions: [...u.suggestions] })));
  }
}

/** The names of a selection that resolve to nothing (duplicates reported once per list). */
export function findUnknownToolsets(catalog: ToolsetNames, selection: SelectOptions): UnknownToolset[] {
  const out: UnknownToolset[] = [];
  const scan = (names: Iterable<string> | null | undefined, list: ToolsetListName): void => {
    if (names == null) return;
    const seen = new Set<string>();
    let index = 0;
    for (const name of names) {
      if (!seen.has(name) && !catalog.has(name)) out.push({ name, list, index, suggestions: catalog.suggest(name) });
      seen.add(name);
      index++;
    }
  };
  scan(selection.enabled, "enabled");
  scan(selection.disabled, "disabled");
  return out;
}
