/**
 * The bash scripts that run and manage a background process inside a task's
 * environment. Everything lives in files of one private directory in the
 * environment (`mktemp -d`, mode 0700), so the same scheme works on every
 * backend (the local machine, a container, an ssh host, a cloud sandbox) and a
 * process outlives the runtime that started it: a later runtime finds it again
 * through the files.
 *
 *     <dir>/log      everything the process printed (stdout and stderr merged; through the pty with `pty`)
 *     <dir>/stdin    a FIFO the process reads its input from
 *     <dir>/holder   pid of the placeholder writer that keeps the FIFO open (no EOF until `close`)
 *     <dir>/ready    a FIFO the runner announces its pid and start time on, for the launcher
 *     <dir>/pid      "<pid> <start time>": the runner, which leads the process's session and group;
 *                    the start time (clock ticks since boot, /proc/<pid>/stat field 22) tells a recycled pid apart
 *     <dir>/exit     the exit code, written (atomically, by rename) when the command ends
 *     <dir>/timedout present when the watchdog ended the command at its time limit
 *
 * The runner is started with `setsid`, so it leads a new session and process
 * group: a kill reaches the whole tree, and nothing of it belongs to the
 * short-lived shell that launched it (or to an ssh session or `docker exec`).
 * It ignores SIGTERM/SIGHUP/SIGINT for itself (trapped, so its children still
 * get the default action) to record the exit code of a terminated command.
 *
 * PTY mode runs the command under util-linux `script` (`pty-command.ts`), with
 * a real pseudo-terminal inside the environment; input written to the FIFO
 * reaches the program through the terminal (so Enter is "\r").
 */

import { shellQuote } from "../environments/shell-state.js";
import { PTY_CHECK, PTY_RUNNER } from "../terminal/pty-command.js";

/** Exit code the launcher uses when it cannot prepare the directory. */
const LAUNCH_FAILED = 90;

/** First line of every status answer: `mibyan-bg <end offset> <exit code or -> <alive 0|1> <size> <pid state> <timed out 0|1> <exit file mtime (s) or ->`. */
const STATUS_TAG = "mibyan-bg";

/**
 * Runs inside `setsid`; `$1` the directory, `$2` the user's command, `$3` 1 for PTY mode,
 * `$4` the time limit in seconds (0: none). Kept free of the user's command
 * (passed as an argument, never spliced in).
 */
const RUNNER = [
  `d=$1; __mibyan_cmd=$2; __mibyan_pty=$3; __mibyan_limit=$4`,
  `set --`,
  `exec </dev/null >>"$d/log" 2>&1`,
  `read -r __mibyan_l < /proc/$$/stat 2>/dev/null; __mibyan_f=(\${__mibyan_l##*) })`,
  // Written before anyone learns of the directory (the launcher waits for "ready"), so it is whole when read.
  `printf '%s %s' "$$" "\${__mibyan_f[19]:-0}" > "$d/pid"`,
  // Opened read-write: never blocks, even when the launcher gave up waiting.
  `printf '%s %s\\n' "$$" "\${__mibyan_f[19]:-0}" 1<> "$d/ready"`,
  // The placeholder writer: the command's `< stdin` would otherwise see EOF at once.
  `( exec sleep 2147483647 > "$d/stdin" ) 2>/dev/null & __mibyan_h=$!`,
  `printf '%s' "$__mibyan_h" > "$d/holder"`,
  // The watchdog lives in the environment, so the limit holds when no runtime is watching.
  // It ignores the TERM it sends to the group, gives the command a grace period to end
  // (and the runner to record its exit code), then kills what is left.
  `if [ "\${__mibyan_limit:-0}" -gt 0 ]; then`,
  `  ( trap '' TERM; s=0`,
  `    while [ $s -lt "$__mibyan_limit" ]; do sleep 1; s=$((s + 1)); [ -e "$d/exit" ] && exit 0; done`,
  `    : > "$d/timedout"; kill -s TERM -- "-$$" 2>/dev/null`,
  `    for s in 1 2 3 4 5 6 7 8 9 10; do sleep 0.3 2>/dev/null || sleep 1; [ -e "$d/exit" ] && exit 0; done`,
  `    kill -s KILL -- "-$$" 2>/dev/null ) &`,
  `fi`,
  // Trapped (not ignored), so the command gets the default actions; bash runs the trap only
  // once the foreground command has ended, so its exit code is still recorded.
  `trap ':' TERM HUP INT`,
  // In the foreground: a command started with `&` by a non-interactive shell would ignore SIGINT.
  `if [ "$__mibyan_pty" = 1 ]; then`,
  `  MIBYAN_PTY_COMMAND=$__mibyan_cmd ${PTY_RUNNER} < "$d/stdin"`,
  `else`,
  `  bash -c "$__mibyan_cmd" < "$d/stdin"`,
  `fi`,
  `__mibyan_ec=$?`,
  `kill "$__mibyan_h" 2>/dev/null`,
  `printf '%s' "$__mibyan_ec" > "$d/exit.tmp" && mv -f "$d/exit.tmp" "$d/exit"`,
].join("\n");

