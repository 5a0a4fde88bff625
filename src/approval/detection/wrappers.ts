/**
 * Wrappers: commands that run another command (`sudo`, `env`, `timeout`,
 * `xargs`, `ssh host …`, `docker exec`, …). The table says how to skip each
 * one's options and operands to reach the command it runs; `unwrapOnce` does
 * one step and the engine repeats it.
 */
import { staticArg, type Arg } from "./model.js";
import type { OptionSpec } from "./options.js";
import { parseArgs } from "./parse-args.js";
import { basename } from "./words.js";

export interface WrapperSpec {
  /** Its options (parsed `posix`-style: the first operand ends them). */
  options: OptionSpec;
  /** Operands before the command (`timeout DURATION`, `chroot DIR`, `ssh HOST`, `docker exec CONTAINER`). */
  skip?: number;
  /** `NAME=VALUE` operands may come before the command (`env`, `sudo`). */
  assignments?: boolean;
  /** A canonical option whose value is a shell script (`su -c`, `flock -c`, `script -c`). */
  scriptOption?: string;
  /** The command words are joined with spaces and run by a shell (`ssh host a b`, `watch a b`, `eval a b`). */
  join?: boolean;
  /** ...unless this canonical option is given (`watch -x` runs argv directly). */
  joinUnless?: string;
  /** Runs the command as another user; with no command (or `rootShellOptions`) it opens a root shell. */
  privileged?: boolean;
  rootShellOptions?: readonly string[];
  /** Canonical options after which nothing is run (`command -v`, `sudo -l`). */
  noRun?: readonly string[];
  /** With no command the remote or inner shell reads its script from stdin (`ssh host <<EOF`). */
  stdinShell?: boolean;
  /** The command comes only after `--` (`kubectl exec POD -- CMD`). */
  afterDoubleDash?: boolean;
  /** The command when none is given (`xargs` → `echo`). */
  defaultCommand?: readonly string[];
  /** `xargs`: the input is appended to (or replaces `-I` in) the command. */
  xargs?: boolean;
  /** A canonical option that turns the command into `sudoedit` of the operands (`sudo -e`). */
  editOption?: string;
  /** With no command it opens a shell as the target user (`pkexec`). */
  noCommandIsShell?: boolean;
  /** After the skipped operands, `-c CMD` may follow (`flock FILE -c CMD`, `sg GROUP -c CMD`). */
  trailingScriptOption?: boolean;
  /** The command starts after one of these words (`nix develop .#x -c CMD`); without one nothing is run. */
  commandAfter?: readonly string[];
  /** When the first operand is one of these it is the program's own subcommand, not a command it runs (`yarn add`). */
  ownSubcommands?: ReadonlySet<string>;
  /** `coproc [NAME] { …; }`: a name may come before a brace group. */
  namedGroup?: boolean;
}

/** Options of the package runners that take a value (`npx -p PKG`, `uvx --from X`). */
const RUNNER_OPTIONS = {
  style: "posix" as const,
  flags: "yqc",
  values: "pw",
  long: ["yes", "no", "quiet", "ignore-existing", "offline", "prefer-offline", "isolated", "no-project", "frozen", "locked", "no-sync", "all-extras", "verbose"],
  longValues: ["package", "call", "node-options", "workspace", "from", "with", "with-requirements", "python", "project", "directory", "env-file", "group", "extra", "index-url", "spec", "shell-mode"],
  canonical: { "--package": "-p", "--call": "-c" },
};

const YARN_COMMANDS = new Set(["add", "install", "i", "remove", "rm", "upgrade", "up", "update", "run", "test", "t", "init", "info", "why", "workspace", "workspaces", "dlx", "exec", "set", "config", "cache", "global", "link", "unlink", "pack", "publish", "version", "outdated", "audit", "bin", "node", "plugin", "constraints", "dedupe", "explain", "npm", "patch", "patch-commit", "rebuild", "search", "stage", "unplug", "login", "logout", "licenses", "list", "ls", "owner", "tag", "team", "check", "import", "create", "help", "policies", "store", "env", "setup", "root", "prune", "fetch", "deploy", "recursive", "start", "create", "c", "licenses", "doctor", "server", "self-update", "catalog"]);

