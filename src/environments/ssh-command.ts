/**
 * Command construction for the ssh backend, free of I/O: the OpenSSH client's
 * arguments, and the small bash scripts that run on the remote host around the
 * user's command. `ssh.ts` runs them.
 *
 * Remote quoting: the OpenSSH client joins everything after the destination
 * into one line, and the remote user's login shell runs that line with
 * `$SHELL -c`. So the backend builds that line itself, out of arguments each
 * single-quoted with `shellQuote` (which every POSIX shell reads the same way),
 * and hands it to ssh as one argument. The user's command is one of those
 * arguments (the `$1` of the wrapper), never spliced into a script's text.
 */

import { shellQuote, statePaths, wrapCommand, type WrapCommandOptions } from "./shell-state.js";

/** How strictly the server's host key is checked (OpenSSH's `StrictHostKeyChecking`). */
export type HostKeyChecking = "yes" | "accept-new" | "no";

/** Where and how to connect. */
export interface SshOptions {
  /** Host name or address (or a `Host` alias of the ssh config file). Required. */
  host?: string;
  /** TCP port; ssh's default (22, or the config file's) when absent. */
  port?: number;
  /** Remote user; ssh's default (the config file's, or the local user name) when absent. */
  user?: string;
  /** Private key for key authentication; with it, no other identity (agent, default keys) is offered. */
  identityFile?: string;
  /** known_hosts file the host key is checked against (`UserKnownHostsFile`); ssh's default when absent. */
  knownHostsFile?: string;
  /**
   * `yes` (default): an unknown or changed host key is refused. `accept-new`: an unknown key is
   * added to the known_hosts file, a changed one refused. `no`: no check (not recommended).
   */
  strictHostKeyChecking?: HostKeyChecking;
  /** Seconds to wait for the TCP connection and the SSH handshake. Default 10. */
  connectTimeoutSeconds?: number;
  /** Seconds the shared master connection stays up without any command. Default 60. */
  controlPersistSeconds?: number;
  /** The task's first working directory on the remote host; the remote user's home when absent. */
  cwd?: string;
  /** ssh client config file (`-F`); ssh's default (`~/.ssh/config`) when absent. `/dev/null` ignores it. */
  configFile?: string;
  /** The OpenSSH client binary. Default `ssh` (looked up in PATH). */
  sshBinary?: string;
  /** SIGTERM→SIGKILL grace period for the remote process group on timeout or abort. Default 2000 ms. */
  killGraceMs?: number;
}

/** Values accepted for `strictHostKeyChecking`. */
export const HOST_KEY_CHECKING_VALUES: readonly HostKeyChecking[] = ["yes", "accept-new", "no"];

export const DEFAULT_CONNECT_TIMEOUT_SECONDS = 10;
export const DEFAULT_CONTROL_PERSIST_SECONDS = 60;
export const DEFAULT_SSH_KILL_GRACE_MS = 2_000;

/** Marks the end-of-command record the remote wrapper writes on its side channel (the ssh stderr stream). */
export const EXIT_RECORD_TAG = "MIBYAN-SSH-EXIT";

/** Why these options cannot be used, or undefined. Checks only their shape (no I/O). */
export function sshOptionsProblem(options: SshOptions): string | undefined {
  const host = options.host?.trim();
  if (!host) return "no ssh host configured (set the ssh backend's `host`)";
  if (/\s/.test(host) || host.startsWith("-")) return `invalid ssh host ${JSON.stringify(options.host)}`;
  if (options.user !== undefined && (options.user === "" || /[\s@]/.test(options.user) || options.user.startsWith("-"))) {
    return `invalid ssh user ${JSON.stringify(options.user)}`;
  }
  if (options.port !== undefined && !(Number.isInteger(options.port) && options.port > 0 && options.port < 65_536)) {
    return `invalid ssh port ${JSON.stringify(options.port)}`;
  }
  if (options.strictHostKeyChecking !== undefined && !HOST_KEY_CHECKING_VALUES.includes(options.strictHostKeyChecking)) {
    return `invalid strictHostKeyChecking ${JSON.stringify(options.strictHostKeyChecking)} (yes, accept-new or no)`;
  }
  if (options.connectTimeoutSeconds !== undefined && !(options.connectTimeoutSeconds > 0)) {
    return `invalid connectTimeoutSeconds ${JSON.stringify(options.connectTimeoutSeconds)}`;
  }
  if (options.cwd !== undefined && !options.cwd.startsWith("/")) return `the ssh cwd must be an absolute path, got ${JSON.stringify(options.cwd)}`;
  return undefined;
}

