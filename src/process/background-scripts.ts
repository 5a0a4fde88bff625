/**
 * The bash scripts that follow and steer a background process inside its
 * environment, once `launch-script.ts` started it (that file describes the
 * directory's files). They work the same on every backend (the local machine,
 * a container, an ssh host, a cloud sandbox).
 *
 * What is to be signalled (pid, group, start time, the placeholder writer) is
 * always an argument from the registry's record, never read from the
 * directory: the command can write there. Before any signal the target is
 * checked against the kernel: the recorded start time, and membership of the
 * recorded group. Pid 1 and lower are never signalled. The directory a script
 * works in is one the registry checked (`control-dir.ts`); removal also
 * checks the owner token, the real path and that nothing on the way is a
 * symlink.
 */

import { shellQuote } from "../environments/shell-state.js";

/** First line of every status answer: `mibyan-bg <end offset> <exit code or -> <alive 0|1> <size> <pid state> <timed out 0|1> <exit file mtime (s) or -> <never ran 0|1>`. */
const STATUS_TAG = "mibyan-bg";

/** A process as the registry recorded it. */
export interface TrustedProcess {
  pid: number;
  startTime: string;
}

function checkedTarget(target: TrustedProcess): { pid: number; startTime: string } {
  if (!Number.isSafeInteger(target.pid) || target.pid <= 1 || !/^\d+$/.test(target.startTime)) {
    throw new TypeError(`refusing to act on pid ${target.pid} (start time ${JSON.stringify(target.startTime)})`);
  }
  return target;
}

/**
 * Shell lines setting `alive` to 1 when the recorded pid still runs with the
 * recorded start time and still leads its group, and `pidstate` to `alive`,
 * `none` (no such process, or a zombie) or `recycled` (the pid is now another
 * process, or left its group: never to be signalled).
 */
function aliveCheck(target: TrustedProcess): string[] {
  const { pid, startTime } = checkedTarget(target);
  return [
    `alive=0; pidstate=none; l=`,
    `if read -r l 2>/dev/null < /proc/${pid}/stat; then`,
    `  f=(\${l##*) })`,
    `  if [ "\${f[19]}" != ${startTime} ] || [ "\${f[2]}" != ${pid} ]; then pidstate=recycled`,
    `  elif [ "\${f[0]}" != Z ]; then alive=1; pidstate=alive; fi`,
    `fi`,
  ];
}

/**
 * Status and new output: the header line, then the log's bytes from `offset`
 * (at most `maxBytes`). Offsets are bytes of the log file, so the next read
 * continues exactly where this one ended, whatever the decoding.
 */
export function statusScript(dir: string, target: TrustedProcess, offset: number, maxBytes: number): string {
  const d = shellQuote(dir);
  return [
    `{ [ -d ${d} ] && [ ! -L ${d} ]; } || { printf '${STATUS_TAG} gone\\n'; exit 0; }`,
    ...aliveCheck(target),
    `ec=; [ -r ${d}/exit ] && [ ! -L ${d}/exit ] && read -r ec < ${d}/exit; [[ "$ec" =~ ^[0-9]{1,3}$ ]] || ec=-`,
    `to=0; [ -e ${d}/timedout ] && to=1; nr=0; [ -e ${d}/notrun ] && nr=1`,
    // Milliseconds where stat has them (GNU); busybox prints whole seconds.
    `em=-; [ "$ec" != - ] && em=$(command -p stat -c %.3Y ${d}/exit 2>/dev/null || echo -)`,
    `size=$(command -p stat -L -c %s ${d}/log 2>/dev/null || echo 0)`,
    `off=${Math.max(0, Math.floor(offset))}; end=$((off + ${Math.max(0, Math.floor(maxBytes))}))`,
    `[ "$end" -gt "$size" ] && end=$size`,
    `[ "$end" -lt "$off" ] && end=$off`,
    `printf '${STATUS_TAG} %s %s %s %s %s %s %s %s\\n' "$end" "$ec" "$alive" "$size" "$pidstate" "$to" "\${em:--}" "$nr"`,
    `[ "$end" -gt "$off" ] && command -p tail -c +$((off + 1)) ${d}/log | command -p head -c $((end - off))`,
    `exit 0`,
  ].join("\n");
}

export interface BackgroundStatus {
  /** The process's directory no longer exists (the environment was reset, or it was cleaned up). */
  gone: boolean;
  /** The runner (and so the command) is still running. */
  alive: boolean;
  /** `recycled`: the recorded pid now belongs to another process (started at another time). */
  pidState: "alive" | "none" | "recycled";
  /** The watchdog ended the command at its time limit. */
  timedOut: boolean;
  /** The runner gave up waiting for `go`: the command never ran. */
  neverRan: boolean;
  /** When the exit file was written (ms since the epoch; to the second with busybox's stat), if it was. */
  endedAt: number | undefined;
  /** The command's exit code, once it ended normally or by a signal it did not survive. */
  exitCode: number | undefined;
  /** The log offset just after `output`. */
  end: number;
  /** The log's size in bytes. */
  size: number;
  /** Log bytes from the requested offset up to `end`, decoded. */
  output: string;
}

export const GONE_STATUS: BackgroundStatus = {
  gone: true,
  alive: false,
  pidState: "none",
  timedOut: false,
  neverRan: false,
  endedAt: undefined,
  exitCode: undefined,
  end: 0,
  size: 0,
  output: "",
};

