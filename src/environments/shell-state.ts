/**
 * Per-task shell state for backends that run each command in a fresh `bash`:
 * a state file (exported variables and the working directory) is sourced
 * before the command and rewritten after it, even when the command calls
 * `exit`. The command itself runs through `eval`, so `cd` and `export` act on
 * the shell that saves the state. The file lives inside the environment
 * (the local temp dir, the container, the remote host), so this works the
 * same on every backend.
 *
 * What carries from one command of a task to the next:
 * - the working directory (and `OLDPWD`, so `cd -` works across calls);
 * - exported variables: new ones, changed values, and `unset`s (a variable the
 *   task unset stays unset even though the backend's shell starts with it).
 *
 * What does not: shell options (`set -e`, `shopt`), non-exported variables,
 * functions, aliases, traps, `ulimit`s, the umask, background jobs.
 *
 * Details that matter:
 * - The user's command is passed as `$1` of the script (never spliced into its
 *   text) and run with `eval` after `set --`, so `$1`/`$@` inside it are empty as
 *   with a plain `bash -c`.
 * - Variables bash manages itself are never unset by the restore step: `PWD`,
 *   `OLDPWD`, `SHLVL`, `_`, `BASH*`, `SHELLOPTS`, the readonly `UID`/`EUID`/
 *   `PPID`/`GROUPS` and the dynamic ones (`RANDOM`, `SECONDS`, `LINENO`, ...).
 *   `PWD` comes from the `cd` into the saved directory, `OLDPWD` from the saved
 *   value (so `cd -` works), `SHLVL` stays the new shell's own.
 * - Saving and restoring start no program on bash >= 4 (builtins only: `export
 *   -p`, `printf`, `compgen -e`, `mapfile`), and files are overwritten in
 *   place rather than truncated (see the layout below). A state file that does
 *   not check out (a writer killed half-way, or read while another command of
 *   the same task writes it) is refused as a whole: the command starts from
 *   the initial state with a one-line notice on stderr
 *   (`mibyan: the saved shell state of this task could not be read; ...`).
 * - Restoring lists the exported variables with `compgen -e` into
 *   `<stateFile>.names`. A bash built without `compgen` still restores
 *   everything but `unset`s.
 * - The cwd file holds the directory as plain text (no newline); it is
 *   rewritten only when the directory changed.
 * - Readonly variables the task exported (`declare -rx`) come back readonly,
 *   with their other attributes (`-i`); bash's own readonly variables that a
 *   command exported (`export SHELLOPTS`) fail to restore quietly. Under
 *   `POSIXLY_CORRECT` (POSIX mode), such a failure would end the shell.
 * - When the saved working directory no longer exists (or is not accessible),
 *   the command runs in the first of: the environment's initial directory,
 *   `$HOME`, `/`, with a one-line notice on stderr
 *   (`mibyan: working directory X is not available; running in Y`);
 *   the task then stays there.
 * - A command that installs its own EXIT trap is fine when it ends normally
 *   (the state is saved right after `eval`); if it then calls `exit`, its trap
 *   replaced ours and that command's changes are not saved. `exec program`
 *   replaces the shell and saves nothing either.
 * - On a timeout or abort the group gets SIGTERM: bash runs the EXIT trap, so
 *   what the command changed before it was killed is saved. SIGKILL saves nothing.
 * - Commands of one task are meant to run one at a time: two running at once
 *   both save, and the last one to finish wins.
 */

/** Single-quotes a string for bash. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

export interface ShellStatePaths {
  /** The state file (sourced before, rewritten after every command). */
  stateFile: string;
  /** Where the final working directory is written after every command, as plain text (the backend reads it back to report `Environment.cwd`). */
  cwdFile: string;
}

export function statePaths(stateDir: string): ShellStatePaths {
  return { stateFile: `${stateDir}/state.sh`, cwdFile: `${stateDir}/cwd` };
}

export interface WrapCommandOptions {
  /** Working directory while the task has no state yet (and the first fallback when the saved one is gone). */
  initialCwd: string;
  /**
   * Runs this one command in another directory. The task's working directory
   * does not move (not even by a `cd` in the command); exported variables the
   * command sets still carry. When the directory cannot be entered the command
   * does not run: bash's `cd` error is printed and the exit code is 1.
   */
  cwdOverride?: string;
  /**
   * Save the command's changes (default true). `false` runs in the task's state
   * without changing it (for background commands that may outlive later ones).
   */
  saveState?: boolean;
  /**
   * Start with `exec 2>&1`, so the script and the command write stderr to
   * stdout in their real order without a launcher around bash (see
   * `spawnGroup`'s `mergeStderr: "program"`).
   */
  mergeStderr?: boolean;
}