/** `user@host:port` for messages. */
export function describeTarget(options: SshOptions): string {
  const user = options.user ? `${options.user}@` : "";
  const port = options.port !== undefined ? `:${options.port}` : "";
  return `${user}${options.host ?? "?"}${port}`;
}

/**
 * The client arguments shared by every invocation of one environment (without the
 * binary, the destination and the remote command): key auth only, never a prompt,
 * host-key checking as configured (on by default), one multiplexed master connection
 * per environment behind `controlDir/cm-%C`.
 */
export function sshBaseArgs(options: SshOptions, controlDir: string): string[] {
  const args: string[] = [];
  if (options.configFile !== undefined) args.push("-F", options.configFile);
  const opt = (name: string, value: string | number) => args.push("-o", `${name}=${value}`);
  opt("BatchMode", "yes");
  opt("StrictHostKeyChecking", options.strictHostKeyChecking ?? "yes");
  if (options.knownHostsFile !== undefined) opt("UserKnownHostsFile", options.knownHostsFile);
  opt("ConnectTimeout", Math.max(1, Math.ceil(options.connectTimeoutSeconds ?? DEFAULT_CONNECT_TIMEOUT_SECONDS)));
  opt("ControlMaster", "auto");
  opt("ControlPath", `${controlDir}/cm-%C`);
  opt("ControlPersist", Math.max(1, Math.round(options.controlPersistSeconds ?? DEFAULT_CONTROL_PERSIST_SECONDS)));
  // A dead peer is noticed within ~45 s, after which the master exits and the next command reconnects.
  opt("ServerAliveInterval", 15);
  opt("ServerAliveCountMax", 3);
  // Errors only: no "Warning: Permanently added ..." noise on the side channel.
  opt("LogLevel", "ERROR");
  if (options.identityFile !== undefined) {
    opt("IdentitiesOnly", "yes");
    args.push("-i", options.identityFile);
  }
  if (options.port !== undefined) args.push("-p", String(options.port));
  if (options.user !== undefined) args.push("-l", options.user);
  // No pseudo-terminal: output stays byte-exact and stdin stays closed.
  args.push("-T");
  return args;
}

/** The full argv for running `remoteLine` (already quoted for the remote shell). */
export function sshRunArgv(binary: string, options: SshOptions, controlDir: string, remoteLine: string): string[] {
  return [binary, ...sshBaseArgs(options, controlDir), "--", options.host!.trim(), remoteLine];
}

/** The argv of a control request to the master (`check`, `exit`). */
export function sshControlArgv(binary: string, options: SshOptions, controlDir: string, request: "check" | "exit"): string[] {
  return [binary, ...sshBaseArgs(options, controlDir), "-O", request, "--", options.host!.trim()];
}

/** The remote line that runs `script` with bash, arguments passed positionally (each quoted). */
export function remoteBash(script: string, args: readonly string[] = []): string {
  return ["exec", "bash", "-c", shellQuote(script), "mibyan", ...args.map(shellQuote)].join(" ");
}

/** Safe piece of a task id for a remote directory name. */
export function taskSlug(taskId: string): string {
  const slug = taskId.replace(/[^A-Za-z0-9_.-]+/g, "_").replace(/^[.-]+/, "").slice(0, 40);
  return slug || "task";
}

/**
 * Runs on the remote host once per environment: checks bash, creates the task's
 * private state directory and prints it and the starting directory, each followed
 * by a NUL. Exit code 3: no such start directory.
 */
export function setupScript(taskId: string, cwd: string | undefined): string {
  const lines = [
    "umask 077",
    `d=$(mktemp -d "\${TMPDIR:-/tmp}/mibyan-${taskSlug(taskId)}-XXXXXX") || exit 1`,
  ];
  if (cwd !== undefined) {
    lines.push(`cd -- ${shellQuote(cwd)} 2>/dev/null || { rm -rf -- "$d"; echo "no such directory on the remote host: "${shellQuote(cwd)} >&2; exit 3; }`);
  }
  lines.push(`printf '%s\\0%s\\0' "$d" "$PWD"`);
  return lines.join("\n");
}