/**
 * The launcher, run as an ordinary command in the task's state (its working
 * directory and exported variables are what the process starts with). Prints
 * `<dir>\t<pid> <start time>` once the runner has written its pid file. It
 * waits on a FIFO with bash's `read` (no polling, no `sleep`): starting a
 * background process costs three programs (mktemp, mkfifo, setsid).
 */
export function launchScript(command: string, options: { pty: boolean; timeoutSeconds?: number }): string {
  const limit = Math.max(0, Math.floor(options.timeoutSeconds ?? 0));
  return [
    options.pty ? PTY_CHECK : ``,
    `__mibyan_d=$(mktemp -d "\${TMPDIR:-/tmp}/mibyan-bg.XXXXXX") || exit ${LAUNCH_FAILED}`,
    // mktemp -d makes the directory 0700.
    `mkfifo -m 600 "$__mibyan_d/stdin" "$__mibyan_d/ready" && : > "$__mibyan_d/log" || exit ${LAUNCH_FAILED}`,
    // Held read-write, so the runner's write finds a reader whenever it comes.
    `exec 9<> "$__mibyan_d/ready"`,
    `setsid bash -c ${shellQuote(RUNNER)} bash "$__mibyan_d" ${shellQuote(command)} ${options.pty ? 1 : 0} ${limit} </dev/null >/dev/null 2>&1 9<&- &`,
    // Wait (up to 10 s) for the runner's pid and start time.
    `__mibyan_p=; __mibyan_s=; read -t 10 -r __mibyan_p __mibyan_s <&9; exec 9<&-`,
    `printf '%s\\t%s %s\\n' "$__mibyan_d" "$__mibyan_p" "$__mibyan_s"`,
  ]
    .filter(Boolean)
    .join("\n");
}

/** What `launchScript` printed: the process's directory, pid and start time. */
export function parseLaunch(output: string): { dir: string; pid: number; startTime: string } | undefined {
  const match = /^(\/[^\t\n]*)\t(\d+) (\d+)\s*$/m.exec(output);
  if (!match) return undefined;
  return { dir: match[1]!, pid: Number(match[2]), startTime: match[3]! };
}

/**
 * Shell lines setting `alive` to 1 when the pid in `<dir>/pid` still runs with
 * the recorded start time, and `pidstate` to `alive`, `none` (no such process,
 * or a zombie) or `recycled` (the pid now belongs to a process that started
 * at another time: someone else's, never to be signalled).
 */
function aliveCheck(dir: string): string[] {
  const d = shellQuote(dir);
  return [
    `alive=0; pidstate=none; p=; st=`,
    `[ -r ${d}/pid ] && read -r p st < ${d}/pid`,
    `if [ -n "$p" ] && [ -r "/proc/$p/stat" ]; then`,
    `  read -r l < "/proc/$p/stat"; f=(\${l##*) })`,
    `  if [ "\${f[19]}" != "$st" ]; then pidstate=recycled`,
    `  elif [ "\${f[0]}" != Z ]; then alive=1; pidstate=alive; fi`,
    `fi`,
  ];
}

/**
 * Status and new output: the header line, then the log's bytes from `offset`
 * (at most `maxBytes`). Offsets are bytes of the log file, so the next read
 * continues exactly where this one ended, whatever the decoding.
 */