/**
 * Names the restore step never unsets: bash sets them itself, some are readonly
 * (unsetting them fails, and in POSIX mode would abort the shell), others lose
 * their special meaning once unset. `__mibyan_*` are the wrapper's own.
 */
export const SHELL_STATE_SKIPPED_VARIABLES = [
  "PWD",
  "OLDPWD",
  "SHLVL",
  "_",
  "BASH",
  "BASH_*",
  "BASHOPTS",
  "BASHPID",
  "SHELLOPTS",
  "UID",
  "EUID",
  "PPID",
  "GROUPS",
  "HISTCMD",
  "LINENO",
  "RANDOM",
  "SRANDOM",
  "SECONDS",
  "EPOCHSECONDS",
  "EPOCHREALTIME",
  "FUNCNAME",
  "DIRSTACK",
  "PIPESTATUS",
  "COMP_*",
  "COPROC",
  "__mibyan_*",
] as const;

/**
 * The helpers every wrapped command starts with, and the restore step. Kept
 * free of the paths so the text is built once.
 *
 * State file layout (internal; only this script reads it):
 *
 *     #mibyan <token>
 *     {
 *     __mibyan_unset_exported
 *     declare -x NAME="value"      <- `export -p`
 *     __mibyan_dir=<%q>
 *     __mibyan_olddir=<%q>
 *     }
 *     #mibyan <token>
 *     <whatever an earlier, longer state left behind>
 *
 * Files are overwritten in place (`1<>`), never truncated: on ext4 a
 * truncate-and-rewrite costs milliseconds (delayed-allocation flush, discard),
 * which would be most of a short command's overhead. The restore step reads the
 * file, checks that the closing marker with the same token follows, and
 * evaluates only what lies before it; anything else (a torn write, a mix of an
 * old and a new state) is refused as a whole. It reads with `mapfile`, which
 * reads a regular file in blocks; `read -d ''` would make one system call per
 * byte (bash reads unbuffered for any delimiter but newline), about a
 * millisecond for a typical state. Bash 3 (no `mapfile`) still uses `read`.
 */
