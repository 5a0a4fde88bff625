/**
 * The fixed bash scripts every file operation runs inside the task's
 * environment, and the one way they are run (`runFileScript`).
 *
 * Why scripts rather than node's `fs`: the file tools must act where the
 * task's commands act — the local machine, a container, an ssh host, any
 * future sandbox — and the only thing every backend offers is
 * `Environment.exec(command)`. So each operation is a small bash script with a
 * fixed text; the model's arguments (paths, patterns, file content) only ever
 * reach it as single-quoted positional parameters (`set -- 'a' 'b'`) or as
 * base64, never spliced into the script. The script runs in a subshell
 * `( ... )`, so nothing it does (`cd`, variables, `exit`) touches the task's
 * shell state, which the environment saves after every command.
 *
 * Output protocol (the environment merges stdout and stderr, and may print a
 * notice of its own first, e.g. when the task's directory is gone):
 *
 *     \n<nonce>\n             start marker: everything before it is ignored
 *     key=value\n ...         fields (values never contain a newline)
 *     ::data\n<payload>       optional payload, to the end (or to the trailer)
 *     \n<nonce>-end <n>\n...  optional trailer (search: the engine's exit status and stderr)
 *
 * `<nonce>` is random per call, so a file's content cannot fake a marker.
 * Handled failures are reported as `error=<code>` (plus `detail=`), always with
 * exit status 0; the caller turns codes into messages for the model.
 *
 * The scripts use only bash builtins and tools that GNU coreutils, BusyBox and
 * the BSDs all have (`head -c`, `tail -n +N`, `wc`, `od`, `base64`, `mv`,
 * `chmod`, `mkdir`; search adds `find`, `grep -E`, `sort -z`, `xargs -0`,
 * `cut`), with `LC_ALL=C` so sizes and cuts are in bytes. Where GNU and BSD
 * spell a thing differently (`stat -c` / `stat -f`, `md5sum` / `md5`) both are
 * tried; symlinks are resolved with `cd -P`/`pwd -P` and plain `readlink`.
 *
 * This module has the shared prelude, the read and stat scripts and the
 * runner; the write script lives in write-script.ts, the search script with
 * the search (search.ts).
 */

import { randomBytes } from "node:crypto";

import { shellQuote } from "../environments/shell-state.js";
import type { Environment } from "../environments/types.js";
import { FileToolError } from "./errors.js";

/**
 * Helpers every script starts with.
 *
 * - `__resolve RAW` sets `REPLY` to the absolute path: `~` and `~/...` against
 *   `$HOME`, relative paths against `$PWD` (the task's working directory:
 *   the environment entered it before running the script).
 * - `__describe PATH` emits `path`, `kind` (file, directory, missing,
 *   broken-symlink, fifo, socket, device, special) and what each kind needs:
 *   size, readable, writable, mode and `real` (symlinks resolved) for a file;
 *   the nearest existing ancestor (or the non-directory `blocker` in the way)
 *   for a missing path. It sets `KIND`.
 */