const SUDO: WrapperSpec = {
  options: {
    style: "posix",
    flags: "AbEeHiKklnPSsVvBN",
    values: "CDghpRrTtUu",
    long: ["askpass", "background", "bell", "edit", "help", "login", "remove-timestamp", "reset-timestamp", "list", "non-interactive", "preserve-groups", "stdin", "shell", "validate", "version", "set-home"],
    longValues: ["close-from", "chdir", "group", "host", "prompt", "chroot", "role", "type", "command-timeout", "other-user", "user"],
    longOptional: ["preserve-env"],
    canonical: { "--login": "-i", "--shell": "-s", "--edit": "-e", "--list": "-l", "--validate": "-v", "--user": "-u", "--group": "-g", "--help": "-h", "--version": "-V", "--reset-timestamp": "-k", "--remove-timestamp": "-K", "--non-interactive": "-n" },
  },
  assignments: true,
  privileged: true,
  rootShellOptions: ["-i", "-s"],
  noRun: ["-l", "-v", "-k", "-K", "-V", "-h"],
  editOption: "-e",
};

const SU: WrapperSpec = {
  options: {
    flags: "lmpfP",
    values: "cgGsw",
    long: ["login", "preserve-environment", "pty", "fast", "help", "version"],
    longValues: ["command", "session-command", "group", "supp-group", "shell", "whitelist-environment"],
    canonical: { "--command": "-c", "--session-command": "-c", "--login": "-l", "-m": "-p", "--preserve-environment": "-p", "--shell": "-s" },
  },
  scriptOption: "-c",
  privileged: true,
  noRun: ["--help", "--version"],
};

const PLAIN: WrapperSpec = { options: { style: "posix" } };

/** `tmux new-session`, `new-window`, `split-window` options; the command is what follows them. */
const TMUX_NEW = { style: "posix" as const, flags: "AdDEhPvbfIZ", values: "cefFnstxyXlpT" };

