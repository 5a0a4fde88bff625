/**
 * Starting a background process inside a task's environment: the launcher
 * (an ordinary command in the task's shell state, so the process gets the
 * task's working directory and exported variables), the runner it starts
 * in a process group of its own, and the one line the launcher prints.
 *
 * What the registry believes about the process comes from the launcher and
 * the kernel, never from a file the command could write:
 * - the pid is the launcher's `$!`: the runner is a subshell of the launcher
 *   (no new bash: one exec fewer per process), started with job control on
 *   (`set -m`), so it leads a process group of its own (a kill reaches the
 *   whole tree, and the environment's cleanup of its own command's group does
 *   not); its group and start time are read by the launcher from
 *   `/proc/<pid>/stat`, and the group must be the pid;
 * - the runner holds the command at a gate (a FIFO) until the registry has
 *   recorded that pid in its checkpoint and says `go`; without a `go` within
 *   `gateSeconds` (the registry that started it died), the command never runs;
 * - the directory is `<root>/<id>`, with the root and id the registry chose
 *   (never the task's TMPDIR), made fresh by `mkdir` (which fails on anything
 *   already there, a symlink included); the root must be a directory the
 *   environment's user owns, not a symlink;
 * - the launcher's own programs are looked up on the default PATH
 *   (`command -p`), so a task's PATH does not choose them; the command itself
 *   runs with the task's PATH, in a subshell of the runner (`eval`) with the
 *   runner's variables unset and default signal dispositions, as a foreground
 *   command runs in the task's shell.
 *
 *     <dir>/owner    the registry's random token: only a directory holding it is ever deleted
 *     <dir>/log      everything the process printed (stdout and stderr merged; through the pty with `pty`)
 *     <dir>/stdin    a FIFO the process reads its input from; a placeholder writer (a bash subshell) keeps it open
 *     <dir>/ready    a FIFO the runner announces itself (and the placeholder's pid) on, for the launcher
 *     <dir>/gate     a FIFO the runner waits on for `go` (or `abort`) before running the command
 *     <dir>/exit     the exit code, written when the command ended
 *     <dir>/timedout present when the watchdog ended the command at its time limit
 *     <dir>/notrun   present when the runner gave up at the gate: the command never ran
 */

import { shellQuote } from "../environments/shell-state.js";
import { PTY_CHECK, PTY_RUNNER } from "../terminal/pty-command.js";

/** Exit code the launcher uses when it cannot prepare the directory. */
export const LAUNCH_FAILED = 90;

/** Seconds the runner waits at the gate for the registry's `go` before giving up without running the command. */
export const DEFAULT_GATE_SECONDS = 60;

const LAUNCH_TAG = "mibyan-launch";

/**
 * The runner (a subshell of the launcher, in a process group of its own); `$1` the directory, `$2` the user's command, `$3` 1
 * for PTY mode, `$4` the time limit in seconds (0: none), `$5` the gate's
 * wait in seconds. The user's command is an argument, never spliced in.
 */
