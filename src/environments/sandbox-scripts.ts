/**
 * The bash scripts the docker backend (and every sandbox backend, see
 * `sandbox-environment.ts`) runs inside its container, and the
 * stream filter that takes the working directory back out of a command's output.
 *
 * One command is one `docker exec <id> bash -c RUN bash COMMAND`:
 *
 * - RUN (the outer shell) merges stderr into stdout (the engine would carry
 *   them as two streams and lose their relative order), makes sure it leads a process group (`runc exec`
 *   already starts it as a session leader; elsewhere it re-execs itself under
 *   `setsid`), writes its pid to `<stateDir>/run-<id>.pid`, and runs the task's
 *   state script (`wrapCommand`) in a child bash with the user's command as `$1`.
 *   When that finishes it prints a trailer, `TAG exitcode:cwd TAG`, where TAG
 *   holds a random nonce: the exit code and the task's working directory come
 *   back in the same round trip, and the filter removes the trailer from the
 *   output before any of it is counted. (The trailer also ends a call whose
 *   background job keeps the output stream open, on engines whose `docker exec`
 *   waits for that stream.)
 * - KILL, run by a second `docker exec` when a timeout or an abort stops the
 *   command: SIGTERM to the run's process group, its session and every
 *   descendant of its pid, SIGKILL to whatever is left after the grace period,
 *   and it returns only once nothing of the run is alive. A `.cancel` file
 *   stops a run whose shell had not yet written its pid file.
 */

import { shellQuote, type ShellStatePaths } from "./shell-state.js";

/** Files of one run inside the container. */
export function runFiles(stateDir: string, runId: string): { pidFile: string; cancelFile: string } {
  const base = `${stateDir}/run-${runId}`;
  return { pidFile: `${base}.pid`, cancelFile: `${base}.cancel` };
}

/** The NUL-delimited trailer tag for `nonce` (NUL never occurs in a path). */
export function trailerTag(nonce: string): string {
  return `\u0000mibyan-cwd-${nonce}\u0000`;
}

/** Exit code of a run that was cancelled before it started. */
const CANCELLED_EXIT = 130;

/**
 * The outer script of one command. `inner` is the `wrapCommand` script; the
 * user's command arrives as `$1` and is handed on unchanged.
 */
export function buildRunScript(options: {
  stateDir: string;
  runId: string;
  paths: ShellStatePaths;
  inner: string;
  nonce: string;
}): string {
  const { pidFile, cancelFile } = runFiles(options.stateDir, options.runId);
  const tag = `\\0mibyan-cwd-${options.nonce}\\0`;
  return [
    // One stream: the engine carries stdout and stderr separately, which loses their
    // relative order; merged here, they keep it.
    `exec 2>&1`,
    // Lead a process group, so that a kill reaches the whole tree.
    `read -r __mibyan_stat < /proc/$$/stat 2>/dev/null`,
    `__mibyan_f=(\${__mibyan_stat##*) })`,
    `if [ "\${__mibyan_f[2]:-}" != "$$" ] && [ -z "\${__MIBYAN_SETSID:-}" ] && command -v setsid >/dev/null 2>&1; then`,
    `  __MIBYAN_SETSID=1 exec setsid bash -c "$BASH_EXECUTION_STRING" bash "$1"`,
    `fi`,
    `unset __MIBYAN_SETSID __mibyan_stat __mibyan_f`,
    `printf '%s' "$$" > ${shellQuote(pidFile)}`,
    `if [ -e ${shellQuote(cancelFile)} ]; then rm -f ${shellQuote(pidFile)}; exit ${CANCELLED_EXIT}; fi`,
    `bash -c ${shellQuote(options.inner)} bash "$1"`,
    `__mibyan_ec=$?`,
    `rm -f ${shellQuote(pidFile)}`,
    `__mibyan_cwd=`,
    `[ -r ${shellQuote(options.paths.cwdFile)} ] && IFS= read -r -d '' __mibyan_cwd < ${shellQuote(options.paths.cwdFile)}`,
    `printf '${tag}%s:%s${tag}' "$__mibyan_ec" "$__mibyan_cwd"`,
    `exit $__mibyan_ec`,
  ].join("\n");
}