export const WRAPPERS: Readonly<Record<string, WrapperSpec>> = {
  sudo: SUDO,
  doas: { options: { style: "posix", flags: "nsL", values: "uC" }, privileged: true, rootShellOptions: ["-s"], noRun: ["-L", "-C"] },
  su: SU,
  pkexec: { options: { style: "posix", long: ["disable-internal-agent", "keep-cwd", "help", "version"], longValues: ["user"] }, privileged: true, noCommandIsShell: true },
  runuser: {
    options: { flags: "lmpfP", values: "cgGsuw", long: ["login", "preserve-environment", "pty"], longValues: ["command", "session-command", "group", "supp-group", "shell", "user", "whitelist-environment"], canonical: { "--command": "-c", "--session-command": "-c", "--user": "-u" } },
    scriptOption: "-c",
    privileged: true,
  },
  gosu: { options: PLAIN.options, skip: 1, privileged: true },
  "su-exec": { options: PLAIN.options, skip: 1, privileged: true },
  "s6-setuidgid": { options: PLAIN.options, skip: 1 },
  setpriv: { options: { style: "posix", flags: "dh", long: ["clear-groups", "keep-groups", "init-groups", "reset-env", "no-new-privs", "dump"], longValues: ["reuid", "regid", "ruid", "rgid", "euid", "egid", "groups", "inh-caps", "ambient-caps", "bounding-set", "securebits", "pdeathsig", "selinux-label", "apparmor-profile", "landlock-access", "landlock-rule"] } },
  sg: { options: { style: "posix", values: "c" }, skip: 1, scriptOption: "-c", trailingScriptOption: true, join: true },
  env: {
    options: {
      style: "posix",
      flags: "i0v",
      values: "uCS",
      long: ["ignore-environment", "null", "debug", "help", "version", "list-signal-handling"],
      longValues: ["unset", "chdir", "split-string"],
      longOptional: ["default-signal", "ignore-signal", "block-signal"],
      canonical: { "--ignore-environment": "-i", "--unset": "-u", "--chdir": "-C", "--split-string": "-S", "--null": "-0", "--debug": "-v" },
    },
    assignments: true,
    scriptOption: "-S",
    noRun: ["--help", "--version"],
  },
  nice: { options: { style: "posix", values: "n", numeric: true, longValues: ["adjustment"], canonical: { "--adjustment": "-n" } } },
  nohup: PLAIN,
  setsid: { options: { style: "posix", flags: "cfw", long: ["ctty", "fork", "wait"] } },
  timeout: { options: { style: "posix", flags: "v", values: "ks", long: ["preserve-status", "foreground", "verbose"], longValues: ["kill-after", "signal"] }, skip: 1 },
  time: { options: { style: "posix", flags: "pqvaV", values: "fo", long: ["portability", "verbose", "append", "quiet"], longValues: ["format", "output"] } },
  command: { options: { style: "posix", flags: "pvV" }, noRun: ["-v", "-V"] },
  builtin: PLAIN,
  exec: { options: { style: "posix", flags: "cl", values: "a" } },
  coproc: { options: { style: "posix" }, namedGroup: true },
  busybox: PLAIN,
  toybox: PLAIN,
  xargs: {
    options: {
      style: "posix",
      flags: "0prtxo",
      values: "aEdILnPs",
      optionalValues: "eil",
      long: ["null", "interactive", "no-run-if-empty", "verbose", "exit", "open-tty", "show-limits"],
      longValues: ["arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"],
      longOptional: ["eof", "replace", "max-lines"],
      canonical: { "--null": "-0", "--arg-file": "-a", "--delimiter": "-d", "--replace": "-I", "-i": "-I", "--max-args": "-n", "--max-procs": "-P", "--max-lines": "-L", "-l": "-L", "--interactive": "-p", "--no-run-if-empty": "-r", "--verbose": "-t" },
    },
    defaultCommand: ["echo"],
    xargs: true,
    noRun: ["--show-limits"],
  },
  stdbuf: { options: { style: "posix", values: "ioe", longValues: ["input", "output", "error"] } },
  chroot: { options: { style: "posix", long: ["skip-chdir"], longValues: ["userspec", "groups"] }, skip: 1, defaultCommand: ["sh", "-i"] },
  flock: {
    options: { style: "posix", flags: "sexunoFvh", values: "wEc", long: ["shared", "exclusive", "unlock", "nonblock", "close", "no-fork", "verbose"], longValues: ["timeout", "conflict-exit-code", "command", "wait"], canonical: { "--command": "-c", "--timeout": "-w" } },
    skip: 1,
    scriptOption: "-c",
    trailingScriptOption: true,
  },
  ionice: { options: { style: "posix", flags: "t", values: "cnpPu", long: ["ignore"], longValues: ["class", "classdata", "pid", "pgid", "uid"] }, noRun: ["-p", "-P", "-u"] },
  chrt: { options: { style: "posix", flags: "abdefiormv", values: "TPD", long: ["all-tasks", "batch", "deadline", "fifo", "idle", "other", "rr", "reset-on-fork", "verbose", "max"] }, skip: 1, noRun: ["-p", "-m"] },
  taskset: { options: { style: "posix", flags: "acp", long: ["all-tasks", "cpu-list", "pid"] }, skip: 1, noRun: ["-p"] },
  numactl: { options: { style: "posix", flags: "asH", values: "CcmNpPil", long: ["all", "show", "hardware", "localalloc"], longValues: ["cpunodebind", "physcpubind", "membind", "preferred", "interleave"] } },
  watch: {
    options: { style: "posix", flags: "bcdeEgtxpwr", values: "nqs", long: ["beep", "color", "errexit", "exec", "chgexit", "no-title", "precise", "no-linewrap", "no-rerun"], longValues: ["interval", "equexit"], longOptional: ["differences"], canonical: { "--exec": "-x", "--interval": "-n" } },
    join: true,
    joinUnless: "-x",
  },
  ssh: {
    options: { style: "posix", flags: "46AaCfGgKkMNnqsTtVvXxYy", values: "BbcDEeFIiJLlmOoPpQRSWw" },
    skip: 1,
    join: true,
    stdinShell: true,
    noRun: ["-N", "-V", "-G", "-Q"],
  },
  strace: { options: { style: "posix", flags: "cCdDfFhiqrtTvVwxyYzZk", values: "aeoOpPsSuEXIbU" }, noRun: ["-p"] },
  ltrace: { options: { style: "posix", flags: "bcCfhiLrStTV", values: "aAeFlnopsuwx" }, noRun: ["-p"] },
  unbuffer: { options: { style: "posix", flags: "p" } },
  proxychains: { options: { style: "posix", flags: "q", values: "f" } },
  proxychains4: { options: { style: "posix", flags: "q", values: "f" } },
  torsocks: { options: { style: "posix", flags: "6diqh", values: "uPpaT", long: ["shell"] } },
  tsocks: PLAIN,
  catchsegv: PLAIN,
  fakeroot: { options: { style: "posix", values: "sil", long: ["unknown-is-real"], longValues: ["lib", "faked"] } },
  fakechroot: PLAIN,
  "xvfb-run": { options: { style: "posix", flags: "ah", values: "efnps", long: ["auto-servernum"], longValues: ["error-file", "server-args", "server-num", "xauth-protocol", "auth-file"] } },
  caffeinate: { options: { style: "posix", flags: "dimsu", values: "tw" } },
  arch: { options: { style: "posix", long: ["x86_64", "arm64", "arm64e", "i386", "32", "64"] } },
  tini: { options: { style: "posix", flags: "svgwlh", values: "pe" } },
  "dumb-init": { options: { style: "posix", flags: "cvV", values: "r", long: ["single-child", "verbose"], longValues: ["rewrite"] } },
  script: { options: { style: "posix", flags: "aefqkT", values: "cEIOBt", long: ["append", "return", "flush", "force", "quiet", "log-timing"], longValues: ["command", "echo", "log-in", "log-out", "log-io", "logging-format", "output-limit", "timing"], canonical: { "--command": "-c" } }, scriptOption: "-c" },
  eval: { options: { style: "posix" }, join: true },
  "docker exec": { options: { flags: "dit", values: "euw", long: ["detach", "interactive", "tty", "privileged"], longValues: ["env", "env-file", "user", "workdir", "detach-keys"], style: "posix" }, skip: 1, stdinShell: false },
  "podman exec": { options: { flags: "dit", values: "euw", long: ["detach", "interactive", "tty", "privileged"], longValues: ["env", "env-file", "user", "workdir", "detach-keys"], style: "posix" }, skip: 1 },
  "docker compose exec": { options: { flags: "dT", values: "euw", long: ["detach", "privileged", "no-TTY", "no-tty"], longValues: ["env", "user", "workdir", "index"], style: "posix" }, skip: 1 },
  "docker-compose exec": { options: { flags: "dT", values: "euw", long: ["detach", "privileged", "no-TTY", "no-tty"], longValues: ["env", "user", "workdir", "index"], style: "posix" }, skip: 1 },
  "kubectl exec": { options: { flags: "itq", values: "cfn", long: ["stdin", "tty", "quiet"], longValues: ["container", "filename", "namespace", "context", "pod-running-timeout", "kubeconfig"] }, afterDoubleDash: true },
  "oc exec": { options: { flags: "itq", values: "cfn", long: ["stdin", "tty", "quiet"], longValues: ["container", "filename", "namespace", "context", "pod-running-timeout", "kubeconfig"] }, afterDoubleDash: true },
  "git submodule": { options: { style: "posix", flags: "q", long: ["quiet", "recursive"] }, join: true },
  "git bisect": { options: { style: "posix" } },
  unshare: {
    options: { style: "posix", flags: "muinpUCTrfc", long: ["mount", "uts", "ipc", "net", "pid", "user", "cgroup", "time", "fork", "kill-child", "mount-proc", "map-root-user", "map-current-user", "map-auto", "keep-caps"], longValues: ["propagation", "setgroups", "root", "wd", "setuid", "setgid", "map-user", "map-group", "monotonic", "boottime", "load-interp"] },
    defaultCommand: ["sh"],
  },
  nsenter: {
    options: { style: "posix", flags: "amuinpUCTFZr", values: "tSGwe", long: ["all", "mount", "uts", "ipc", "net", "pid", "user", "cgroup", "time", "no-fork", "preserve-credentials", "follow-context"], longValues: ["target", "setuid", "setgid", "root", "wd", "env"] },
    defaultCommand: ["sh"],
  },
  valgrind: { options: { style: "posix", flags: "hvqd", long: ["help", "version", "quiet", "verbose", "trace-children"] } },
  "systemd-run": {
    options: { style: "posix", flags: "rqGSPt", values: "pEuMHd", long: ["user", "system", "scope", "remain-after-exit", "quiet", "wait", "pipe", "pty", "no-block", "collect", "shell", "same-dir", "no-ask-password"], longValues: ["unit", "property", "description", "slice", "uid", "gid", "nice", "working-directory", "setenv", "on-active", "on-boot", "on-calendar", "timer-property", "service-type", "host", "machine"] },
    privileged: true,
  },
  firejail: { options: { style: "posix", long: ["quiet", "noprofile", "private", "net=none", "debug", "noroot", "x11", "seccomp", "caps.drop=all"] } },
  entr: { options: { style: "posix", flags: "acdnprsz" } },
  npx: { options: RUNNER_OPTIONS, scriptOption: "-c" },
  pnpx: { options: RUNNER_OPTIONS },
  bunx: { options: RUNNER_OPTIONS },
  uvx: { options: RUNNER_OPTIONS },
  "npm exec": { options: RUNNER_OPTIONS, scriptOption: "-c" },
  "npm x": { options: RUNNER_OPTIONS, scriptOption: "-c" },
  "pnpm exec": { options: RUNNER_OPTIONS },
  "pnpm dlx": { options: RUNNER_OPTIONS },
  "yarn exec": { options: RUNNER_OPTIONS },
  "yarn dlx": { options: RUNNER_OPTIONS },
  "uv run": { options: RUNNER_OPTIONS },
  "poetry run": { options: RUNNER_OPTIONS },
  "pipenv run": { options: RUNNER_OPTIONS },
  "pipx run": { options: RUNNER_OPTIONS },
  "bundle exec": { options: RUNNER_OPTIONS },
  "conda run": { options: { style: "posix", values: "np", long: ["no-capture-output", "live-stream"], longValues: ["name", "prefix", "cwd"] } },
  "mise exec": { options: { style: "posix" }, afterDoubleDash: true },
  "mise x": { options: { style: "posix" }, afterDoubleDash: true },
  "direnv exec": { options: { style: "posix" }, skip: 1 },
  "nix develop": { options: { style: "posix" }, commandAfter: ["-c", "--command"] },
  "nix shell": { options: { style: "posix" }, commandAfter: ["-c", "--command"] },
  "nix-shell": { options: { style: "posix", flags: "ApQ", values: "IE", long: ["pure", "impure"], longValues: ["run", "command", "attr", "arg", "argstr", "packages", "include"], canonical: { "--command": "--run" } }, scriptOption: "--run" },
  "doppler run": { options: { style: "posix", values: "pc", longValues: ["project", "config", "token", "command", "mount"], canonical: { "--command": "-C" } }, scriptOption: "-C" },
  "op run": { options: { style: "posix", long: ["no-masking"], longValues: ["env-file", "account"] } },
  "infisical run": { options: { style: "posix", longValues: ["env", "path", "projectId", "token", "command"] }, scriptOption: "--command" },
  "dotenvx run": { options: { style: "posix", values: "f", longValues: ["env-file", "env"] } },
  "aws-vault exec": { options: { style: "posix", flags: "n", long: ["no-session", "server", "ec2-server", "ecs-server", "json", "stdout"], longValues: ["duration", "region", "mfa-token", "prompt"] }, skip: 1 },
  dotenv: { options: { style: "posix", values: "ecv", long: ["debug", "override"] } },
  "env-cmd": { options: { style: "posix", values: "fre", long: ["silent", "use-shell", "expand-envs", "verbose", "no-override"], longValues: ["file", "rc-file", "environments"] } },
  "cross-env": { options: { style: "posix" }, assignments: true },
  sshpass: { options: { style: "posix", flags: "ev", values: "pfdP" } },
  yarn: { options: { style: "posix", long: ["silent", "verbose", "offline", "frozen-lockfile"], longValues: ["cwd", "mutex"] }, ownSubcommands: YARN_COMMANDS },
  pnpm: { options: { style: "posix", flags: "r", long: ["silent", "recursive", "filter"], longValues: ["dir", "filter", "workspace-root"], canonical: { "--dir": "-C" } }, ownSubcommands: YARN_COMMANDS },
  "tmux new-session": { options: TMUX_NEW, join: true },
  "tmux new": { options: TMUX_NEW, join: true },
  "tmux new-window": { options: TMUX_NEW, join: true },
  "tmux neww": { options: TMUX_NEW, join: true },
  "tmux split-window": { options: TMUX_NEW, join: true },
  "tmux splitw": { options: TMUX_NEW, join: true },
  "tmux respawn-pane": { options: TMUX_NEW, join: true },
  "tmux respawn-window": { options: TMUX_NEW, join: true },
  "tmux run-shell": { options: { style: "posix", flags: "bC", values: "dtc" }, join: true },
  "tmux run": { options: { style: "posix", flags: "bC", values: "dtc" }, join: true },
  "tmux send-keys": { options: { style: "posix", flags: "FHKlMRX", values: "Nt" }, join: true },
  "tmux send": { options: { style: "posix", flags: "FHKlMRX", values: "Nt" }, join: true },
  screen: { options: { style: "posix", flags: "aAdDmrRilLOqUxfnhv", values: "SpcehstTX" } },
};