const RUNNER = [
  `d=$1; __mibyan_cmd=$2; __mibyan_pty=$3; __mibyan_limit=$4; __mibyan_gate=$5; __mibyan_me=$BASHPID`,
  `set --`,
  `exec </dev/null >>"$d/log" 2>&1`,
  // Open read-write: never blocks, and a `go` written before the runner reads it waits in the pipe.
  `exec 8<> "$d/gate"`,
  // The placeholder writer, a subshell (no program): the command's "< stdin" would otherwise see EOF at once.
  // It blocks opening the FIFO until the command opens it, then reads from the gate, where nothing more comes.
  `( exec 3> "$d/stdin"; read -r -u 8 _ ) 2>/dev/null & __mibyan_h=$!`,
  `printf '%s\\n' "$__mibyan_h" 1<> "$d/ready"`,
  `__mibyan_go=; read -t "$__mibyan_gate" -r -u 8 __mibyan_go`,
  `if [ "$__mibyan_go" != go ]; then kill "$__mibyan_h" 2>/dev/null; : > "$d/notrun"; exit 0; fi`,
  // The watchdog lives in the environment, so the limit holds when no runtime is watching. It ignores
  // the TERM it sends to the group, gives the command a grace period, then kills what is left.
  `if [ "\${__mibyan_limit:-0}" -gt 0 ]; then`,
  `  ( trap '' TERM; s=0`,
  `    while [ $s -lt "$__mibyan_limit" ]; do command -p sleep 1; s=$((s + 1)); [ -s "$d/exit" ] && exit 0; done`,
  `    : > "$d/timedout"; kill -s TERM -- "-$__mibyan_me" 2>/dev/null`,
  `    for s in 1 2 3 4 5 6 7 8 9 10; do command -p sleep 0.3 2>/dev/null || command -p sleep 1; [ -s "$d/exit" ] && exit 0; done`,
  `    kill -s KILL -- "-$__mibyan_me" 2>/dev/null ) &`,
  `fi`,
  // Trapped (not ignored), so the command gets the default actions; bash runs the trap only
  // once the foreground command has ended, so its exit code is still recorded.
  `trap ':' TERM HUP INT`,
  `if [ "$__mibyan_pty" = 1 ]; then`,
  `  MIBYAN_PTY_COMMAND=$__mibyan_cmd ${PTY_RUNNER} < "$d/stdin"`,
  `else`,
  // A subshell, not a new bash: one exec fewer per process. Its traps are back to the defaults, and
  // the runner's own variables are unset first, so the command starts as under \`bash -c\`.
  `  ( unset d __mibyan_pty __mibyan_limit __mibyan_gate __mibyan_go __mibyan_h __mibyan_me __mibyan_r __mibyan_d __mibyan_o; eval "$__mibyan_cmd" ) < "$d/stdin" 8<&-`,
  `fi`,
  `__mibyan_ec=$?`,
  `kill "$__mibyan_h" 2>/dev/null`,
  // One short write; a reader that finds the file empty reads it again later.
  `printf '%s' "$__mibyan_ec" > "$d/exit"`,
].join("\n");

export interface LaunchOptions {
  pty: boolean;
  timeoutSeconds: number;
  /** The control root (already checked), or `DEFAULT_CONTROL_ROOT` to expand in the environment. */
  root: string;
  /** The process id: the directory's name. */
  id: string;
  /** Written into `<dir>/owner`. */
  nonce: string;
  gateSeconds: number;
  /**
   * The registry made the directory and its owner file itself (the
   * environment shares Node's file system): the launcher checks them instead
   * of making them, one program fewer.
   */
  premade?: boolean;
}

/**
 * The launcher. Prints one line:
 * `mibyan-launch <dir> <pid> <pgid> <sid> <start time> <holder pid> <holder start time> <shared 0|1>`;
 * `shared` is 1 when the environment sees the pid namespace and mounts of
 * the Node process `nodePid` (a local environment without a sandbox).
 */