/**
 * Kills one run's process tree inside the container: SIGTERM once to each
 * process (a second one could cut short the state-saving EXIT trap of the
 * task's shell), then SIGKILL after `graceMs` to whatever is left; returns once
 * nothing of it is left (or 1 s after SIGKILL). Prints the task's working
 * directory afterwards (what the killed command's EXIT trap saved).
 */
export function buildKillScript(options: { stateDir: string; runId: string; graceMs: number; cwdFile: string }): string {
  const { pidFile, cancelFile } = runFiles(options.stateDir, options.runId);
  const pollMs = 50;
  const graceTicks = Math.max(1, Math.ceil(options.graceMs / pollMs));
  const lastTick = graceTicks + Math.ceil(1_000 / pollMs);
  return [
    `: > ${shellQuote(cancelFile)} 2>/dev/null`,
    `P=`,
    `[ -r ${shellQuote(pidFile)} ] && read -r P < ${shellQuote(pidFile)}`,
    `case "$P" in ''|*[!0-9]*) P= ;; esac`,
    // Live (non-zombie) processes of the run: in P's process group (grp), or in its
    // session or descended from P but in another group (out).
    `sel() {`,
    `  local s l p q n; local -a f rest=(); local -A par=(); grp=(); out=()`,
    `  for s in /proc/[0-9]*/stat; do`,
    `    read -r l < "$s" 2>/dev/null || continue`,
    `    p=\${s#/proc/}; p=\${p%/stat}`,
    `    [ "$p" = "$$" ] && continue`,
    `    f=(\${l##*) })`,
    `    case "\${f[0]}" in Z|X) continue ;; esac`,
    `    par[$p]=\${f[1]}`,
    `    if [ "\${f[2]}" = "$P" ]; then grp+=("$p"); elif [ "$p" = "$P" ] || [ "\${f[3]}" = "$P" ]; then out+=("$p"); else rest+=("$p"); fi`,
    `  done`,
    `  for p in "\${rest[@]}"; do`,
    `    q=\${par[$p]:-}; n=0`,
    `    while [ -n "$q" ] && [ "$q" != 0 ] && [ "$q" != 1 ] && [ $n -lt 64 ]; do`,
    `      if [ "$q" = "$P" ]; then out+=("$p"); break; fi`,
    `      q=\${par[$q]:-}; n=$((n + 1))`,
    `    done`,
    `  done`,
    `}`,
    `nap() { sleep 0.${String(pollMs).padStart(3, "0")} 2>/dev/null || sleep 1; }`,
    `if [ -n "$P" ]; then`,
    `  sel`,
    `  kill -s TERM -- "-$P" 2>/dev/null`,
    `  [ \${#out[@]} -gt 0 ] && kill -s TERM -- "\${out[@]}" 2>/dev/null`,
    `  i=0`,
    `  while :; do`,
    `    nap; sel`,
    `    [ $((\${#grp[@]} + \${#out[@]})) -eq 0 ] && break`,
    `    i=$((i + 1))`,
    `    if [ $i -ge ${graceTicks} ]; then kill -s KILL -- "-$P" "\${grp[@]}" "\${out[@]}" 2>/dev/null; fi`,
    `    [ $i -ge ${lastTick} ] && break`,
    `  done`,
    `  rm -f ${shellQuote(pidFile)}`,
    `fi`,
    `__c=`,
    `[ -r ${shellQuote(options.cwdFile)} ] && IFS= read -r -d '' __c < ${shellQuote(options.cwdFile)}`,
    `printf '%s' "$__c"`,
    `exit 0`,
  ].join("\n");
}

/**
 * Prepares a new container for a task: a private state directory (`mktemp -d`)
 * and the starting directory (`cwd`, created if missing, or the user's home, or
 * `/`). Prints both, NUL-separated.
 */
