/**
 * The memory file format: entries separated by a line holding only `§` (`"\n§\n"`), each entry
 * trimmed, empty entries dropped. Entries may span lines. Usage is counted in characters (UTF-16
 * code units, JavaScript's `length`) of the joined text, which is what the limits bound.
 */

export const ENTRY_DELIMITER = "\n§\n";

export type MemoryTarget = "memory" | "user";
export const MEMORY_TARGETS: readonly MemoryTarget[] = Object.freeze(["memory", "user"]);

/** The file name of each target inside `memories/`. */
export const MEMORY_FILE_NAMES: Readonly<Record<MemoryTarget, string>> = Object.freeze({ memory: "MEMORY.md", user: "USER.md" });

export function parseEntries(raw: string): string[] {
  if (raw.trim() === "") return [];
  return raw
    .split(ENTRY_DELIMITER)
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
}

export function serializeEntries(entries: readonly string[]): string {
  return entries.join(ENTRY_DELIMITER);
}

/** Characters the entries take in the file. */
export function entriesUsage(entries: readonly string[]): number {
  return entries.length === 0 ? 0 : serializeEntries(entries).length;
}

/** A line that is only `§` (give or take spaces or a `\r`) would split the entry when it is read back. */
const DELIMITER_LINE = /(?:^|\n)[ \t]*§[ \t\r]*(?:\n|$)/;

export function containsDelimiter(content: string): boolean {
  return DELIMITER_LINE.test(content);
}

/**
 * Why rewriting `raw` from its parsed entries would lose something, or undefined when it round-trips:
 * the file is what the tool would write (give or take surrounding whitespace), and no entry is
 * longer than the whole store's limit, which no tool write can produce (a shell append or an
 * editor pasted text into the last entry). The Python original's drift check (#26045), plus
 * `§` lines the parser does not split on (Windows line ends), which would glue entries together.
 */
export function roundTripProblem(raw: string, limit: number): string | undefined {
  const entries = parseEntries(raw);
  if (serializeEntries(entries) !== raw.trim()) return "its text is not a clean list of entries separated by lines holding only §";
  const glued = entries.find((entry) => containsDelimiter(entry));
  if (glued !== undefined) return "an entry holds a § line the memory tool does not read as a separator (Windows line ends or spaces around §)";
  const longest = entries.reduce((max, entry) => Math.max(max, entry.length), 0);
  if (longest > limit) return `one entry is ${longest} characters long, more than the whole store's limit (${limit}); text was probably appended to it outside the memory tool`;
  return undefined;
}
