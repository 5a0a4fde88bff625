/**
 * Searching file contents and file names inside the environment, with
 * ripgrep when the environment has it and `find` + `grep -E` when it does
 * not (a BusyBox container, a bare ssh host). Both produce one result shape.
 *
 * Content search:
 * - ripgrep: `rg --null --line-number --sort path --max-columns 500
 *   --max-columns-preview --hidden -g '!.git' -g '!node_modules' -m MAX+1`
 *   (plus `-i`, `-C N`, `-g GLOB`). It also skips what .gitignore/.ignore
 *   files exclude and binary files.
 * - fallback: `find ROOT` (pruning `.git`, `node_modules`, and names with a
 *   newline, which the line protocol cannot carry), `sort -z`, `xargs -0 grep
 *   -l` for the files that match, then per matching file (skipping binary
 *   ones: a NUL in the first 8 KiB) `grep -n -m REMAINING [-C N]`, until MAX+1
 *   matches are found. It does not read .gitignore.
 *
 * Name search (`target: "files"`): `rg --files --null -g GLOB...` or
 * `find ... -name GLOB -print0`, sorted by path.
 *
 * Output is bounded in the environment (`head -n`/`head -c`) and again here;
 * one match more than asked for is fetched, so `truncated` is exact.
 */

import type { Environment } from "../environments/types.js";
import { FileToolError } from "./errors.js";
import { DEFAULT_COMMAND_TIMEOUT_MS, MAX_MATCH_LINE_CHARS } from "./limits.js";
import { displayPath, normalizeAbsolute } from "./paths.js";
import { redactShownRuns, type ShownRun } from "./redact-lines.js";
import { commonScriptError, described, runFileScript } from "./scripts.js";
import { checkRegex, nameGlobs, regexForGrep } from "./search-pattern.js";
import { listingNames, notAFileError } from "./targets.js";

export type SearchEngineChoice = "auto" | "rg" | "fallback";

const LONG_LINE_MARKER = " [... omitted end of long line]";
const BYTES_CAP = 2 * 1024 * 1024;

/**
 * `$2` root, `$3` target (content|files), `$4` engine (auto|rg|fallback), `$5`
 * the pattern for ripgrep, `$6` the same for `grep -E`, `$7` ignore case (0|1),
 * `$8` context lines, `$9` max results, then the name globs. Reports `engine`, `cwd`, the results as `::data`, and a
 * trailer with the engine's exit status and its stderr.
 */