/** Parses what `statusScript` printed; undefined when it is not a status answer. */
export function parseStatus(text: string): BackgroundStatus | undefined {
  const newline = text.indexOf("\n");
  const header = newline < 0 ? text : text.slice(0, newline);
  if (header === `${STATUS_TAG} gone`) return { ...GONE_STATUS };
  const match = new RegExp(`^${STATUS_TAG} (\\d+) (-|\\d+) ([01]) (\\d+) (alive|none|recycled) ([01]) (-|\\d+(?:\\.\\d+)?)(?: ([01]))?$`).exec(header);
  if (!match) return undefined;
  return {
    gone: false,
    end: Number(match[1]),
    exitCode: match[2] === "-" ? undefined : Number(match[2]),
    alive: match[3] === "1",
    size: Number(match[4]),
    pidState: match[5] as BackgroundStatus["pidState"],
    timedOut: match[6] === "1",
    endedAt: match[7] === "-" ? undefined : Math.round(Number(match[7]) * 1000),
    neverRan: match[8] === "1",
    output: newline < 0 ? "" : text.slice(newline + 1),
  };
}

/**
 * Lines `from`..`to` (1-based, inclusive) of the log, at most `maxBytes`,
 * after a first line with the log's line count.
 */
export function logLinesScript(dir: string, from: number, to: number, maxBytes: number): string {
  const d = shellQuote(dir);
  return [
    `[ -r ${d}/log ] && [ ! -L ${d} ] || { echo gone; exit 0; }`,
    `n=$(command -p wc -l < ${d}/log); [ -s ${d}/log ] && [ "$(command -p tail -c 1 ${d}/log | command -p wc -l)" -eq 0 ] && n=$((n + 1))`,
    `printf '%s\\n' "$n"`,
    `command -p sed -n '${Math.max(1, from)},${Math.max(1, to)}p' ${d}/log | command -p head -c ${maxBytes}`,
  ].join("\n");
}

/** Writes `data` to the process's input. The FIFO is opened read-write, so this never blocks. */
export function writeScript(dir: string, data: string): string {
  const d = shellQuote(dir);
  return [`[ -p ${d}/stdin ] && [ ! -L ${d}/stdin ] && [ ! -L ${d} ] || exit 3`, `printf '%s' ${shellQuote(data)} 1<> ${d}/stdin`].join("\n");
}

/** Says `word` (go or abort) at the runner's gate. */
export function gateScript(dir: string, word: "go" | "abort"): string {
  const d = shellQuote(dir);
  return `if [ -p ${d}/gate ] && [ ! -L ${d}/gate ] && [ ! -L ${d} ]; then printf '${word}\\n' 1<> ${d}/gate; echo ok; else echo no-gate; fi`;
}

/**
 * Ends the process's input: the placeholder writer the launcher reported goes
 * (only when it still has its start time and belongs to the recorded group),
 * so the reader sees end-of-file.
 */
export function closeInputScript(group: TrustedProcess, holder: TrustedProcess | undefined): string {
  if (!holder) return "exit 0";
  const { pid, startTime } = checkedTarget(holder);
  const pgid = checkedTarget(group).pid;
  return [
    `l=; read -r l 2>/dev/null < /proc/${pid}/stat || exit 0`,
    `f=(\${l##*) })`,
    `[ "\${f[19]}" = ${startTime} ] && [ "\${f[2]}" = ${pgid} ] && kill ${pid} 2>/dev/null`,
    `exit 0`,
  ].join("\n");
}

/**
 * SIGTERM to the recorded group, SIGKILL after `graceMs` to what is left.
 * Before each signal: the leader still has the recorded start time and leads
 * the group, or it is gone and the group still has members (a pid cannot be
 * given to a new process while a group of that number exists). Prints
 * `killed`, `not-running` or `recycled`.
 */
export function killScript(target: TrustedProcess, graceMs: number): string {
  const { pid, startTime } = checkedTarget(target);
  const ticks = Math.max(1, Math.ceil(graceMs / 50));
  return [
    `same() { local l=; read -r l 2>/dev/null < /proc/${pid}/stat || { kill -0 -- -${pid} 2>/dev/null; return; }; local f=(\${l##*) }); [ "\${f[19]}" = ${startTime} ] && [ "\${f[2]}" = ${pid} ]; }`,
    ...aliveCheck(target),
    `[ "$pidstate" = recycled ] && { echo recycled; exit 0; }`,
    `[ "$alive" = 1 ] || { echo not-running; exit 0; }`,
    `same && kill -s TERM -- -${pid} 2>/dev/null`,
    `i=0; while same; do`,
    `  i=$((i + 1)); [ $i -ge ${ticks} ] && { same && kill -s KILL -- -${pid} 2>/dev/null; break; }`,
    `  command -p sleep 0.05 2>/dev/null || command -p sleep 1`,
    `done`,
    `echo killed`,
  ].join("\n");
}

/**
 * Removes the process's directory, only when it is what the registry made:
 * a real directory (no symlink in its place or its root's), at its real path,
 * holding the owner token. Anything else is left alone.
 */
export function removeScript(dir: string, nonce: string | undefined): string {
  if (nonce === undefined || !/^[0-9a-f]{16,64}$/.test(nonce)) return "exit 0";
  const slash = dir.lastIndexOf("/");
  const root = shellQuote(dir.slice(0, slash));
  const name = shellQuote(dir.slice(slash + 1));
  const d = shellQuote(dir);
  return [
    `[ -d ${d} ] && [ ! -L ${d} ] && [ ! -L ${root} ] || exit 0`,
    `cd -P -- ${root} 2>/dev/null || exit 0; r=$PWD`,
    `cd -P -- ${name} 2>/dev/null && [ "$PWD" = "$r"/${name} ] || exit 0`,
    `t=; [ -f owner ] && [ ! -L owner ] && read -r t < owner; [ "$t" = ${nonce} ] || exit 0`,
    `cd / && command -p rm -rf -- "$r"/${name}`,
  ].join("\n");
}