export function buildInitScript(cwd: string | undefined): string {
  const goto =
    cwd === undefined
      ? `cd -- "\${HOME:-/}" 2>/dev/null || cd /`
      : `mkdir -p -- ${shellQuote(cwd)} 2>/dev/null; cd -- ${shellQuote(cwd)} || exit 3`;
  return [
    `d=$(mktemp -d "\${TMPDIR:-/tmp}/mibyan-state.XXXXXX") || exit 2`,
    `chmod 700 "$d" 2>/dev/null`,
    goto,
    `printf '%s\\0%s\\0' "$d" "$PWD"`,
  ].join("\n");
}

/** The run script's trailer value: `exitcode:cwd`. */
export function parseTrailer(value: string | undefined): { exitCode: number; cwd: string } | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d+):([\s\S]*)$/.exec(value);
  return match ? { exitCode: Number(match[1]), cwd: match[2]! } : undefined;
}

/**
 * Passes a byte stream through, except for one trailer `TAG value TAG`, whose
 * value it keeps. Bytes that might start the tag are held back until it is
 * clear whether they do, so the trailer never reaches `sink`, even when it is
 * split across chunks. Once a trailer has been seen everything else passes.
 */
export class TrailerFilter {
  private readonly tag: Buffer;
  private pending: Buffer = Buffer.alloc(0);
  private state: "pass" | "capture" | "done" = "pass";
  private captured: Buffer[] = [];
  private capturedLength = 0;
  /** The trailer's value, once it has been seen completely. */
  value: string | undefined;
  /** Called once, when the trailer has been seen completely. */
  onValue: ((value: string) => void) | undefined;

  /** Longest value kept (a path); a longer one is cut. */
  private static readonly MAX_VALUE_BYTES = 64 * 1024;

  constructor(
    tag: string,
    private readonly sink: (chunk: Buffer) => void,
  ) {
    this.tag = Buffer.from(tag, "utf8");
  }

  push(chunk: Buffer): void {
    if (this.state === "done") {
      this.sink(chunk);
      return;
    }
    let data = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = Buffer.alloc(0);
    if (this.state === "pass") {
      const at = data.indexOf(this.tag);
      if (at < 0) {
        const keep = this.partialTagSuffix(data);
        if (data.length - keep > 0) this.sink(data.subarray(0, data.length - keep));
        if (keep > 0) this.pending = Buffer.from(data.subarray(data.length - keep));
        return;
      }
      if (at > 0) this.sink(data.subarray(0, at));
      data = data.subarray(at + this.tag.length);
      this.state = "capture";
    }
    // capture
    const end = data.indexOf(this.tag);
    if (end < 0) {
      // Keep all but a possible partial closing tag as value; hold that back.
      const keep = this.partialTagSuffix(data);
      this.keepValue(data.subarray(0, data.length - keep));
      if (keep > 0) this.pending = Buffer.from(data.subarray(data.length - keep));
      return;
    }
    this.keepValue(data.subarray(0, end));
    this.value = Buffer.concat(this.captured).toString("utf8");
    this.captured = [];
    this.state = "done";
    this.onValue?.(this.value);
    const rest = data.subarray(end + this.tag.length);
    if (rest.length > 0) this.sink(rest);
  }

  /** End of stream: bytes held back that turned out not to be a tag go out. */
  end(): void {
    if (this.state === "pass" && this.pending.length > 0) this.sink(this.pending);
    this.pending = Buffer.alloc(0);
  }

  private keepValue(bytes: Buffer): void {
    const room = TrailerFilter.MAX_VALUE_BYTES - this.capturedLength;
    if (room <= 0 || bytes.length === 0) return;
    const part = Buffer.from(bytes.subarray(0, room));
    this.captured.push(part);
    this.capturedLength += part.length;
  }

  /** Length of the longest suffix of `data` that is a proper prefix of the tag. */
  private partialTagSuffix(data: Buffer): number {
    const max = Math.min(this.tag.length - 1, data.length);
    // The tag starts with NUL; only a suffix starting with NUL can be a prefix.
    for (let len = max; len > 0; len--) {
      if (data[data.length - len] !== this.tag[0]) continue;
      if (data.subarray(data.length - len).equals(this.tag.subarray(0, len))) return len;
    }
    return 0;
  }
}