export function launchScript(command: string, options: LaunchOptions, nodePid: number): string {
  const limit = Math.max(0, Math.floor(options.timeoutSeconds));
  const root = options.root.includes("$") ? `"${options.root}"` : shellQuote(options.root);
  const fail = (what: string) => `{ echo ${shellQuote(`mibyan-launch-error ${what}`)}; exit ${LAUNCH_FAILED}; }`;
  return [
    options.pty ? PTY_CHECK : ``,
    `__mibyan_r=${root}`,
    `[ -d "$__mibyan_r" ] || command -p mkdir -p -m 700 -- "$__mibyan_r" 2>/dev/null`,
    `[ -d "$__mibyan_r" ] && [ ! -L "$__mibyan_r" ] && [ -O "$__mibyan_r" ] || ${fail("the control root is missing, a symlink or not owned by this user")}`,
    `__mibyan_d=$__mibyan_r/${options.id}`,
    ...(options.premade
      ? [
          `__mibyan_o=; [ -d "$__mibyan_d" ] && [ ! -L "$__mibyan_d" ] && [ -O "$__mibyan_d" ] && [ ! -L "$__mibyan_d/owner" ] && read -r __mibyan_o < "$__mibyan_d/owner"`,
          `[ "$__mibyan_o" = ${options.nonce} ] || ${fail("the process directory is not the one the registry made")}`,
          `command -p mkfifo -m 600 -- "$__mibyan_d/stdin" "$__mibyan_d/ready" "$__mibyan_d/gate" && : > "$__mibyan_d/log" || ${fail("the process files could not be made")}`,
        ]
      : [
          `command -p mkdir -m 700 -- "$__mibyan_d" 2>/dev/null || ${fail("the process directory could not be made")}`,
          `command -p mkfifo -m 600 -- "$__mibyan_d/stdin" "$__mibyan_d/ready" "$__mibyan_d/gate" && printf '%s\\n' ${options.nonce} > "$__mibyan_d/owner" && : > "$__mibyan_d/log" || ${fail("the process files could not be made")}`,
        ]),
    // Held read-write, so the runner's write finds a reader whenever it comes.
    `exec 9<> "$__mibyan_d/ready"`,
    // Job control (no program): the runner gets a process group of its own, led by it.
    `set -m`,
    // A subshell of the launcher (no new bash): it starts in the task's state exactly as a foreground
    // command does, and its own variables are unset before the command runs.
    `( set -- "$__mibyan_d" ${shellQuote(command)} ${options.pty ? 1 : 0} ${limit} ${options.gateSeconds}`,
    RUNNER,
    `) </dev/null >/dev/null 2>&1 9<&- &`,
    `__mibyan_p=$!; set +m`,
    `__mibyan_h=; read -t 10 -r __mibyan_h <&9; exec 9<&-`,
    // What the kernel says of the runner and the placeholder, not what anyone wrote.
    // (Fields after the command name: [0] state, [2] group, [3] session, [19] start time.)
    `__mibyan_l=; read -r __mibyan_l 2>/dev/null < "/proc/$__mibyan_p/stat" || ${fail("the runner did not start")}`,
    `__mibyan_f=(\${__mibyan_l##*) })`,
    `__mibyan_hs=0; __mibyan_l=`,
    `[[ "$__mibyan_h" =~ ^[0-9]+$ ]] && read -r __mibyan_l 2>/dev/null < "/proc/$__mibyan_h/stat"`,
    `__mibyan_g=(\${__mibyan_l##*) }); [ -n "$__mibyan_l" ] && [ "\${__mibyan_g[2]}" = "$__mibyan_p" ] && __mibyan_hs=\${__mibyan_g[19]} || __mibyan_h=0`,
    `__mibyan_s=0; [ /proc/$$/ns/pid -ef /proc/${nodePid}/ns/pid ] && [ /proc/$$/ns/mnt -ef /proc/${nodePid}/ns/mnt ] && __mibyan_s=1`,
    `printf '${LAUNCH_TAG} %s %s %s %s %s %s %s %s\\n' "$__mibyan_d" "$__mibyan_p" "\${__mibyan_f[2]}" "\${__mibyan_f[3]}" "\${__mibyan_f[19]}" "$__mibyan_h" "$__mibyan_hs" "$__mibyan_s"`,
  ]
    .filter(Boolean)
    .join("\n");
}

export interface Launched {
  dir: string;
  pid: number;
  startTime: string;
  holderPid: number | undefined;
  holderStartTime: string | undefined;
  /** The environment shares the Node process's pid namespace and mounts. */
  shared: boolean;
}

/**
 * What the launcher printed, checked strictly: the whole output is exactly
 * one line of the expected shape, the directory is the one asked for, the
 * pid is above 1 and leads its own group and session. Anything else is a
 * string saying what was wrong.
 */
export function parseLaunch(output: string, expectedDir: (dir: string) => boolean): Launched | string {
  if (!output.endsWith("\n") || output.indexOf("\n") !== output.length - 1) return "the launcher did not print exactly one line";
  const match = new RegExp(`^${LAUNCH_TAG} (/[A-Za-z0-9._+/-]+) ([0-9]{1,10}) ([0-9]{1,10}) ([0-9]{1,10}) ([0-9]{1,20}) ([0-9]{1,10}) ([0-9]{1,20}) ([01])\\n$`).exec(output);
  if (!match) return "the launcher's line is not of the expected shape";
  const [, dir, pidText, pgidText, sidText, startTime, holderText, holderStart, shared] = match;
  if (!expectedDir(dir!)) return `the launcher reported a directory other than the one asked for (${JSON.stringify(dir)})`;
  const pid = Number(pidText);
  if (!Number.isSafeInteger(pid) || pid <= 1) return `the launcher reported pid ${pidText}`;
  if (Number(pgidText) !== pid) return `the runner (pid ${pid}) does not lead its own process group (group ${pgidText}, session ${sidText})`;
  if (startTime === "0") return "the runner's start time could not be read";
  const holderPid = Number(holderText);
  return {
    dir: dir!,
    pid,
    startTime: startTime!,
    holderPid: holderPid > 1 && holderPid !== pid ? holderPid : undefined,
    holderStartTime: holderPid > 1 && holderPid !== pid ? holderStart! : undefined,
    shared: shared === "1",
  };
}