/** Wrappers whose command starts after a subcommand (`git submodule foreach CMD`): the subcommand word that must follow. */
const SUBCOMMAND_GATE: Readonly<Record<string, string>> = { "git submodule": "foreach", "git bisect": "run" };

export type UnwrapStep =
  /** The wrapper runs this command (argv, program first). */
  | { kind: "command"; args: Arg[]; label: string; assignments: Arg[]; privileged: boolean; xargs: { replace: string | null } | null }
  /** The wrapper runs this text with a shell. */
  | { kind: "script"; script: Arg; label: string; assignments: Arg[]; privileged: boolean }
  /** The wrapper runs nothing analysable further: a lookup (`command -v`), or an interactive shell (`rootShell`), or a shell reading stdin. */
  | { kind: "none"; label: string; rootShell: boolean; stdinShell: boolean; privileged: boolean; assignments: Arg[] };

function join(args: readonly Arg[]): Arg {
  const out: Arg = {
    value: args.map((a) => a.value).join(" "),
    static: args.every((a) => a.static),
    splittable: false,
    word: args.length === 1 ? args[0]!.word : null,
  };
  if (args.some((a) => a.network)) out.network = true;
  if (args.some((a) => a.decoded)) out.decoded = true;
  return out;
}

const ASSIGNMENT_RE = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** Programs whose wrapper entries sit behind a subcommand (`docker exec`, `git submodule`). */
const SUBCOMMAND_WRAPPERS: ReadonlySet<string> = new Set(["docker", "podman", "docker-compose", "kubectl", "oc", "git", "npm", "pnpm", "yarn", "uv", "poetry", "pipenv", "pipx", "bundle", "conda", "mise", "direnv", "nix", "doppler", "op", "infisical", "dotenvx", "aws-vault", "tmux"]);