export const SEARCH_SCRIPT = String.raw`nonce=$1
__resolve "$2"; root=$REPLY
__describe "$root"
case $KIND in
  directory|file) ;;
  missing) if [ -n "$ANCESTOR" ]; then printf '::data\n'; __list "$ANCESTOR" 2000; fi; exit 0 ;;
  *) exit 0 ;;
esac
target=$3 engine=$4 pat=$5 gpat=$6 icase=$7 ctx=$8 max=$9
shift 9
__emit cwd "$PWD"
if [ "$engine" = auto ]; then
  if command -v rg >/dev/null 2>&1; then engine=rg; else engine=fallback; fi
fi
if [ "$engine" = rg ]; then __need rg head; else __need find sort xargs grep head cut; fi
__emit engine "$engine"
[ "$engine" = rg ] || pat=$gpat
errf=$(mktemp 2>/dev/null) || errf=
st=0
if [ "$engine" = rg ]; then
  a=(--no-config --hidden --sort path -g '!.git' -g '!node_modules')
  if [ "$target" = files ]; then
    a+=(--files --null)
    [ "$icase" = 1 ] && a+=(--glob-case-insensitive)
    for g; do a+=(-g "$g"); done
    printf '::data\n'
    rg "${"${a[@]}"}" -- "$root" 2>"${"${errf:-/dev/null}"}" | head -c $(( (max + 1) * 4200 ))
    st=${"${PIPESTATUS[0]}"}
  else
    a+=(--color never --no-heading --with-filename --line-number --null --max-columns 500 --max-columns-preview -m "$((max + 1))")
    [ "$icase" = 1 ] && a+=(-i)
    [ "$ctx" -gt 0 ] && a+=(-C "$ctx")
    for g; do a+=(-g "$g"); done
    printf '::data\n'
    rg "${"${a[@]}"}" -e "$pat" -- "$root" 2>"${"${errf:-/dev/null}"}" | head -n $(( (max + 1) * (2 * ctx + 2) + 10 )) | head -c ${BYTES_CAP}
    st=${"${PIPESTATUS[0]}"}
  fi
else
  nameop=-name; [ "$icase" = 1 ] && nameop=-iname
  nf=()
  for g; do [ ${"${#nf[@]}"} -eq 0 ] || nf+=(-o); nf+=("$nameop" "$g"); done
  [ ${"${#nf[@]}"} -eq 0 ] || nf=( \( "${"${nf[@]}"}" \) )
  __files() {
    if [ "$KIND" = file ]; then printf '%s\0' "$root"; return; fi
    find "$root" -mindepth 1 \( -name .git -o -name node_modules -o -name "*$__nl*" \) -prune -o -type f "${"${nf[@]}"}" -print0 2>/dev/null | sort -z
  }
  if [ "$target" = files ]; then
    printf '::data\n'
    __files | head -c $(( (max + 1) * 4200 ))
  else
    gi=(); [ "$icase" = 1 ] && gi=(-i)
    out=$(grep -E "${"${gi[@]}"}" -e "$pat" < /dev/null 2>&1)
    [ $? -ne 2 ] || __fail bad-regex "$out"
    gc=(); [ "$ctx" -gt 0 ] && gc=(-A "$ctx" -B "$ctx")
    printf '::data\n'
    remaining=$((max + 1))
    __files | xargs -0 -r grep -l -s "${"${gi[@]}"}" -E -e "$pat" -- 2>/dev/null | head -n "$((max + 21))" | while IFS= read -r f; do
      [ "$remaining" -gt 0 ] || break
      if __binary "$f"; then continue; fi
      out=$(grep -n -s "${"${gi[@]}"}" "${"${gc[@]}"}" -m "$remaining" -E -e "$pat" -- "$f" | cut -c1-2000)
      [ -n "$out" ] || continue
      n=$(printf '%s\n' "$out" | grep -c '^[0-9][0-9]*:')
      remaining=$((remaining - n))
      printf '\036%s\n%s\n' "$f" "$out"
    done | head -c ${BYTES_CAP}
  fi
fi
printf '\n%s-end %s\n' "$nonce" "$st"
if [ -n "$errf" ]; then head -c 2000 "$errf"; rm -f "$errf"; fi
`;