const PRELUDE = String.raw`export LC_ALL=C
__nl='
'
__fail() { printf 'error=%s\n' "$1"; if [ $# -gt 1 ]; then printf 'detail=%s\n' "${"${2//$__nl/ }"}"; fi; exit 0; }
__emit() { case $2 in *"$__nl"*) __fail newline-in-path "$1";; esac; printf '%s=%s\n' "$1" "$2"; }
__need() { local t; for t; do command -v "$t" >/dev/null 2>&1 || __fail missing-tool "$t"; done; }
__resolve() {
  local p=$1
  case $p in
    "~"|"~/"*) [ -n "${"${HOME-}"}" ] || __fail no-home; p=$HOME${"${p#\"~\"}"} ;;
    "~"*) __fail tilde-user ;;
  esac
  case $p in /*) ;; *) p=${"${PWD%/}"}/$p ;; esac
  REPLY=$p
}
__size() { local s; s=$(stat -c %s "$1" 2>/dev/null) || s=$(stat -f %z "$1" 2>/dev/null) || s=$(wc -c < "$1") || return 1; REPLY=$((s)); }
__stat() {
  local s
  # -L: a file reached through a symlink is described, not the link (size 20, mode 777).
  s=$(stat -L -c '%s %a %u:%g' "$1" 2>/dev/null) || s=$(stat -L -f '%z %Lp %u:%g' "$1" 2>/dev/null) || return 1
  SIZE=${"${s%% *}"}; s=${"${s#* }"}; MODE=${"${s%% *}"}; OWNER=${"${s#* }"}
}
# Physical paths, as the kernel resolves them: a directory by cd -P and pwd -P (builtins), a
# file by resolving its directory so and following a symlink in its last component with plain
# readlink (GNU, BusyBox and the BSDs all have it; -f they do not all have), 40 links at most.
__realdir() { REPLY=$(cd -P -- "$1" 2>/dev/null && pwd -P) && [ -n "$REPLY" ]; }
__real() {
  local p=$1 d t i=0
  while :; do
    d=${"${p%/*}"}; [ -n "$d" ] || d=/
    __realdir "$d" || return 1
    d=${"${REPLY%/}"}; p=$d/${"${p##*/}"}
    [ -L "$p" ] || break
    i=$((i + 1)); [ "$i" -le 40 ] || return 1
    __need readlink
    t=$(readlink -- "$p") && [ -n "$t" ] || return 1
    case $t in /*) p=$t ;; *) p=$d/$t ;; esac
  done
  REPLY=$p
}
__md5() {
  if command -v md5sum >/dev/null 2>&1; then REPLY=$(md5sum < "$1") || return 1
  elif command -v md5 >/dev/null 2>&1; then REPLY=$(md5 -q < "$1") || return 1
  else return 2; fi
  REPLY=${"${REPLY:0:32}"}
}
# A NUL byte in the first 8 KiB (builtins only: read stops at the NUL before 8192 bytes).
__binary() { local x; IFS= read -r -d '' -n 8192 x < "$1" && [ "${"${#x}"}" -lt 8192 ]; }
# $1 path, $2 "real" to also report the path with symlinks resolved (REAL: the physical path
# of a file; a path whose resolution fails is then an error, since a write must know where it goes).
__describe() {
  local p=$1 d
  KIND= ANCESTOR= SIZE= MODE= OWNER= REAL=$1
  __emit path "$p"
  if [ -d "$p" ]; then KIND=directory; __emit kind directory; return; fi
  if [ ! -e "$p" ]; then
    if [ -L "$p" ]; then KIND=broken-symlink; __emit kind broken-symlink; __emit target "$(readlink "$p")"; return; fi
    KIND=missing; __emit kind missing
    d=${"${p%/*}"}; [ -n "$d" ] || d=/
    while [ ! -d "$d" ]; do
      if [ -e "$d" ] || [ -L "$d" ]; then __emit blocker "$d"; return; fi
      d=${"${d%/*}"}; [ -n "$d" ] || d=/
    done
    ANCESTOR=$d; __emit ancestor "$d"
    if [ "${"${2-}"}" = real ]; then
      __realdir "$d" || __fail resolve "$d"
      [ "$REPLY" = "$d" ] || __emit ancestor_real "$REPLY"
    fi
    return
  fi
  if [ ! -f "$p" ]; then
    if [ -p "$p" ]; then KIND=fifo; elif [ -S "$p" ]; then KIND=socket; elif [ -c "$p" ] || [ -b "$p" ]; then KIND=device; else KIND=special; fi
    __emit kind "$KIND"; return
  fi
  KIND=file; __emit kind file
  if __stat "$p"; then __emit size "$SIZE"; __emit mode "$MODE"; fi
  if [ -r "$p" ]; then __emit readable 1; elif [ ! -e "$p" ]; then __fail vanished "$p"; fi
  if [ -w "$p" ]; then __emit writable 1; elif [ ! -e "$p" ]; then __fail vanished "$p"; fi
  if [ "${"${2-}"}" = real ]; then
    __real "$p" || __fail resolve "$p"
    REAL=$REPLY; [ "$REAL" = "$p" ] || __emit real "$REAL"
  fi
}
__list() {
  local n=0 e
  shopt -s dotglob nullglob
  for e in "$1"/*; do
    printf '%s\0' "${"${e##*/}"}"; n=$((n + 1))
    [ "$n" -ge "$2" ] && break
  done
}
`;

/**
 * `$2` raw path, `$3` mode (`window` or `whole`), `$4` first line, `$5` line
 * count, `$6` byte cap. A file's payload is base64: the window's bytes (at most
 * cap + 1, so the caller sees a cut), or in `whole` mode the entire file (refused
 * with `too_large` above the cap). A directory's payload is up to 200 entry names,
 * a missing path's is up to 2000 names of its nearest existing ancestor, both
 * NUL-separated, for suggestions.
 */