export function statusScript(dir: string, offset: number, maxBytes: number): string {
  const d = shellQuote(dir);
  return [
    `[ -d ${d} ] || { printf '${STATUS_TAG} gone\\n'; exit 0; }`,
    ...aliveCheck(dir),
    `ec=-; [ -r ${d}/exit ] && read -r ec < ${d}/exit`,
    `to=0; [ -e ${d}/timedout ] && to=1`,
    // Milliseconds where stat has them (GNU); busybox prints whole seconds.
    `em=-; [ -r ${d}/exit ] && em=$(stat -c %.3Y ${d}/exit 2>/dev/null || echo -)`,
    `size=$(stat -c %s ${d}/log 2>/dev/null || wc -c < ${d}/log)`,
    `off=${Math.max(0, Math.floor(offset))}; end=$((off + ${Math.max(0, Math.floor(maxBytes))}))`,
    `[ "$end" -gt "$size" ] && end=$size`,
    `[ "$end" -lt "$off" ] && end=$off`,
    `printf '${STATUS_TAG} %s %s %s %s %s %s %s\\n' "$end" "\${ec:--}" "$alive" "$size" "$pidstate" "$to" "\${em:--}"`,
    `[ "$end" -gt "$off" ] && tail -c +$((off + 1)) ${d}/log | head -c $((end - off))`,
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

/** Parses what `statusScript` printed; undefined when it is not a status answer. */
export function parseStatus(text: string): BackgroundStatus | undefined {
  const newline = text.indexOf("\n");
  const header = newline < 0 ? text : text.slice(0, newline);
  if (header === `${STATUS_TAG} gone`) {
    return { gone: true, alive: false, pidState: "none", timedOut: false, endedAt: undefined, exitCode: undefined, end: 0, size: 0, output: "" };
  }
  const match = new RegExp(`^${STATUS_TAG} (\\d+) (-|\\d+) ([01]) (\\d+) (alive|none|recycled) ([01]) (-|\\d+(?:\\.\\d+)?)$`).exec(header);
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
    `[ -r ${d}/log ] || { echo gone; exit 0; }`,
    `n=$(wc -l < ${d}/log); [ -s ${d}/log ] && [ "$(tail -c 1 ${d}/log | wc -l)" -eq 0 ] && n=$((n + 1))`,
    `printf '%s\\n' "$n"`,
    `sed -n '${Math.max(1, from)},${Math.max(1, to)}p' ${d}/log | head -c ${maxBytes}`,
  ].join("\n");
}

/** Writes `data` to the process's input. The FIFO is opened read-write, so this never blocks. */
export function writeScript(dir: string, data: string): string {
  const d = shellQuote(dir);
  return [`[ -p ${d}/stdin ] || exit 3`, `printf '%s' ${shellQuote(data)} 1<> ${d}/stdin`].join("\n");
}

/** Ends the process's input: the placeholder writer goes, so the reader sees end-of-file. */
export function closeInputScript(dir: string): string {
  const d = shellQuote(dir);
  return [`h=; [ -r ${d}/holder ] && read -r h < ${d}/holder`, `[ -n "$h" ] && kill "$h" 2>/dev/null`, `exit 0`].join("\n");
}

/**
 * SIGTERM to the process's group, SIGKILL after `graceMs` to what is left.
 * Signals only when the pid's start time still matches the record (a recycled
 * pid belongs to someone else). Prints `killed`, `not-running` or `recycled`.
 */
export function killScript(dir: string, graceMs: number): string {
  const ticks = Math.max(1, Math.ceil(graceMs / 50));
  return [
    ...aliveCheck(dir),
    `[ "$pidstate" = recycled ] && { echo recycled; exit 0; }`,
    `[ "$alive" = 1 ] || { echo not-running; exit 0; }`,
    `kill -s TERM -- "-$p" 2>/dev/null`,
    `i=0; while kill -0 -- "-$p" 2>/dev/null; do`,
    `  i=$((i + 1)); [ $i -ge ${ticks} ] && { kill -s KILL -- "-$p" 2>/dev/null; break; }`,
    `  sleep 0.05 2>/dev/null || sleep 1`,
    `done`,
    `echo killed`,
  ].join("\n");
}

/** Removes the process's directory (its log included). */
export function removeScript(dir: string): string {
  return `rm -rf -- ${shellQuote(dir)}`;
}