/** Per program, the words that select a wrapper subcommand (`docker` → exec, compose …). */
const SUBCOMMAND_WORDS = new Map<string, Set<string>>();
for (const k of Object.keys(WRAPPERS)) {
  if (!k.includes(" ")) continue;
  const program = k.slice(0, k.indexOf(" "));
  let words = SUBCOMMAND_WORDS.get(program);
  if (!words) SUBCOMMAND_WORDS.set(program, (words = new Set()));
  for (const w of k.split(" ").slice(1)) words.add(w);
}

export interface WrapperKey {
  key: string;
  /** Index in argv where the wrapper's own arguments start (after the program and its subcommand words). */
  start: number;
}

/** The wrapper table entry for this argv, or undefined when it is not a wrapper. */
export function wrapperKey(program: string, args: readonly Arg[]): WrapperKey | undefined {
  const plain = WRAPPERS[program] ? { key: program, start: 1 } : undefined;
  if (!SUBCOMMAND_WRAPPERS.has(program)) return plain;
  // Cheap test first: none of the subcommand words is there (`git log …`).
  const words = SUBCOMMAND_WORDS.get(program);
  let candidate = false;
  if (words) for (let i = 1; i < args.length && !candidate; i++) if (words.has(args[i]!.value)) candidate = true;
  if (!candidate) return plain;
  const parsed = parseArgs(program, args.slice(1));
  for (let n = Math.min(parsed.subcommands.length, 2); n >= 1; n--) {
    const key = `${program} ${parsed.subcommands.slice(0, n).join(" ")}`;
    if (!WRAPPERS[key]) continue;
    // The wrapper's arguments start after the n-th subcommand word.
    let found = 0;
    for (let i = 1; i < args.length; i++) {
      if (args[i]!.static && args[i]!.value === parsed.subcommands[found]) {
        found++;
        if (found === n) return { key, start: i + 1 };
      }
    }
  }
  return plain;
}