export const READ_SCRIPT = String.raw`__need head tail wc od base64
__resolve "$2"; p=$REPLY
if [ "$3" = whole ]; then __describe "$p" real; else __describe "$p"; fi
case $KIND in
  directory) printf '::data\n'; __list "$p" 200; exit 0 ;;
  missing) if [ -n "$ANCESTOR" ]; then printf '::data\n'; __list "$ANCESTOR" 2000; fi; exit 0 ;;
  file) ;;
  *) exit 0 ;;
esac
[ -r "$p" ] || { [ -e "$p" ] || __fail vanished "$p"; exit 0; }
[ -n "$SIZE" ] || { __size "$p"; SIZE=$REPLY; }
m=$(od -An -tx1 -v -N 64 "$p"); m=${"${m//[[:space:]]/}"}
__emit magic "$m"
if __binary "$p"; then __emit nul 1; exit 0; fi
last=
if [ "$SIZE" -gt 0 ]; then last=$(od -An -tx1 -j "$((SIZE - 1))" -N 1 "$p"); last=${"${last//[[:space:]]/}"}; fi
if [ -n "$last" ] && [ "$last" != 0a ]; then __emit final_newline 0; fi
if [ "$3" = whole ]; then
  if [ "$SIZE" -gt "$6" ]; then __emit too_large 1; exit 0; fi
  # The file the check resolved, opened before the payload starts (a file gone meanwhile is an
  # error, not a payload of error text).
  { exec 6< "$REAL"; } 2>/dev/null || __fail vanished "$p"
  printf '::data\n'; head -c "$(($6 + 1))" <&6 | base64
  exit 0
fi
lines=$(wc -l < "$p"); lines=$((lines))
if [ -n "$last" ] && [ "$last" != 0a ]; then lines=$((lines + 1)); fi
__emit lines "$lines"
{ exec 6< "$p"; } 2>/dev/null || __fail vanished "$p"
printf '::data\n'
tail -n +"$4" <&6 | head -n "$5" | head -c "$(($6 + 1))" | base64
`;

/** `$2` raw path: only `__describe` (write_file looks before it writes). */
export const STAT_SCRIPT = String.raw`__resolve "$2"
__describe "$REPLY" real
`;

/** What a script reported. */
export interface ScriptOutput {
  /** The `key=value` fields (the first of each key wins). */
  fields: Map<string, string>;
  /** The payload after `::data`, up to the trailer; undefined when there was none. */
  data?: string;
  /** The trailer's number (search: the engine's exit status), when there was a trailer. */
  trailerStatus?: number;
  /** What followed the trailer line (search: the engine's stderr). */
  trailerText?: string;
}

export interface RunScriptOptions {
  timeoutMs: number;
  /** Output the call may produce (payload included); more is a failure, never silently cut. */
  maxOutputChars: number;
  signal?: AbortSignal;
  /** What the model asked for, for error messages ("reading /etc/hosts"). */
  what: string;
}

/** A script that did not get as far as its start marker, or was killed. */
function environmentError(message: string): FileToolError {
  return new FileToolError("environment", message);
}

const excerpt = (text: string): string => {
  const trimmed = text.trim();
  return trimmed.length > 300 ? `${trimmed.slice(0, 300)}…` : trimmed;
};

/** The command text that runs `script` with `args` as its positional parameters `$2...` (`$1` is the nonce). */
export function scriptCommand(script: string, nonce: string, args: readonly string[]): string {
  return `( set -- ${[nonce, ...args].map(shellQuote).join(" ")}\n${PRELUDE}printf '\\n%s\\n' "$1"\n${script})`;
}

/**
 * Runs `script` in `env` and parses its output. Throws `FileToolError` when
 * the script could not run or report (timeout, cancellation, no bash, output
 * over the limit); `error=` fields are returned for the caller to word.
 */