/**
 * Runs on the remote host at close: SIGKILLs the process group of any run still
 * recorded in the state directory, then removes the directory (only a mibyan one).
 */
export function teardownScript(stateDir: string): string {
  const dir = shellQuote(stateDir);
  return [
    `for f in ${dir}/run-*.pid; do`,
    `  [ -f "$f" ] || continue`,
    `  pg=$(cat "$f" 2>/dev/null)`,
    `  case $pg in ''|*[!0-9]*) continue ;; esac`,
    `  [ "$pg" -gt 1 ] && kill -KILL -- "-$pg" 2>/dev/null`,
    `done`,
    `case ${dir} in */mibyan-*) rm -rf -- ${dir} ;; esac`,
  ].join("\n");
}

/** Remote files of one command run. */
export function runFiles(stateDir: string, runId: string): { pidFile: string; killFile: string } {
  return { pidFile: `${stateDir}/run-${runId}.pid`, killFile: `${stateDir}/run-${runId}.kill` };
}

/**
 * The remote wrapper around one command. It
 * 1. records its process group in the run's pid file (the kill path signals that
 *    group), then gives up at once if the kill path already asked for this run
 *    (a timeout before the command started);
 * 2. keeps the ssh stderr stream as fd 3, a side channel for the backend, and sends
 *    the command's stderr to its stdout, so both keep their real order;
 * 3. runs the task's state script (`wrapCommand`) in a child bash with the user's
 *    command as `$1`, without fd 3;
 * 4. writes the exit record `NUL MIBYAN-SSH-EXIT <code> <cwd> NUL` to fd 3. The
 *    backend reads the exit code and the task's directory from it, and knows the
 *    command is over even while a background job still holds the output stream
 *    open (which would keep the ssh session, and the client, alive).
 *
 * sshd starts every session in a new session and process group (setsid) and the
 * remote line `exec`s this bash, so the group holds exactly this command's tree.
 */
export function runScript(stateDir: string, runId: string, options: WrapCommandOptions): string {
  const paths = statePaths(stateDir);
  const { pidFile, killFile } = runFiles(stateDir, runId);
  const inner = wrapCommand(paths, options);
  const pf = shellQuote(pidFile);
  const kf = shellQuote(killFile);
  return [
    `__c=$1`,
    // Our process group, from /proc where there is one (no fork); $$ otherwise (we are the group leader).
    `__pg=$$`,
    `if [ -r /proc/$$/stat ]; then read -r __st < /proc/$$/stat; __st=\${__st##*) }; __st=\${__st#* }; __st=\${__st#* }; __pg=\${__st%% *}; fi`,
    `printf '%s\\n' "$__pg" > ${pf}`,
    `trap ${shellQuote(`rm -f ${pf}`)} EXIT`,
    `if [ -e ${kf} ]; then rm -f ${kf}; exit 130; fi`,
    `exec 3>&2 2>&1`,
    `bash -c ${shellQuote(inner)} bash "$__c" 3>&-`,
    `__ec=$?`,
    `__cwd=`,
    `if [ -f ${shellQuote(paths.cwdFile)} ]; then IFS= read -r -d '' __cwd < ${shellQuote(paths.cwdFile)}; fi`,
    `printf '\\0${EXIT_RECORD_TAG} %s %s\\0' "$__ec" "$__cwd" >&3`,
    `exit $__ec`,
  ].join("\n");
}

/**
 * The kill path, run over a second ssh session on timeout or abort: marks the run as
 * killed (so a wrapper that has not started yet gives up), then SIGTERMs the run's
 * process group, waits up to `graceMs` for it to go, and SIGKILLs what is left.
 * Prints the task's working directory afterwards (the state script saves it when
 * SIGTERM ends the command), so the backend's `cwd` stays right.
 */