/**
 * One unwrapping step for `args` (program first). `key` comes from `wrapperKey`.
 */
export function unwrapOnce(where: WrapperKey, args: readonly Arg[]): UnwrapStep {
  const key = where.key;
  const spec = WRAPPERS[key]!;
  const program = basename(args[0]!.value);
  const rest = args.slice(where.start);
  const parsed = parseArgs(program, rest, spec.options);
  const label = key;
  const privileged = spec.privileged ?? false;
  const noRun = spec.noRun?.some((o) => parsed.options.has(o)) ?? false;
  if (noRun) return { kind: "none", label, rootShell: false, stdinShell: false, privileged, assignments: [] };

  let operands: Arg[];
  if (spec.afterDoubleDash) {
    const dd = rest.findIndex((a) => a.static && a.value === "--");
    operands = dd >= 0 ? rest.slice(dd + 1) : parsed.operands.slice(1);
  } else {
    operands = parsed.operands;
  }
  const gate = SUBCOMMAND_GATE[key];
  if (gate !== undefined) {
    if (operands[0]?.value !== gate) return { kind: "none", label, rootShell: false, stdinShell: false, privileged, assignments: [] };
  }
  if (gate !== undefined) {
    operands = operands.slice(1);
    while (operands.length > 0 && operands[0]!.static && operands[0]!.value.startsWith("-")) operands = operands.slice(1);
  }
  if (spec.commandAfter) {
    const at = rest.findIndex((a) => a.static && spec.commandAfter!.includes(a.value));
    if (at < 0) return { kind: "none", label, rootShell: false, stdinShell: false, privileged, assignments: [] };
    operands = rest.slice(at + 1);
  }
  if (spec.ownSubcommands && operands[0] && (!operands[0].static || spec.ownSubcommands.has(operands[0].value))) {
    return { kind: "none", label, rootShell: false, stdinShell: false, privileged, assignments: [] };
  }
  // `coproc NAME { …; }`: the name is not a command.
  if (spec.namedGroup && operands.length > 1 && (operands[1]!.value === "{" || operands[1]!.value === "(")) operands = operands.slice(1);
  operands = operands.slice(spec.skip ?? 0);
  if (spec.trailingScriptOption && operands.length >= 2 && (operands[0]!.value === "-c" || operands[0]!.value === "--command")) {
    return { kind: "script", script: operands[1]!, label: `${label} -c`, assignments: [], privileged };
  }
  const assignments: Arg[] = [];
  if (spec.assignments) {
    let i = 0;
    while (i < operands.length && ASSIGNMENT_RE.test(operands[i]!.value)) assignments.push(operands[i++]!);
    operands = operands.slice(i);
    // `env -` is `env -i`.
    if (program === "env" && operands[0]?.value === "-") operands = operands.slice(1);
  }

  if (spec.scriptOption) {
    const values = parsed.options.get(spec.scriptOption);
    const script = values?.[values.length - 1];
    if (script) {
      // `env -S 'a b' c` splits the string into words; `sg GROUP -c CMD`, `su -c CMD`, `flock F -c CMD`.
      const text = program === "env" && operands.length > 0 ? join([script, ...operands]) : script;
      return { kind: "script", script: text, label: `${label} ${spec.scriptOption}`, assignments, privileged };
    }
  }
  if (spec.editOption && parsed.options.has(spec.editOption)) {
    return { kind: "command", args: [staticArg("sudoedit"), ...operands], label, assignments, privileged, xargs: null };
  }
  if (program === "su" || program === "runuser") {
    // `runuser -u USER -- CMD`; otherwise su/runuser without -c open a shell.
    if (program === "runuser" && parsed.options.has("-u") && operands.length > 0) {
      return { kind: "command", args: operands, label, assignments, privileged, xargs: null };
    }
    return { kind: "none", label, rootShell: true, stdinShell: true, privileged, assignments };
  }
  if (operands.length === 0) {
    if (spec.defaultCommand) {
      if (spec.xargs) {
        const replace = parsed.options.get("-I")?.[0]?.value ?? (parsed.options.has("-I") ? "{}" : null);
        return { kind: "command", args: spec.defaultCommand.map(staticArg), label, assignments, privileged, xargs: { replace } };
      }
      return { kind: "command", args: spec.defaultCommand.map(staticArg), label, assignments, privileged, xargs: null };
    }
    const rootShell = privileged && ((spec.noCommandIsShell ?? false) || (spec.rootShellOptions?.some((o) => parsed.options.has(o)) ?? false));
    return { kind: "none", label, rootShell, stdinShell: spec.stdinShell ?? false, privileged, assignments };
  }
  if (spec.join && !(spec.joinUnless && parsed.options.has(spec.joinUnless))) {
    return { kind: "script", script: join(operands), label, assignments, privileged };
  }
  if (spec.xargs) {
    const replace = parsed.options.get("-I")?.[0]?.value ?? (parsed.options.has("-I") ? "{}" : null);
    return { kind: "command", args: operands, label, assignments, privileged, xargs: { replace } };
  }
  return { kind: "command", args: operands, label, assignments, privileged, xargs: null };
}