export async function runFileScript(env: Environment, script: string, args: readonly string[], options: RunScriptOptions): Promise<ScriptOutput> {
  const nonce = `mibyan-${randomBytes(9).toString("hex")}`;
  const run = await env.exec(scriptCommand(script, nonce, args), {
    timeoutMs: options.timeoutMs,
    maxOutputChars: options.maxOutputChars,
    signal: options.signal,
    // Keep the start of the output whole: that is where the protocol lives.
    headRatio: 1,
    // The script runs in a subshell and changes nothing the task keeps.
    saveState: false,
  });
  if (run.aborted) throw environmentError(`Cancelled while ${options.what}.`);
  if (run.timedOut) throw environmentError(`Timed out after ${Math.round(options.timeoutMs / 1000)} seconds while ${options.what}.`);
  const start = run.output.indexOf(`\n${nonce}\n`);
  if (start < 0) {
    throw environmentError(
      `The environment could not run the file script while ${options.what} (exit code ${run.exitCode})` +
        (run.output.trim() ? `: ${excerpt(run.output)}` : "."),
    );
  }
  if (run.truncated) throw environmentError(`The output was too large while ${options.what}.`);
  let body = run.output.slice(start + nonce.length + 2);

  const parsed: ScriptOutput = { fields: new Map() };
  const trailer = body.lastIndexOf(`\n${nonce}-end `);
  if (trailer >= 0) {
    const rest = body.slice(trailer + nonce.length + 6);
    const newline = rest.indexOf("\n");
    parsed.trailerStatus = Number(newline >= 0 ? rest.slice(0, newline) : rest);
    parsed.trailerText = newline >= 0 ? rest.slice(newline + 1) : "";
    body = body.slice(0, trailer);
  }
  const dataAt = body.startsWith("::data\n") ? 0 : body.indexOf("\n::data\n");
  const head = dataAt < 0 ? body : body.slice(0, dataAt);
  if (dataAt >= 0) parsed.data = body.slice(dataAt === 0 ? 7 : dataAt + 8);
  for (const line of head.split("\n")) {
    const eq = line.indexOf("=");
    if (eq <= 0) continue;
    const key = line.slice(0, eq);
    if (!/^[a-z_]+$/.test(key) || parsed.fields.has(key)) continue;
    parsed.fields.set(key, line.slice(eq + 1));
  }
  // A script that died unexpectedly (no `error=`, non-zero status) says what the shell printed.
  if (run.exitCode !== 0 && !parsed.fields.has("error")) {
    throw environmentError(`The file script failed while ${options.what} (exit code ${run.exitCode}): ${excerpt(head)}`);
  }
  return parsed;
}

/** Turns the `error=` codes every script shares into a message; undefined for codes the caller words itself. */
export function commonScriptError(output: ScriptOutput, rawPath: string): FileToolError | undefined {
  const code = output.fields.get("error");
  const detail = output.fields.get("detail");
  switch (code) {
    case undefined:
      return undefined;
    case "missing-tool":
      return new FileToolError(
        "environment",
        `The environment has no \`${detail}\` command, which the file tools need there. Use the terminal tool instead, or install it.`,
      );
    case "no-home":
      return new FileToolError("invalid_args", `Cannot expand "~" in ${JSON.stringify(rawPath)}: HOME is not set in the environment. Use an absolute path.`);
    case "tilde-user":
      return new FileToolError("invalid_args", `Only "~" and "~/..." are expanded, not "~user": use an absolute path instead of ${JSON.stringify(rawPath)}.`);
    case "vanished":
      return new FileToolError(
        "conflict",
        `${detail ?? rawPath} disappeared while it was being looked at (something is changing the path). Nothing was written; look at it again.`,
      );
    case "resolve":
      return new FileToolError(
        "not_found",
        `Cannot tell where ${JSON.stringify(rawPath)} leads: resolving ${detail ?? "it"} failed (a loop of symbolic links, or a directory that cannot be entered).`,
      );
    case "newline-in-path":
      return new FileToolError("invalid_args", `The path ${JSON.stringify(rawPath)} leads to a name containing a newline, which the file tools do not handle. Use the terminal tool.`);
    default:
      return undefined;
  }
}

/** Fields of a file that `__describe` reported. */
export interface Described {
  path: string;
  kind: "file" | "directory" | "missing" | "broken-symlink" | "fifo" | "socket" | "device" | "special";
  size?: number;
  readable: boolean;
  writable: boolean;
  mode?: string;
  /** The path with symlinks resolved, when it differs. */
  real?: string;
  /** Missing path: the nearest existing directory above it, and its resolved form when different. */
  ancestor?: string;
  ancestorReal?: string;
  /** Missing path: an existing non-directory that stands where a directory would have to be. */
  blocker?: string;
  /** Broken symlink: where it points. */
  target?: string;
}

export function described(output: ScriptOutput): Described {
  const f = output.fields;
  const size = f.get("size");
  return {
    path: f.get("path") ?? "",
    kind: (f.get("kind") ?? "special") as Described["kind"],
    size: size !== undefined ? Number(size) : undefined,
    readable: f.get("readable") === "1",
    writable: f.get("writable") === "1",
    mode: f.get("mode"),
    real: f.get("real"),
    ancestor: f.get("ancestor"),
    ancestorReal: f.get("ancestor_real"),
    blocker: f.get("blocker"),
    target: f.get("target"),
  };
}
