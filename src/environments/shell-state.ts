/**
 * Per-task shell state for backends that run each command in a fresh `bash`:
 * a state file (exported variables and the working directory) is sourced
 * before the command and rewritten after it, even when the command calls
 * `exit`. The command itself runs through `eval`, so `cd` and `export` act on
 * the shell that saves the state. The file lives inside the environment
 * (the local temp dir, the container, the remote host), so this works the
 * same on every backend.
 */

/** Single-quotes a string for bash. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

export interface ShellStatePaths {
  /** The state file (sourced before, rewritten after every command). */
  stateFile: string;
  /** Where the final working directory is written (read back by `readCwd`). */
  cwdFile: string;
}

export function statePaths(stateDir: string): ShellStatePaths {
  return { stateFile: `${stateDir}/state.sh`, cwdFile: `${stateDir}/cwd` };
}

/**
 * The bash script that runs `command` in the task's state. `initialCwd` is used
 * while the task has no state yet; `cwdOverride` runs this one command
 * elsewhere without moving the task. The user's command is passed as `$1` of
 * the script (never spliced into its text), so no quoting of it is needed.
 */
export function wrapCommand(paths: ShellStatePaths, options: { initialCwd: string; cwdOverride?: string }): string {
  const state = shellQuote(paths.stateFile);
  const cwdFile = shellQuote(paths.cwdFile);
  const lines = [
    `__mibyan_save() { local ec=$?; { export -p; printf 'cd -- %q\\n' "$PWD"; } > ${state}.tmp 2>/dev/null && mv -f ${state}.tmp ${state}; printf '%s' "$PWD" > ${cwdFile} 2>/dev/null; return $ec; }`,
    `if [ -f ${state} ]; then . ${state} >/dev/null 2>&1; else cd -- ${shellQuote(options.initialCwd)} 2>/dev/null; fi`,
  ];
  if (options.cwdOverride !== undefined) {
    // A one-off directory: saved state must not pick it up, so saving is skipped for this command.
    lines.push(`cd -- ${shellQuote(options.cwdOverride)} || exit 1`, `eval "$1"`);
  } else {
    lines.push(`trap __mibyan_save EXIT`, `eval "$1"`);
  }
  return lines.join("\n");
}