export interface SearchOptions {
  /** Content regex, or for `files` the name glob. */
  pattern: string;
  target: "content" | "files";
  /** Directory or file to search (raw, resolved in the environment). Default ".". */
  path: string;
  /** Content search: file-name glob filter. */
  glob?: string;
  ignoreCase: boolean;
  context: number;
  maxResults: number;
  engine?: SearchEngineChoice;
  /** Replace secrets in the lines shown with `[REDACTED]` (src/redaction/tool-output.ts). */
  redact?: boolean;
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface SearchLine {
  line: number;
  text: string;
  /** A context line (present only when context lines were asked for). */
  context?: true;
}

export interface ContentSearchResult {
  engine: "rg" | "grep";
  path: string;
  files: Array<{ path: string; lines: SearchLine[] }>;
  match_count: number;
  truncated: boolean;
  /** Lines shown in which secrets were replaced by `[REDACTED]`. */
  redacted_lines?: number;
  note?: string;
  warnings?: string;
}

export interface FileSearchResult {
  engine: "rg" | "find";
  path: string;
  files: string[];
  count: number;
  truncated: boolean;
  note?: string;
  warnings?: string;
}

function cleanText(text: string): string {
  let t = text.endsWith("\r") ? text.slice(0, -1) : text;
  if (t.length > MAX_MATCH_LINE_CHARS && !t.endsWith("[... omitted end of long line]")) t = t.slice(0, MAX_MATCH_LINE_CHARS) + LONG_LINE_MARKER;
  return t;
}

interface RawLine {
  path: string;
  line: number;
  match: boolean;
  text: string;
}

const LINE_PREFIX = /^(\d+)([:-])/;

function parseRgContent(data: string): RawLine[] {
  const out: RawLine[] = [];
  for (const line of data.split("\n")) {
    if (line === "" || line === "--") continue;
    const nul = line.indexOf("\0");
    if (nul < 0) continue;
    const rest = line.slice(nul + 1);
    const m = LINE_PREFIX.exec(rest);
    if (!m) continue;
    out.push({ path: line.slice(0, nul), line: Number(m[1]), match: m[2] === ":", text: rest.slice(m[0].length) });
  }
  return out;
}

function parseGrepContent(data: string): RawLine[] {
  const out: RawLine[] = [];
  let path: string | undefined;
  for (const line of data.split("\n")) {
    if (line.startsWith("\x1e")) {
      path = line.slice(1);
      continue;
    }
    if (path === undefined || line === "" || line === "--") continue;
    const m = LINE_PREFIX.exec(line);
    if (!m) continue;
    out.push({ path, line: Number(m[1]), match: m[2] === ":", text: line.slice(m[0].length) });
  }
  return out;
}

/** Stderr lines worth passing on (not the engine's complaint about the pipe we closed). */
function warningsOf(text: string | undefined): string | undefined {
  const lines = (text ?? "").split("\n").map((l) => l.trim()).filter((l) => l !== "" && !/broken pipe/i.test(l));
  if (lines.length === 0) return undefined;
  const joined = lines.slice(0, 5).join("\n");
  return lines.length > 5 ? `${joined}\n… (${lines.length - 5} more)` : joined;
}

/** The lines with secrets redacted: each run of consecutive lines of a file as one text (redact-lines.ts). */
async function redactHits(env: Environment, lines: RawLine[], options: SearchOptions): Promise<{ lines: RawLine[]; redacted: number }> {
  const runs: Array<ShownRun & { from: number }> = [];
  lines.forEach((l, i) => {
    const run = runs[runs.length - 1];
    if (run && run.path === l.path && run.first + run.lines.length === l.line) run.lines.push(l.text);
    else runs.push({ path: l.path, first: l.line, lines: [l.text], from: i });
  });
  const shown = await redactShownRuns(env, runs, { signal: options.signal, timeoutMs: options.timeoutMs });
  const out = lines.slice();
  shown.runs.forEach((run, r) => run.lines.forEach((text, j) => (out[runs[r]!.from + j] = { ...out[runs[r]!.from + j]!, text })));
  return { lines: out, redacted: shown.redacted };
}

/** Runs a search; throws `FileToolError` for the model. */
export async function searchFiles(env: Environment, options: SearchOptions): Promise<ContentSearchResult | FileSearchResult> {
  let globs: string[] = [];
  let pattern = options.pattern;
  if (options.pattern === "") {
    throw new FileToolError("invalid_args", options.target === "files" ? 'pattern must not be empty; use "*" to list every file.' : "pattern must not be empty.");
  }
  if (options.target === "files") {
    if (options.glob !== undefined) {
      throw new FileToolError("invalid_args", 'glob is for content searches; with target "files", put the file-name glob in pattern (e.g. "*.test.ts").');
    }
    globs = nameGlobs(options.pattern, "pattern");
    pattern = "";
  } else {
    checkRegex(options.pattern);
    if (options.glob !== undefined) globs = nameGlobs(options.glob, "glob");
  }
  const output = await runFileScript(
    env,
    SEARCH_SCRIPT,
    [
      options.path,
      options.target,
      options.engine ?? "auto",
      pattern,
      options.target === "content" ? regexForGrep(pattern) : "",
      options.ignoreCase ? "1" : "0",
      String(options.context),
      String(options.maxResults),
      ...globs,
    ],
    {
      timeoutMs: options.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      maxOutputChars: BYTES_CAP * 2 + 1_000_000,
      signal: options.signal,
      what: `searching ${options.path}`,
    },
  );

  const common = commonScriptError(output, options.path);
  if (common) throw common;
  const code = output.fields.get("error");
  if (code === "bad-regex") {
    throw new FileToolError("invalid_args", `pattern is not a valid regular expression for grep -E: ${output.fields.get("detail") ?? ""}`.trim());
  }
  if (code !== undefined) throw new FileToolError("environment", `Searching failed in the environment (${code}: ${output.fields.get("detail") ?? ""}).`);
  const d = described(output);
  if (d.kind !== "directory" && d.kind !== "file") {
    throw notAFileError(d, listingNames(output.data)) ?? new FileToolError("not_found", `Cannot search ${d.path}.`);
  }
  // Paths come back in the form the model used: relative to the working directory for a relative path.
  const cwd = options.path.startsWith("/") || options.path.startsWith("~") ? undefined : output.fields.get("cwd");
  const root = displayPath(normalizeAbsolute(d.path), cwd);
  const engine = output.fields.get("engine");
  const status = output.trailerStatus ?? 0;
  const warnings = warningsOf(output.trailerText);
  const data = output.data ?? "";

  if (options.target === "files") {
    const entries = data.split("\0");
    // The last entry may be cut by the byte bound; it is unterminated either way.
    const complete = entries.slice(0, -1);
    if (engine === "rg" && status >= 2 && complete.length === 0) {
      throw new FileToolError("invalid_args", `ripgrep failed: ${warnings ?? `exit status ${status}`}`);
    }
    const files = complete.slice(0, options.maxResults).map((p) => displayPath(normalizeAbsolute(p), cwd));
    const result: FileSearchResult = {
      engine: engine === "rg" ? "rg" : "find",
      path: root,
      files,
      count: files.length,
      truncated: complete.length > options.maxResults,
    };
    if (result.truncated) result.note = `Only the first ${options.maxResults} files (by path) are listed; narrow the pattern or path, or raise max_results.`;
    else if (files.length === 0) result.note = "No file names match.";
    if (warnings) result.warnings = warnings;
    return result;
  }

  const lines = engine === "rg" ? parseRgContent(data) : parseGrepContent(data);
  if (engine === "rg" && status >= 2 && !lines.some((l) => l.match)) {
    throw new FileToolError("invalid_args", `ripgrep failed: ${warnings ?? `exit status ${status}`}`);
  }
  // Up to the match after the last one wanted; of the context lines before it,
  // keep those that follow the last shown match.
  const cut = lines.filter((l) => l.match).length > options.maxResults;
  let kept = lines;
  let truncated = false;
  if (cut) {
    truncated = true;
    let seen = 0;
    const end = lines.findIndex((l) => l.match && ++seen > options.maxResults);
    kept = lines.slice(0, end);
    const last = kept.filter((l) => l.match).pop()!;
    while (kept.length > 0) {
      const tail = kept[kept.length - 1]!;
      if (tail.match || (tail.path === last.path && tail.line <= last.line + options.context)) break;
      kept.pop();
    }
  }
  const redaction = options.redact ? await redactHits(env, kept, options) : undefined;
  if (redaction) kept = redaction.lines;
  const files: ContentSearchResult["files"] = [];
  const byPath = new Map<string, SearchLine[]>();
  let matches = 0;
  for (const raw of kept) {
    if (raw.match) matches++;
    let list = byPath.get(raw.path);
    if (!list) {
      list = [];
      byPath.set(raw.path, list);
      files.push({ path: displayPath(normalizeAbsolute(raw.path), cwd), lines: list });
    }
    const entry: SearchLine = { line: raw.line, text: cleanText(raw.text) };
    if (!raw.match) entry.context = true;
    list.push(entry);
  }
  if (data.length >= BYTES_CAP) truncated = true;
  const result: ContentSearchResult = { engine: engine === "rg" ? "rg" : "grep", path: root, files, match_count: matches, truncated };
  if (redaction && redaction.redacted > 0) result.redacted_lines = redaction.redacted;
  if (truncated) result.note = `Only the first ${matches} matches are shown; narrow the pattern, path or glob, or raise max_results.`;
  else if (matches === 0) result.note = "No matches.";
  if (warnings) result.warnings = warnings;
  return result;
}