const PRELUDE = String.raw`__mibyan_unset_exported() {
  local __mibyan_n __mibyan_l
  { builtin compgen -e && builtin printf '#end\n'; } 1<> "$__mibyan_state.names" 2>/dev/null || return 0
  if (( BASH_VERSINFO[0] >= 4 )); then builtin mapfile -t __mibyan_l < "$__mibyan_state.names"; else local IFS=$'\n'; __mibyan_l=($(< "$__mibyan_state.names")); fi
  for __mibyan_n in "${"${"}__mibyan_l[@]}"; do
    case $__mibyan_n in
      '#end') break ;;
      ${SHELL_STATE_SKIPPED_VARIABLES.join("|")}) ;;
      *) builtin unset -v "$__mibyan_n" ;;
    esac
  done
}
__mibyan_save() {
  local __mibyan_ec=$? __mibyan_d __mibyan_o __mibyan_v
  [ -n "${"${"}__mibyan_saved-}" ] && return $__mibyan_ec
  __mibyan_saved=1
  set +e +u
  if [ -n "${"${"}__mibyan_taskdir+x}" ]; then
    __mibyan_d=$__mibyan_taskdir; __mibyan_o=$__mibyan_taskold
  else
    __mibyan_d=$PWD; __mibyan_o=${"${"}OLDPWD-}
    if ! [ "$__mibyan_d" -ef . ]; then __mibyan_v=$(builtin pwd -P 2>/dev/null) && [ -n "$__mibyan_v" ] && __mibyan_d=$__mibyan_v; fi
  fi
  __mibyan_v="#mibyan $$.${"${"}EPOCHREALTIME-}.$RANDOM.$RANDOM"
  {
    builtin printf '%s\n{\n__mibyan_unset_exported\n' "$__mibyan_v"
    builtin export -p
    builtin printf '__mibyan_dir=%q\n__mibyan_olddir=%q\n}\n%s\n' "$__mibyan_d" "$__mibyan_o" "$__mibyan_v"
  } 1<> "$__mibyan_state"
  if [ "${"${"}__mibyan_dir-}" != "$__mibyan_d" ] || ! [ -f "$__mibyan_cwdfile" ]; then
    builtin printf '%s' "$__mibyan_d" >| "$__mibyan_cwdfile"
  fi
  return $__mibyan_ec
}
__mibyan_lvl=$SHLVL
if [ -f "$__mibyan_state" ]; then
  __mibyan_s=
  if (( BASH_VERSINFO[0] >= 4 )); then
    builtin mapfile -t __mibyan_l < "$__mibyan_state"
    builtin printf -v __mibyan_s '%s\n' "${"${"}__mibyan_l[@]}"
    unset -v __mibyan_l
  else
    IFS= builtin read -r -d '' __mibyan_s < "$__mibyan_state"
  fi
  __mibyan_v=${"${"}__mibyan_s%%$'\n'*}
  case $__mibyan_v in
    '#mibyan '?*)
      case $__mibyan_s in
        *$'\n'"$__mibyan_v"$'\n'*) builtin eval "${"${"}__mibyan_s%%$'\n'"$__mibyan_v"$'\n'*}" >/dev/null 2>&1 ;;
      esac ;;
  esac
  SHLVL=$__mibyan_lvl
  if [ -z "${"${"}__mibyan_dir+x}" ]; then
    builtin printf '%s\n' 'mibyan: the saved shell state of this task could not be read; starting from the initial state' >&2
  fi
  unset -v __mibyan_s
fi
__mibyan_target=${"${"}__mibyan_dir-$__mibyan_initial}
if ! builtin cd -- "$__mibyan_target" 2>/dev/null; then
  for __mibyan_v in "$__mibyan_initial" "${"${"}HOME-}" /; do
    [ -n "$__mibyan_v" ] && builtin cd -- "$__mibyan_v" 2>/dev/null && break
  done
  builtin printf 'mibyan: working directory %s is not available; running in %s\n' "$__mibyan_target" "$PWD" >&2
fi
[ -n "${"${"}__mibyan_olddir+x}" ] && OLDPWD=$__mibyan_olddir
__mibyan_cmd=$1
set --`;

/**
 * The `WrapCommandOptions` of one `Environment.exec` call: the task's initial
 * directory, and the call's own `cwd` and `saveState`.
 */
export function wrapOptionsFor(initialCwd: string, options: { cwd?: string; saveState?: boolean }): WrapCommandOptions {
  const wrap: WrapCommandOptions = { initialCwd };
  if (options.cwd !== undefined) wrap.cwdOverride = options.cwd;
  if (options.saveState === false) wrap.saveState = false;
  return wrap;
}

/**
 * The bash script that runs `command` in the task's state. `initialCwd` is used
 * while the task has no state yet; `cwdOverride` runs this one command
 * elsewhere without moving the task. The user's command is passed as `$1` of
 * the script (never spliced into its text), so no quoting of it is needed:
 *
 *     bash -c "$(wrapCommand(paths, { initialCwd }))" bash "$command"
 */
export function wrapCommand(paths: ShellStatePaths, options: WrapCommandOptions): string {
  const lines = [
    ...(options.mergeStderr ? ["exec 2>&1"] : []),
    `__mibyan_state=${shellQuote(paths.stateFile)}`,
    `__mibyan_cwdfile=${shellQuote(paths.cwdFile)}`,
    `__mibyan_initial=${shellQuote(options.initialCwd)}`,
    PRELUDE,
  ];
  if (options.cwdOverride !== undefined) {
    // The task's directory is what the saved state gets, whatever the command does.
    lines.push(
      `__mibyan_taskdir=$PWD; __mibyan_taskold=\${OLDPWD-}`,
      `builtin cd -- ${shellQuote(options.cwdOverride)} || exit 1`,
    );
  }
  if (options.saveState === false) {
    lines.push(`eval "$__mibyan_cmd"`);
  } else {
    lines.push(`trap '{ __mibyan_save; } 2>/dev/null' EXIT`, `eval "$__mibyan_cmd"`, `{ __mibyan_save; } 2>/dev/null`);
  }
  return lines.join("\n");
}