export function killScript(stateDir: string, runId: string, graceMs: number): string {
  const { pidFile, killFile } = runFiles(stateDir, runId);
  const pf = shellQuote(pidFile);
  const cwdFile = shellQuote(statePaths(stateDir).cwdFile);
  const steps = Math.max(1, Math.ceil(graceMs / 100));
  return [
    `: > ${shellQuote(killFile)} 2>/dev/null`,
    // Is a live (non-zombie) process left in group $1? Orphaned zombies wait for init,
    // which may reap slowly, and \`kill -0\` counts them.
    `__alive() {`,
    `  kill -0 -- "-$1" 2>/dev/null || return 1`,
    `  [ -r /proc/self/stat ] || return 0`,
    `  local f st state`,
    `  for f in /proc/[0-9]*/stat; do`,
    `    { read -r st < "$f"; } 2>/dev/null || continue`,
    `    st=\${st##*) }; state=\${st%% *}; st=\${st#* }; st=\${st#* }`,
    `    if [ "\${st%% *}" = "$1" ] && [ "$state" != Z ] && [ "$state" != X ]; then return 0; fi`,
    `  done`,
    `  return 1`,
    `}`,
    `__kill() {`,
    `  [ -s ${pf} ] || return 0`,
    `  local pg i=0`,
    `  pg=$(cat ${pf} 2>/dev/null)`,
    `  case $pg in ''|*[!0-9]*) return 0 ;; esac`,
    `  [ "$pg" -gt 1 ] || return 0`,
    `  kill -TERM -- "-$pg" 2>/dev/null || return 0`,
    `  while [ $i -lt ${steps} ] && __alive "$pg"; do sleep 0.1; i=$((i + 1)); done`,
    `  if __alive "$pg"; then kill -KILL -- "-$pg" 2>/dev/null; fi`,
    `  return 0`,
    `}`,
    `__kill`,
    `rm -f ${pf}`,
    `if [ -f ${cwdFile} ]; then cat ${cwdFile}; fi`,
    `exit 0`,
  ].join("\n");
}

/** What the exit record said, and the side channel's other text (ssh's own messages). */
export interface ExitRecord {
  exitCode: number;
  /** The task's directory after the command; empty when the wrapper could not read it. */
  cwd: string;
}

/** Finds the exit record in the side channel's text; `rest` is everything else. */
export function parseSideChannel(text: string): { record?: ExitRecord; rest: string } {
  const pattern = new RegExp(`\\0${EXIT_RECORD_TAG} (\\d+) ([^\\0]*)\\0`);
  const match = pattern.exec(text);
  if (!match) return { rest: text };
  const rest = text.slice(0, match.index) + text.slice(match.index + match[0].length);
  return { record: { exitCode: Number(match[1]), cwd: match[2] ?? "" }, rest };
}

/** Does the side channel already hold a complete exit record? (Cheap check on raw bytes.) */
export function hasExitRecord(bytes: Uint8Array): boolean {
  // Uint8Array in the signature: the declarations need no @types/node (docs/packaging.md).
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const start = buffer.indexOf(`\0${EXIT_RECORD_TAG} `);
  return start >= 0 && buffer.indexOf(0, start + 1) > start;
}

/** ssh's stderr as one line: banner lines (`@@@@`) dropped, lines joined. */
export function sshMessage(stderr: string): string {
  return stderr
    .split(/\r?\n/)
    .map((line) => line.replace(/^@+\s*|\s*@+$/g, "").trim())
    .filter((line) => line !== "")
    .join(" ");
}

/** A plain-language hint for an ssh connection failure, from ssh's own message. */
export function connectionHint(message: string, options: SshOptions): string | undefined {
  if (/Host key verification failed|host key is known|REMOTE HOST IDENTIFICATION HAS CHANGED/i.test(message)) {
    const file = options.knownHostsFile ?? "~/.ssh/known_hosts";
    return (
      `the server's host key is not in ${file} or does not match it (strictHostKeyChecking: ${options.strictHostKeyChecking ?? "yes"}). ` +
      `Check the key out of band and add it (e.g. ssh-keyscan -p PORT HOST >> ${file}), or set strictHostKeyChecking to accept-new to trust a first-seen key.`
    );
  }
  if (/Load key|invalid format|bad permissions|UNPROTECTED PRIVATE KEY|Identity file .* not accessible/i.test(message)) {
    return "the identity file could not be used (missing, unreadable, wrong format or too open permissions; it must be mode 600).";
  }
  if (/Permission denied/i.test(message)) {
    return options.identityFile !== undefined
      ? `the server refused the key ${options.identityFile} for this user: is its public key in the remote ~/.ssh/authorized_keys?`
      : "the server refused every key offered: set identityFile to a key whose public half is in the remote ~/.ssh/authorized_keys.";
  }
  if (/Connection refused|Connection timed out|No route to host|Could not resolve hostname|Network is unreachable/i.test(message)) {
    return "is the host name and port right, and is sshd running there?";
  }
  return undefined;
}
