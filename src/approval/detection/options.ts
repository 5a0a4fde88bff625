/**
 * The option model, as data: for each program, which short options take a
 * value, which long options exist (so that unambiguous prefixes resolve,
 * `--rec` → `--recursive`), the canonical spelling each form maps to, the
 * parsing style, and subcommands. `parseArgs` (parse-args.ts) turns argv into
 * canonical options + operands with it; rules name canonical options.
 *
 * Styles:
 * - `gnu` (default): bundles (`-rf`), attached values (`-n5`), `--long[=v]`,
 *   long prefixes, options after operands, `--` ends options.
 * - `posix`: like `gnu` but the first operand ends options (wrappers, `git`'s global options).
 * - `go`: `-name`/`--name`, `-name=v`, `-name v` for value options, `-flag=false`
 *   switches a flag off, no bundling, the first operand ends options (terraform).
 * - `dash-long`: like `go` but options may follow operands (sqlite3, openssl subcommands).
 * - `dd`: `key=value` operands become options named `key`.
 * - `kill`: a leading `-SIG`, `-s SIG`, `-n N` is the signal (canonical `-s`); every other word is a pid,
 *   including `-1`. A lone `kill -N` is read as the pid `-N`.
 * - `find`: leading `-H -L -P -D x -Ox`, start paths, then the expression: each primary
 *   (`-delete`, `-name X`, `-exec … ;`) becomes an option; the start paths are the operands.
 */

export type OptionStyle = "gnu" | "posix" | "go" | "dash-long" | "dd" | "kill" | "find";

export interface OptionSpec {
  style?: OptionStyle;
  /** Short options without a value, as letters. Unknown letters are read as flags too. */
  flags?: string;
  /** Short options that take a value, attached (`-n5`) or as the next word. */
  values?: string;
  /** Short options whose value is optional and only attached (`sed -i.bak`). */
  optionalValues?: string;
  /** Long options (without dashes) that take no value. For `go`/`dash-long`: the boolean options. */
  long?: readonly string[];
  /** Long options that take a value (`--opt=v` or `--opt v`). */
  longValues?: readonly string[];
  /** Long options whose value is optional (only `--opt=v`). */
  longOptional?: readonly string[];
  /** Written form → canonical form (`-R` → `-r`, `--recursive` → `-r`). Unlisted forms are canonical themselves. */
  canonical?: Readonly<Record<string, string>>;
  /** `-5`-style numeric options (`head -5`, `nice -10`) become `-#` with the number as value. */
  numeric?: boolean;
  /** Subcommand word → what it adds (its options; the parent's still apply). `*`: any other word. */
  subcommands?: Readonly<Record<string, OptionSpec>>;
}

const RM: OptionSpec = {
  flags: "rRfidvI",
  long: ["recursive", "force", "dir", "verbose", "one-file-system", "no-preserve-root", "help", "version"],
  longOptional: ["interactive", "preserve-root"],
  canonical: { "-R": "-r", "--recursive": "-r", "--force": "-f", "--dir": "-d", "--verbose": "-v", "--interactive": "-i" },
};

const CHMOD: OptionSpec = {
  flags: "RcfvHLP",
  long: ["recursive", "changes", "silent", "quiet", "verbose", "no-preserve-root", "preserve-root", "dereference", "no-dereference"],
  longValues: ["reference"],
  canonical: { "--recursive": "-R", "--changes": "-c", "--silent": "-f", "--quiet": "-f", "--verbose": "-v" },
};

const CHOWN: OptionSpec = {
  flags: "RcfvhHLP",
  long: ["recursive", "changes", "silent", "quiet", "verbose", "no-preserve-root", "preserve-root", "dereference", "no-dereference"],
  longValues: ["reference", "from"],
  canonical: { "--recursive": "-R", "--changes": "-c", "--silent": "-f", "--quiet": "-f", "--verbose": "-v", "--no-dereference": "-h" },
};

const COPY: OptionSpec = {
  flags: "aRrfipnuvxlsdbHLPTZ",
  values: "tS",
  long: ["archive", "recursive", "force", "interactive", "no-clobber", "update", "verbose", "one-file-system", "link", "symbolic-link", "dereference", "no-dereference", "no-target-directory", "parents", "remove-destination", "strip-trailing-slashes", "attributes-only", "debug"],
  longValues: ["target-directory", "suffix"],
  longOptional: ["backup", "preserve", "no-preserve", "reflink", "sparse", "context"],
  canonical: { "-R": "-r", "--recursive": "-r", "--force": "-f", "--target-directory": "-t", "--archive": "-a", "--verbose": "-v", "--suffix": "-S" },
};

const INSTALL: OptionSpec = {
  flags: "bcCdDpsvTZ",
  values: "tgmoS",
  longValues: ["target-directory", "group", "mode", "owner", "suffix", "strip-program"],
  long: ["compare", "directory", "preserve-timestamps", "strip", "verbose", "no-target-directory"],
  canonical: { "--target-directory": "-t", "--mode": "-m", "--owner": "-o", "--group": "-g", "--directory": "-d" },
};

const LN: OptionSpec = {
  flags: "sfnbiLPrTvd",
  values: "tS",
  long: ["symbolic", "force", "no-dereference", "interactive", "logical", "physical", "relative", "verbose", "no-target-directory"],
  longValues: ["target-directory", "suffix"],
  canonical: { "--symbolic": "-s", "--force": "-f", "--target-directory": "-t", "--no-dereference": "-n" },
};

const SED: OptionSpec = {
  flags: "nrEsuz",
  values: "efl",
  optionalValues: "i",
  long: ["quiet", "silent", "regexp-extended", "separate", "unbuffered", "null-data", "sandbox", "debug", "posix", "follow-symlinks", "help", "version"],
  longValues: ["expression", "file", "line-length"],
  longOptional: ["in-place"],
  canonical: { "--in-place": "-i", "--expression": "-e", "--file": "-f", "--quiet": "-n", "--silent": "-n", "-r": "-E", "--regexp-extended": "-E" },
};

const AWK: OptionSpec = {
  values: "Fvfe",
  flags: "bcCdDghiklLMnNoOpPrSstV",
  longValues: ["field-separator", "assign", "file", "source", "include", "load", "exec"],
  long: ["characters-as-bytes", "traditional", "copyright", "dump-variables", "debug", "gen-pot", "lint", "posix", "re-interval", "sandbox", "version", "help"],
  canonical: { "--field-separator": "-F", "--assign": "-v", "--file": "-f", "--source": "-e", "--exec": "-f" },
};

const TAR: OptionSpec = {
  flags: "AcdrtuxzjJZavkmOopPSUWhilMBGRsw",
  values: "fCIFbgHKLNTVX",
  long: ["extract", "get", "create", "list", "append", "update", "diff", "compare", "delete", "gzip", "gunzip", "bzip2", "xz", "zstd", "lzma", "verbose", "keep-old-files", "overwrite", "remove-files", "preserve-permissions", "same-owner", "no-same-owner", "absolute-names", "dereference", "totals", "wildcards", "auto-compress", "one-file-system", "recursion", "no-recursion", "ignore-failed-read", "interactive"],
  longValues: ["file", "directory", "use-compress-program", "info-script", "new-volume-script", "to-command", "checkpoint-action", "exclude", "exclude-from", "files-from", "transform", "xform", "strip-components", "owner", "group", "mode", "mtime", "format", "label", "blocking-factor", "listed-incremental", "rsh-command", "rmt-command", "index-file", "suffix", "newer", "after-date", "newer-mtime", "tape-length", "volno-file", "sort", "warning", "use-compress-prog"],
  longOptional: ["checkpoint", "totals", "backup", "occurrence", "one-top-level", "atime-preserve"],
  canonical: { "--file": "-f", "--directory": "-C", "--use-compress-program": "-I", "--use-compress-prog": "-I", "--info-script": "-F", "--new-volume-script": "-F", "--extract": "-x", "--get": "-x", "--create": "-c" },
};

const GO_TERRAFORM: OptionSpec = {
  style: "go",
  long: ["destroy", "auto-approve", "refresh-only", "input", "lock", "compact-warnings", "json", "no-color", "refresh", "help", "version", "upgrade", "reconfigure", "migrate-state"],
  longValues: ["chdir", "var", "var-file", "target", "replace", "state", "state-out", "backup", "lock-timeout", "parallelism", "out", "backend-config"],
  subcommands: { "*": {} },
};

const GIT_PUSH: OptionSpec = {
  flags: "fdnuvqo46",
  values: "o",
  long: ["force", "force-if-includes", "mirror", "delete", "prune", "all", "branches", "tags", "follow-tags", "dry-run", "porcelain", "set-upstream", "no-verify", "verify", "atomic", "quiet", "verbose", "progress", "thin", "no-thin", "ipv4", "ipv6", "no-force-with-lease"],
  longValues: ["push-option", "repo", "receive-pack", "exec", "recurse-submodules"],
  longOptional: ["force-with-lease", "signed"],
  canonical: { "--force": "-f", "--delete": "-d", "--dry-run": "-n", "--set-upstream": "-u", "--push-option": "-o", "--exec": "--receive-pack" },
};

const GIT_SUBCOMMANDS: Readonly<Record<string, OptionSpec>> = {
  push: GIT_PUSH,
  reset: { flags: "qpN", long: ["hard", "soft", "mixed", "merge", "keep", "quiet", "patch", "no-refresh", "intent-to-add"], longOptional: ["recurse-submodules", "pathspec-from-file"] },
  clean: {
    flags: "dfinqxX",
    values: "e",
    long: ["force", "dry-run", "quiet", "interactive"],
    longValues: ["exclude"],
    canonical: { "--force": "-f", "--dry-run": "-n", "--quiet": "-q", "--interactive": "-i", "--exclude": "-e" },
  },
  branch: {
    flags: "dDmMcCfrarlvqit",
    values: "u",
    long: ["delete", "force", "move", "copy", "remotes", "all", "list", "verbose", "quiet", "track", "no-track", "ignore-case", "show-current", "edit-description", "unset-upstream"],
    longValues: ["set-upstream-to", "contains", "no-contains", "merged", "no-merged", "points-at", "sort", "format", "color", "column"],
    canonical: { "--delete": "-d", "--force": "-f", "--move": "-m", "--copy": "-c", "--remotes": "-r", "--all": "-a", "--list": "-l", "--set-upstream-to": "-u" },
  },
  checkout: {
    flags: "fqpmtl",
    values: "bB",
    long: ["force", "quiet", "ours", "theirs", "merge", "detach", "patch", "progress", "no-progress", "ignore-other-worktrees", "overwrite-ignore", "no-overwrite-ignore", "guess", "no-guess", "track", "no-track"],
    longValues: ["orphan", "conflict", "pathspec-from-file"],
    canonical: { "--force": "-f" },
  },
  restore: {
    flags: "WSpqm",
    values: "s",
    long: ["worktree", "staged", "patch", "quiet", "progress", "ours", "theirs", "merge", "ignore-unmerged", "overlay", "no-overlay"],
    longValues: ["source", "conflict", "pathspec-from-file"],
    canonical: { "--worktree": "-W", "--staged": "-S", "--source": "-s" },
  },
  "filter-branch": { flags: "f", long: ["force", "prune-empty"], longValues: ["env-filter", "tree-filter", "index-filter", "parent-filter", "msg-filter", "commit-filter", "tag-name-filter", "subdirectory-filter", "original", "state-branch"] },
  stash: { subcommands: { "*": {} } },
  reflog: { subcommands: { "*": { longOptional: ["expire", "expire-unreachable"], long: ["all", "rewrite", "updateref", "stale-fix", "dry-run", "verbose"] } } },
  gc: { long: ["aggressive", "auto", "quiet", "force", "keep-largest-pack"], longOptional: ["prune"] },
  "update-ref": { flags: "dm", long: ["no-deref", "stdin", "create-reflog"] },
  clone: { values: "objcu", long: ["bare", "mirror", "quiet", "verbose", "recursive", "no-checkout", "single-branch", "no-tags", "shallow-submodules"], longValues: ["origin", "branch", "upload-pack", "template", "config", "depth", "reference", "separate-git-dir", "filter", "recurse-submodules", "jobs"], canonical: { "-u": "--upload-pack", "--branch": "-b", "--config": "-c" } },
  fetch: { flags: "afpqvtPnku", values: "j", long: ["all", "append", "prune", "prune-tags", "tags", "no-tags", "quiet", "verbose", "force", "dry-run", "unshallow", "multiple"], longValues: ["upload-pack", "depth", "deepen", "shallow-since", "jobs", "recurse-submodules", "refmap"] },
  pull: { flags: "fqvr", long: ["rebase", "no-rebase", "ff-only", "no-ff", "ff", "quiet", "verbose", "force", "all", "prune", "autostash"], longValues: ["upload-pack", "depth", "strategy", "strategy-option"] },
  rebase: { flags: "iqvfk", values: "xsX", long: ["interactive", "continue", "abort", "skip", "quiet", "verbose", "autosquash", "autostash", "root", "onto-root", "keep-base", "force-rebase", "no-ff", "update-refs"], longValues: ["exec", "onto", "strategy", "strategy-option"], canonical: { "--exec": "-x" } },
  submodule: { subcommands: { "*": { flags: "qr", long: ["quiet", "recursive", "init", "remote", "force"] } } },
  bisect: { subcommands: { "*": {} } },
  config: { flags: "lez", values: "f", long: ["global", "system", "local", "worktree", "list", "unset", "unset-all", "add", "get", "get-all", "replace-all", "edit", "show-origin", "null", "bool", "int", "path"], longValues: ["file", "blob", "type", "default"] },
  commit: { flags: "aqvsnpe", values: "mFCcut", long: ["all", "amend", "quiet", "verbose", "signoff", "no-verify", "no-edit", "allow-empty", "patch", "dry-run"], longValues: ["message", "file", "reuse-message", "reedit-message", "author", "date", "fixup", "squash", "template", "cleanup"], canonical: { "--message": "-m" } },
  "*": {},
};

const GIT: OptionSpec = {
  style: "posix",
  flags: "pPv",
  values: "Cc",
  long: ["paginate", "no-pager", "bare", "no-replace-objects", "literal-pathspecs", "glob-pathspecs", "noglob-pathspecs", "icase-pathspecs", "no-optional-locks", "help", "version", "html-path", "man-path", "info-path"],
  longValues: ["git-dir", "work-tree", "namespace", "config-env", "super-prefix", "list-cmds", "attr-source"],
  longOptional: ["exec-path"],
  canonical: { "--paginate": "-p", "--no-pager": "-P" },
  subcommands: GIT_SUBCOMMANDS,
};

const DOCKER_COMPOSE: OptionSpec = {
  values: "fp",
  longValues: ["file", "project-name", "profile", "env-file", "project-directory", "ansi", "progress", "parallel"],
  long: ["verbose", "compatibility", "dry-run", "all-resources"],
  canonical: { "--file": "-f", "--project-name": "-p" },
  subcommands: {
    down: { flags: "vt", long: ["volumes", "remove-orphans"], longValues: ["rmi", "timeout"], canonical: { "--volumes": "-v", "--timeout": "-t" }, values: "t" },
    rm: { flags: "fsv", long: ["force", "stop", "volumes"], canonical: { "--force": "-f", "--stop": "-s", "--volumes": "-v" } },
    exec: { flags: "dT", values: "euwi", long: ["detach", "privileged", "no-TTY", "no-tty"], longValues: ["env", "user", "workdir", "index"], canonical: { "--env": "-e", "--user": "-u", "--workdir": "-w", "--detach": "-d" } },
    run: { flags: "dTP", values: "euwlpv", long: ["detach", "rm", "no-deps", "service-ports", "use-aliases", "build", "quiet-pull", "no-TTY", "interactive", "tty"], longValues: ["env", "user", "workdir", "label", "publish", "volume", "entrypoint", "name", "cap-add", "cap-drop", "env-from-file", "pull"] },
    "*": {},
  },
};

const DOCKER_EXEC: OptionSpec = {
  flags: "dit",
  values: "euw",
  long: ["detach", "interactive", "tty", "privileged"],
  longValues: ["env", "env-file", "user", "workdir", "detach-keys"],
  canonical: { "--env": "-e", "--user": "-u", "--workdir": "-w", "--interactive": "-i", "--tty": "-t", "--detach": "-d" },
};

/** `docker run`: options end at the image; what follows is the container's command. */
const DOCKER_RUN: OptionSpec = {
  style: "posix",
  flags: "ditPq",
  values: "evwpuhlmac",
  long: ["detach", "interactive", "tty", "rm", "privileged", "init", "read-only", "publish-all", "quiet", "sig-proxy", "oom-kill-disable", "no-healthcheck"],
  longValues: [
    "env", "volume", "workdir", "publish", "user", "hostname", "label", "memory", "name", "network", "net", "mount", "entrypoint", "env-file",
    "add-host", "cap-add", "cap-drop", "device", "dns", "gpus", "ipc", "pid", "platform", "pull", "restart", "runtime", "security-opt",
    "shm-size", "tmpfs", "ulimit", "userns", "uts", "volumes-from", "cpus", "cpu-shares", "cgroupns", "log-driver", "log-opt", "health-cmd",
    "stop-signal", "network-alias", "group-add", "sysctl", "cidfile", "label-file", "link", "mac-address", "ip", "expose", "storage-opt", "attach",
  ],
  canonical: { "--volume": "-v", "--env": "-e", "--workdir": "-w", "--publish": "-p", "--user": "-u", "--net": "--network", "--interactive": "-i", "--tty": "-t", "--detach": "-d", "--attach": "-a" },
};

const DOCKER: OptionSpec = {
  style: "posix",
  flags: "Dv",
  values: "Hl",
  long: ["debug", "tls", "tlsverify", "version", "help"],
  longValues: ["host", "context", "config", "log-level", "tlscacert", "tlscert", "tlskey"],
  canonical: { "--host": "-H", "--log-level": "-l", "--debug": "-D" },
  subcommands: {
    compose: DOCKER_COMPOSE,
    system: { subcommands: { prune: { flags: "af", long: ["all", "force", "volumes"], longValues: ["filter"], canonical: { "--all": "-a", "--force": "-f" } }, "*": {} } },
    volume: { subcommands: { prune: { flags: "af", long: ["all", "force"], longValues: ["filter"], canonical: { "--all": "-a", "--force": "-f" } }, rm: { flags: "f", long: ["force"], canonical: { "--force": "-f" } }, "*": {} } },
    image: { subcommands: { prune: { flags: "af", long: ["all", "force"], longValues: ["filter"], canonical: { "--all": "-a", "--force": "-f" } }, "*": {} } },
    exec: DOCKER_EXEC,
    run: DOCKER_RUN,
    create: DOCKER_RUN,
    rm: { flags: "flv", long: ["force", "link", "volumes"], canonical: { "--force": "-f", "--volumes": "-v" } },
    container: { subcommands: { rm: { flags: "flv", long: ["force", "link", "volumes"], canonical: { "--force": "-f", "--volumes": "-v" } }, run: DOCKER_RUN, create: DOCKER_RUN, exec: DOCKER_EXEC, "*": {} } },
    "*": {},
  },
};

const KUBECTL_GLOBAL_VALUES = ["namespace", "context", "kubeconfig", "server", "cluster", "user", "token", "as", "as-group", "request-timeout", "cache-dir", "certificate-authority", "client-certificate", "client-key", "v", "vmodule", "log-dir"];

const KUBECTL: OptionSpec = {
  values: "nsv",
  longValues: KUBECTL_GLOBAL_VALUES,
  long: ["insecure-skip-tls-verify", "warnings-as-errors", "match-server-version"],
  canonical: { "--namespace": "-n", "--server": "-s" },
  subcommands: {
    delete: { flags: "Afl", values: "fl", long: ["all", "all-namespaces", "force", "now", "ignore-not-found", "wait", "recursive"], longValues: ["filename", "selector", "grace-period", "timeout", "output", "field-selector", "cascade", "kustomize", "raw"], canonical: { "--filename": "-f", "--selector": "-l", "--all-namespaces": "-A", "-R": "--recursive" } },
    exec: { flags: "itq", values: "cf", long: ["stdin", "tty", "quiet"], longValues: ["container", "filename", "pod-running-timeout"], canonical: { "--stdin": "-i", "--tty": "-t", "--container": "-c", "--filename": "-f" } },
    scale: { values: "flo", longValues: ["filename", "selector", "output", "replicas", "current-replicas", "timeout", "resource-version"] },
    "*": { values: "flo", longValues: ["filename", "selector", "output"], longOptional: ["dry-run"] },
  },
};

const HELM: OptionSpec = {
  values: "n",
  longValues: ["namespace", "kube-context", "kubeconfig", "kube-apiserver", "kube-token", "registry-config", "repository-cache", "repository-config"],
  long: ["debug"],
  canonical: { "--namespace": "-n" },
  subcommands: { "*": { long: ["dry-run", "keep-history", "no-hooks", "wait"], longValues: ["timeout", "description", "cascade"] } },
};

const SYSTEMCTL: OptionSpec = {
  flags: "aqlfir",
  values: "HMtpsnoT",
  long: ["user", "system", "global", "all", "quiet", "now", "force", "no-block", "no-wall", "no-reload", "no-pager", "no-legend", "runtime", "full", "failed", "show-types", "dry-run", "check-inhibitors", "wait", "firmware-setup", "reverse", "after", "before", "recursive", "plain"],
  longValues: ["host", "machine", "type", "property", "state", "signal", "kill-whom", "kill-value", "lines", "output", "job-mode", "root", "image", "message", "boot-loader-menu", "boot-loader-entry", "reboot-argument", "timestamp", "what", "when"],
  canonical: { "--host": "-H", "--machine": "-M", "--type": "-t", "--property": "-p", "--signal": "-s", "--lines": "-n", "--output": "-o" },
};

const SHUTDOWN: OptionSpec = {
  flags: "HPrhkc",
  long: ["help", "halt", "poweroff", "reboot", "no-wall"],
  canonical: { "--halt": "-H", "--poweroff": "-P", "--reboot": "-r" },
};

const PKILL: OptionSpec = {
  flags: "cefilnovxFAH",
  values: "dgGPstuUO",
  numeric: true,
  long: ["count", "exact", "full", "ignore-case", "list-name", "list-full", "newest", "oldest", "inverse", "lightweight", "echo", "require-handler", "ignore-ancestors", "logpidfile"],
  longValues: ["delimiter", "pgroup", "group", "parent", "session", "terminal", "euid", "uid", "pidfile", "ns", "nslist", "signal", "cgroup", "older", "runstates", "env"],
  canonical: { "--signal": "--signal", "--full": "-f", "--euid": "-u", "--uid": "-U", "--exact": "-x" },
};

const KILLALL: OptionSpec = {
  flags: "eIgiqrvwZl",
  values: "snuoy",
  long: ["exact", "ignore-case", "process-group", "interactive", "quiet", "regexp", "verbose", "wait", "list", "version"],
  longValues: ["signal", "user", "older-than", "younger-than", "ns", "context"],
  numeric: true,
  canonical: { "--signal": "-s", "--user": "-u", "--regexp": "-r" },
};

const PSQL: OptionSpec = {
  flags: "aAbeEHlnqsSxXwW0z1",
  values: "cdfhpUvoLPFRTL",
  long: ["echo-all", "no-align", "echo-errors", "echo-queries", "echo-hidden", "html", "list", "no-readline", "quiet", "single-step", "single-line", "expanded", "no-psqlrc", "no-password", "password", "field-separator-zero", "record-separator-zero", "single-transaction", "csv", "version", "help"],
  longValues: ["command", "dbname", "file", "host", "port", "username", "set", "variable", "output", "log-file", "pset", "field-separator", "record-separator", "table-attr"],
  canonical: { "--command": "-c", "--dbname": "-d", "--file": "-f", "--host": "-h", "--port": "-p", "--username": "-U", "--set": "-v", "--variable": "-v" },
};

const MYSQL: OptionSpec = {
  flags: "BbCcEfGHiLnNqrstTvVwXpA",
  values: "eDhPuSOd",
  optionalValues: "p",
  long: ["batch", "force", "html", "xml", "raw", "silent", "table", "verbose", "vertical", "skip-column-names", "unbuffered", "no-auto-rehash", "quick", "safe-updates", "i-am-a-dummy", "skip-ssl", "version", "help", "comments"],
  longValues: ["execute", "database", "host", "port", "user", "socket", "default-character-set", "init-command", "login-path", "defaults-file", "defaults-extra-file", "protocol", "tee", "pager", "ssl-mode"],
  longOptional: ["password", "pager"],
  canonical: { "--execute": "-e", "--database": "-D", "--host": "-h", "--port": "-P", "--user": "-u", "--password": "-p" },
};

const SQLITE: OptionSpec = {
  style: "dash-long",
  long: ["append", "ascii", "bail", "batch", "box", "column", "csv", "deserialize", "echo", "header", "noheader", "html", "interactive", "json", "line", "list", "markdown", "memtrace", "nofollow", "quote", "readonly", "safe", "stats", "table", "version", "help", "no-rowid-in-view"],
  longValues: ["cmd", "init", "maxsize", "mmap", "newline", "nullvalue", "separator", "vfs", "lookaside", "pagecache", "heap"],
};

const PYTHON: OptionSpec = {
  style: "posix",
  flags: "bBdEhiIOPqsSuvVx3",
  values: "cmWXQ",
  long: ["help", "version", "help-env", "help-xoptions", "help-all"],
  longValues: ["check-hash-based-pycs"],
};

const NODE: OptionSpec = {
  style: "posix",
  flags: "hivc",
  values: "epr",
  long: ["interactive", "check", "help", "version", "experimental-modules", "no-warnings", "enable-source-maps", "abort-on-uncaught-exception", "trace-warnings", "watch", "test", "expose-gc", "inspect", "inspect-brk", "preserve-symlinks", "no-deprecation", "experimental-strip-types", "experimental-transform-types", "experimental-vm-modules"],
  longValues: ["eval", "print", "require", "import", "loader", "experimental-loader", "input-type", "env-file", "conditions", "max-old-space-size", "stack-size", "title", "inspect-port", "watch-path"],
  canonical: { "--eval": "-e", "--print": "-p", "--require": "-r" },
};

const PERL: OptionSpec = {
  style: "posix",
  flags: "acnpsStTuUvwWXfh",
  values: "eEIm",
  optionalValues: "0ilxdDCFM",
  canonical: { "-E": "-e" },
};

const RUBY: OptionSpec = {
  style: "posix",
  flags: "acdlnpsSvwyU",
  values: "eICrxE",
  optionalValues: "0FiKTW",
  long: ["copyright", "verbose", "version", "help", "yydebug", "disable-gems", "jit"],
  longValues: ["encoding", "external-encoding", "internal-encoding", "disable", "enable", "dump"],
};

const PHP: OptionSpec = {
  style: "posix",
  flags: "aCHhilmnqsvwe",
  values: "rBREFfcdtz",
  long: ["interactive", "info", "modules", "syntax-check", "version", "help", "no-php-ini", "ini"],
  longValues: ["run", "process-begin", "process-code", "process-end", "process-file", "file", "php-ini", "define", "docroot", "zend-extension", "rf", "rc", "re", "rz", "ri"],
  canonical: { "--run": "-r", "--process-begin": "-B", "--process-code": "-R", "--process-end": "-E", "--file": "-f" },
};

/** Tools whose first word is a subcommand (`uv run`, `poetry run`, `npm exec`): only that is read here. */
const SUBCOMMANDS_ONLY: OptionSpec = { style: "posix", subcommands: { "*": {} } };

/** PowerShell: parameters are case-insensitive and may be shortened (`-c`, `-enc`). */
const PWSH: OptionSpec = { style: "go", long: ["noprofile", "nologo", "noninteractive", "nop", "noexit", "mta", "sta", "nol", "noni"], longValues: ["c", "command", "f", "file", "executionpolicy", "ep", "exec", "encodedcommand", "enc", "en", "e", "ec", "workingdirectory", "wd", "o", "outputformat", "inputformat", "if", "of", "windowstyle", "w"], canonical: { "-command": "-c", "--command": "-c", "--c": "-c", "-encodedcommand": "-ec", "--encodedcommand": "-ec", "--e": "-ec", "-e": "-ec", "--ec": "-ec", "-enc": "-ec", "-en": "-ec" } };

const VIM: OptionSpec = { style: "posix", flags: "ybeEsRZmMnrlCNhVAHFdDL", values: "cSuUwWTiorq", long: ["clean", "noplugin", "version", "help", "not-a-term", "ttyfail"], longValues: ["cmd", "startuptime", "servername", "remote", "remote-send", "remote-expr"], canonical: { "--cmd": "-c" } };

/** iptables: the commands (-F, -X, -P CHAIN POLICY) and the options with values. */
const IPTABLES: OptionSpec = {
  flags: "FXLZnvxS46",
  values: "tAIDRPNEjiosdmpgcw",
  long: ["flush", "delete-chain", "list", "zero", "numeric", "verbose", "exact", "list-rules"],
  longValues: ["table", "append", "insert", "delete", "replace", "policy", "new-chain", "rename-chain", "jump", "in-interface", "out-interface", "source", "destination", "match", "protocol", "goto", "wait", "dport", "sport"],
  canonical: { "--flush": "-F", "--delete-chain": "-X", "--policy": "-P", "--table": "-t", "--list": "-L" },
};

/** 7-Zip: a command letter then `-switch` words (`7z a -sdel x.7z dir`). */
const SEVEN_ZIP: OptionSpec = { style: "dash-long", long: ["sdel", "r", "y", "bb", "bd", "slp", "ssw", "spf", "sccUTF-8", "snl", "snh"], longValues: [] };

const LUA: OptionSpec = { style: "posix", flags: "ivEW", values: "el" };

const CURL: OptionSpec = {
  flags: "sSfLkvIiOJRqgGNZ0123467#jlBMnEYy",
  values: "oXHdFuUaAbceEKmrtTwxyYzzCPQ",
  long: ["silent", "show-error", "fail", "location", "insecure", "verbose", "head", "include", "remote-name", "remote-name-all", "remote-header-name", "compressed", "http1.1", "http2", "globoff", "get", "no-buffer", "create-dirs", "fail-with-body", "ipv4", "ipv6", "progress-bar", "no-progress-meter", "tlsv1.2", "ssl-reqd", "anyauth", "basic", "digest", "negotiate", "ntlm", "raw", "path-as-is", "parallel"],
  longValues: ["output", "request", "header", "data", "data-raw", "data-binary", "data-urlencode", "form", "user", "user-agent", "referer", "cookie", "cookie-jar", "url", "proxy", "max-time", "connect-timeout", "retry", "write-out", "output-dir", "config", "upload-file", "range", "cacert", "cert", "key", "resolve", "oauth2-bearer", "json", "variable", "expand-url", "time-cond"],
  canonical: { "--output": "-o", "--request": "-X", "--header": "-H", "--data": "-d", "--user": "-u", "--config": "-K", "--upload-file": "-T", "--remote-name": "-O" },
};

const WGET: OptionSpec = {
  flags: "qvcNrkpmSbdnxEK46",
  values: "OoaPtTUeiwlABDRIXQ",
  long: ["quiet", "verbose", "continue", "timestamping", "recursive", "convert-links", "page-requisites", "mirror", "server-response", "background", "debug", "no-check-certificate", "spider", "no-verbose", "no-clobber", "content-disposition", "no-parent", "inet4-only", "inet6-only", "show-progress"],
  longValues: ["output-document", "output-file", "append-output", "directory-prefix", "tries", "timeout", "user-agent", "execute", "input-file", "wait", "level", "accept", "reject", "domains", "header", "user", "password", "post-data", "post-file", "method", "body-data", "load-cookies", "save-cookies", "limit-rate", "quota", "ca-certificate", "bind-address"],
  canonical: { "--output-document": "-O", "--output-file": "-o", "--directory-prefix": "-P", "--execute": "-e", "--input-file": "-i", "--quiet": "-q" },
};

const BASE64: OptionSpec = {
  flags: "diDn",
  values: "wbo",
  long: ["decode", "ignore-garbage", "help", "version"],
  longValues: ["wrap", "input", "output", "break"],
  canonical: { "--decode": "-d", "-D": "-d", "--ignore-garbage": "-i", "--wrap": "-w" },
};

const XXD: OptionSpec = {
  style: "dash-long",
  long: ["r", "p", "ps", "plain", "postscript", "revert", "i", "include", "u", "b", "bits", "e", "C", "capitalize", "E", "EBCDIC", "a", "autoskip", "h", "help", "v", "version"],
  longValues: ["c", "cols", "g", "groupsize", "l", "len", "o", "s", "seek", "n", "name", "R"],
  canonical: { "-revert": "-r", "--revert": "-r", "-ps": "-p", "-plain": "-p", "-postscript": "-p", "--p": "-p", "--r": "-r", "-cols": "-c", "-len": "-l", "-seek": "-s" },
};

const OPENSSL: OptionSpec = {
  style: "dash-long",
  subcommands: {
    "*": {
      style: "dash-long",
      long: ["d", "e", "a", "A", "base64", "salt", "nosalt", "pbkdf2", "p", "P", "v", "none", "nopad", "z"],
      longValues: ["in", "out", "pass", "k", "kfile", "md", "iter", "S", "iv", "K", "bufsize", "engine", "provider"],
      canonical: { "-base64": "-a", "--base64": "-a", "--d": "-d", "--a": "-a" },
    },
  },
};

const GPG: OptionSpec = {
  flags: "deasbkKvqnNo",
  values: "ruRo",
  long: ["decrypt", "encrypt", "armor", "sign", "symmetric", "verbose", "quiet", "batch", "yes", "no"],
  longValues: ["output", "recipient", "local-user", "passphrase", "passphrase-file", "homedir", "import", "export"],
  canonical: { "--decrypt": "-d", "--output": "-o" },
};

const DECOMPRESSOR: OptionSpec = {
  flags: "cdfhklLnNqrStvV0123456789zT",
  values: "S",
  long: ["stdout", "to-stdout", "decompress", "uncompress", "force", "keep", "list", "quiet", "recursive", "test", "verbose", "fast", "best"],
  longValues: ["suffix", "threads"],
  canonical: { "--decompress": "-d", "--uncompress": "-d", "--stdout": "-c", "--to-stdout": "-c" },
};

const TR: OptionSpec = { flags: "cCdst", long: ["complement", "delete", "squeeze-repeats", "truncate-set1"], canonical: { "-C": "-c", "--complement": "-c", "--delete": "-d", "--squeeze-repeats": "-s", "--truncate-set1": "-t" } };

const RG: OptionSpec = {
  flags: "abcFhHiIlLnNopqsSuUvwxz0.",
  values: "ABCeEfgjmMrtT",
  long: ["search-zip", "files", "hidden", "no-ignore", "follow", "fixed-strings", "ignore-case", "smart-case", "count", "json", "files-with-matches", "line-number", "no-heading", "only-matching", "pcre2", "multiline", "unrestricted", "word-regexp", "vimgrep", "null", "text"],
  longValues: ["pre", "pre-glob", "regexp", "file", "glob", "iglob", "type", "type-not", "max-count", "replace", "context", "before-context", "after-context", "max-depth", "threads", "encoding", "sort", "sortr", "color", "colors", "type-add", "ignore-file", "path-separator"],
  canonical: { "--regexp": "-e", "--glob": "-g", "--replace": "-r" },
};

const SSH: OptionSpec = {
  style: "posix",
  flags: "46AaCfGgKkMNnqsTtVvXxYy",
  values: "BbcDEeFIiJLlmOoPpQRSWw",
};

const CRYPTSETUP: OptionSpec = { flags: "qvy", values: "cdhkls", long: ["batch-mode", "verbose", "debug", "force-password"], longValues: ["cipher", "key-file", "hash", "key-size", "type"], subcommands: { "*": {} } };

const WIPEFS: OptionSpec = {
  flags: "afnqQbJhV",
  values: "otp",
  long: ["all", "force", "no-act", "quiet", "backup", "json", "noheadings", "no-headings"],
  longValues: ["offset", "types", "output", "lock"],
  canonical: { "--all": "-a", "--force": "-f", "--offset": "-o", "--no-act": "-n", "--types": "-t" },
};

const USERMOD: OptionSpec = {
  flags: "aLUmopr",
  values: "cdeEfgGlpsuRPZ",
  long: ["append", "lock", "unlock", "move-home", "non-unique", "remove"],
  longValues: ["comment", "home", "expiredate", "inactive", "gid", "groups", "login", "password", "shell", "uid", "root", "prefix"],
  canonical: { "--append": "-a", "--groups": "-G", "--gid": "-g" },
};

const REDIS_CLI: OptionSpec = { flags: "ecrix", values: "hpsaund", long: ["raw", "no-raw", "csv", "tls", "cluster", "pipe", "scan", "bigkeys", "stat", "latency", "no-auth-warning"], longValues: ["user", "pass", "pattern", "count", "cacert", "cert", "key", "sni", "rdb", "eval"] };

const MONGO: OptionSpec = { flags: "v", long: ["quiet", "nodb", "norc", "shell", "tls", "ssl", "verbose", "help", "version"], longValues: ["eval", "host", "port", "username", "password", "authenticationDatabase", "file"], values: "upf" };

const CLICKHOUSE: OptionSpec = { values: "qhdu", longValues: ["query", "host", "port", "user", "password", "database", "format", "queries-file"], long: ["multiline", "multiquery", "vertical", "time", "stacktrace"], canonical: { "--query": "-q", "--host": "-h", "--database": "-d", "--user": "-u" } };

const SQLCMD: OptionSpec = { values: "QqSdUPHiolstFAwWv", flags: "EbXr" };

const CQLSH: OptionSpec = { values: "euk", longValues: ["execute", "file", "keyspace", "username", "password"], canonical: { "--execute": "-e", "--keyspace": "-k" } };

const SNOWSQL: OptionSpec = { values: "qacdsuwrf", longValues: ["query", "accountname", "dbname", "schemaname", "username", "warehouse", "rolename", "filename"], canonical: { "--query": "-q" } };

/** The option model per program basename. Programs not listed are parsed as `gnu` with every option a flag. */
export const PROGRAM_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  rm: RM,
  chmod: CHMOD,
  chown: CHOWN,
  chgrp: CHOWN,
  cp: COPY,
  mv: COPY,
  install: INSTALL,
  ln: LN,
  tee: { flags: "aip", long: ["append", "ignore-interrupts"], longOptional: ["output-error"], canonical: { "--append": "-a" } },
  truncate: { flags: "co", values: "rs", long: ["no-create", "io-blocks"], longValues: ["reference", "size"], canonical: { "--size": "-s" } },
  shred: { flags: "fuvxz", values: "ns", long: ["force", "remove", "verbose", "exact", "zero"], longValues: ["iterations", "size", "random-source"], longOptional: ["remove"], canonical: { "--force": "-f", "--zero": "-z", "--iterations": "-n", "--remove": "-u" } },
  dd: { style: "dd" },
  find: { style: "find" },
  sed: SED,
  gsed: SED,
  awk: AWK,
  gawk: AWK,
  mawk: AWK,
  nawk: AWK,
  tar: TAR,
  gtar: TAR,
  bsdtar: TAR,
  rg: RG,
  git: GIT,
  docker: DOCKER,
  podman: DOCKER,
  "docker-compose": DOCKER_COMPOSE,
  "podman-compose": DOCKER_COMPOSE,
  kubectl: KUBECTL,
  oc: KUBECTL,
  helm: HELM,
  terraform: GO_TERRAFORM,
  tofu: GO_TERRAFORM,
  terragrunt: GO_TERRAFORM,
  pulumi: { subcommands: { "*": { flags: "yfs", values: "s", long: ["yes", "skip-preview", "force"], longValues: ["stack", "target"] } } },
  cdk: { subcommands: { "*": { flags: "f", long: ["force", "all"] } } },
  aws: {
    longValues: ["profile", "region", "output", "endpoint-url", "query", "desired-count", "desired-capacity", "max-size", "min-size", "cluster", "service", "auto-scaling-group-name", "instance-ids", "bucket", "key"],
    long: ["debug", "no-verify-ssl", "no-paginate", "recursive", "force", "dryrun", "dry-run", "no-dry-run"],
  },
  systemctl: SYSTEMCTL,
  service: { style: "posix", long: ["status-all", "help", "version", "full-restart"] },
  launchctl: { subcommands: { "*": { flags: "wF" } } },
  shutdown: SHUTDOWN,
  reboot: { flags: "pfwndh", long: ["halt", "poweroff", "reboot", "force", "wtmp-only", "no-wtmp", "no-wall", "help"] },
  halt: { flags: "pfwndh", long: ["halt", "poweroff", "reboot", "force", "wtmp-only", "no-wtmp", "no-wall", "help"] },
  poweroff: { flags: "pfwndh", long: ["halt", "poweroff", "reboot", "force", "wtmp-only", "no-wtmp", "no-wall", "help"] },
  kill: { style: "kill" },
  pkill: PKILL,
  pgrep: PKILL,
  killall: KILLALL,
  killall5: { numeric: true, flags: "o", values: "o" },
  wipefs: WIPEFS,
  sgdisk: { flags: "ZoGgp", values: "dnct", long: ["zap-all", "zap", "clear", "mbrtogpt", "print", "pretend"], canonical: { "--zap-all": "-Z", "--clear": "-o", "--zap": "-z" } },
  blkdiscard: { flags: "fsvzq", values: "opl", long: ["force", "secure", "verbose", "zeroout", "quiet"] },
  fdisk: { flags: "lsbBcCdhHuVwWxY", values: "bcCHLStuWw", long: ["list", "list-details", "getsz"], canonical: { "--list": "-l" } },
  sfdisk: { flags: "lsdJgrVAaNnqf", long: ["list", "show-size", "dump", "json", "show-geometry", "verify", "activate", "append", "no-act", "quiet", "force", "delete"], canonical: { "--list": "-l", "--dump": "-d", "--json": "-J", "--show-size": "-s" } },
  parted: { flags: "lmsafv", long: ["list", "machine", "script", "fix", "align", "version"], canonical: { "--list": "-l", "--script": "-s" } },
  cryptsetup: CRYPTSETUP,
  usermod: USERMOD,
  gpasswd: { values: "adMARr", long: ["add", "delete", "members", "administrators"], canonical: { "--add": "-a", "--delete": "-d" } },
  adduser: { long: ["system", "disabled-password", "disabled-login", "quiet", "force-badname"], longValues: ["home", "shell", "uid", "gid", "gecos", "ingroup", "group", "firstuid", "lastuid"] },
  setcap: { flags: "qv", values: "n" },
  psql: PSQL,
  pgcli: { values: "hpUdWw", longValues: ["host", "port", "username", "dbname"], long: ["less-chatty"] },
  mysql: MYSQL,
  mariadb: MYSQL,
  sqlite3: SQLITE,
  sqlite: SQLITE,
  duckdb: { ...SQLITE, longValues: [...(SQLITE.longValues ?? []), "c"] },
  "clickhouse-client": CLICKHOUSE,
  sqlcmd: SQLCMD,
  cqlsh: CQLSH,
  snowsql: SNOWSQL,
  mongo: MONGO,
  mongosh: MONGO,
  "redis-cli": REDIS_CLI,
  dropdb: { flags: "eiwWf", values: "hpU", long: ["echo", "interactive", "if-exists", "force", "no-password", "password"], longValues: ["host", "port", "username", "maintenance-db"] },
  mysqladmin: { flags: "fsvVwp", values: "hPSuO", long: ["force", "silent", "verbose"], longValues: ["host", "port", "user", "socket"], longOptional: ["password"] },
  python: PYTHON,
  pypy: PYTHON,
  node: NODE,
  nodejs: NODE,
  bun: NODE,
  perl: PERL,
  ruby: RUBY,
  php: PHP,
  lua: LUA,
  luajit: LUA,
  Rscript: { style: "posix", values: "e", long: ["vanilla", "verbose", "no-environ", "no-save", "no-restore"] },
  pwsh: PWSH,
  "pwsh.exe": PWSH,
  powershell: PWSH,
  "powershell.exe": PWSH,
  R: { style: "posix", values: "e", long: ["vanilla", "verbose", "no-environ", "no-save", "no-restore", "slave", "quiet", "silent", "interactive"] },
  expect: { style: "posix", flags: "dinNbv", values: "cfD" },
  julia: { style: "posix", values: "eEpLJO", long: ["quiet", "banner", "color", "startup-file", "history-file"], longValues: ["eval", "print", "project", "threads", "load"] },
  osascript: { style: "posix", values: "els" },
  curl: CURL,
  wget: WGET,
  base64: BASE64,
  base32: BASE64,
  basenc: { ...BASE64, long: [...(BASE64.long ?? []), "base64", "base64url", "base32", "base32hex", "base16", "base2msbf", "base2lsbf", "z85"] },
  xxd: XXD,
  openssl: OPENSSL,
  gpg: GPG,
  gzip: DECOMPRESSOR,
  bzip2: DECOMPRESSOR,
  xz: DECOMPRESSOR,
  zstd: DECOMPRESSOR,
  lz4: DECOMPRESSOR,
  tr: TR,
  ssh: SSH,
  scp: { flags: "346ABCOpqRrTv", values: "cDFiJloPSX" },
  sftp: { flags: "46aCfNpqrv", values: "BbcDFiJloPRsS" },
  rsync: {
    flags: "vqcarRbuldLkKHpEAXogDtOJSnWxCzPhiFm0s8T",
    values: "eBfT",
    long: ["verbose", "quiet", "archive", "recursive", "del", "delete", "delete-before", "delete-during", "delete-delay", "delete-after", "delete-excluded", "remove-source-files", "dry-run", "compress", "progress", "partial", "checksum", "update", "inplace", "append", "links", "hard-links", "perms", "times", "human-readable", "stats", "itemize-changes", "force", "existing", "ignore-existing", "no-motd"],
    longValues: ["rsh", "rsync-path", "exclude", "include", "exclude-from", "include-from", "filter", "files-from", "backup-dir", "suffix", "temp-dir", "chmod", "chown", "timeout", "bwlimit", "log-file", "password-file", "port", "out-format", "info", "debug", "max-size", "min-size", "max-delete"],
    canonical: { "--rsh": "-e", "--recursive": "-r", "--archive": "-a", "--dry-run": "-n", "--del": "--delete-during" },
  },
  zip: { flags: "rRjqvmTudfFgDXyzloAJ0123456789", values: "bnstxiP", long: ["recurse-paths", "quiet", "verbose", "test", "move"], longValues: ["unzip-command", "password", "temp-path", "suffixes", "exclude", "include"], canonical: { "--unzip-command": "-TT" } },
  vim: VIM,
  vi: VIM,
  nvim: VIM,
  ex: VIM,
  view: VIM,
  "ssh-keygen": { flags: "ABDeEHhiLlmqRUvyYcKkOpPQ", values: "abCfFGjJMnNOrstVwzIZ" },
  chattr: { flags: "RVf", values: "pv" },
  crontab: { flags: "lreisT", values: "uc" },
  sort: { flags: "bdfgiMhnRrVcmsuz", values: "kotST", long: ["unique", "reverse", "numeric-sort", "check", "merge", "stable", "zero-terminated"], longValues: ["output", "key", "field-separator", "buffer-size", "temporary-directory", "parallel", "files0-from"], longOptional: ["sort", "random-source", "compress-program"], canonical: { "--output": "-o", "--key": "-k", "--field-separator": "-t" } },
  iconv: { flags: "cls", values: "fto", long: ["list", "silent"], longValues: ["from-code", "to-code", "output"], canonical: { "--output": "-o", "--from-code": "-f", "--to-code": "-t" } },
  passwd: { flags: "adelkSuqx", values: "nwiRP", long: ["all", "delete", "expire", "lock", "keep-tokens", "status", "unlock", "quiet", "stdin"], longValues: ["mindays", "maxdays", "warndays", "inactive", "root", "prefix"], canonical: { "--delete": "-d", "--unlock": "-u", "--lock": "-l" } },
  gdb: { style: "dash-long", long: ["batch", "q", "quiet", "silent", "nx", "n", "nh", "args", "tui", "readnow", "write"], longValues: ["ex", "iex", "x", "ix", "p", "pid", "cd", "d", "directory", "s", "symbols", "e", "exec", "se", "c", "core", "tty", "ex", "init-command", "command", "eval-command", "init-eval-command"], canonical: { "-eval-command": "-ex", "-init-eval-command": "-iex" } },
  lldb: { style: "posix", flags: "bxXQ", values: "oOskSKpnacf", long: ["batch", "no-lldbinit", "source-quietly"], longValues: ["one-line", "one-line-before-file", "source", "source-before-file", "attach-pid", "attach-name", "arch", "core", "file"], canonical: { "--one-line": "-o", "--one-line-before-file": "-O" } },
  npm: SUBCOMMANDS_ONLY,
  pnpm: { style: "posix", values: "C", longValues: ["dir", "filter", "workspace-root"], subcommands: { "*": {} } },
  yarn: { style: "posix", longValues: ["cwd", "mutex"], subcommands: { "*": {} } },
  uv: { style: "posix", longValues: ["directory", "project", "config-file", "cache-dir"], subcommands: { "*": {} } },
  poetry: { style: "posix", values: "CP", longValues: ["directory", "project"], subcommands: { "*": {} } },
  pipenv: SUBCOMMANDS_ONLY,
  pipx: SUBCOMMANDS_ONLY,
  bundle: SUBCOMMANDS_ONLY,
  conda: SUBCOMMANDS_ONLY,
  mise: { style: "posix", values: "C", longValues: ["cd", "env"], subcommands: { "*": {} } },
  direnv: SUBCOMMANDS_ONLY,
  nix: { style: "posix", longValues: ["option", "extra-experimental-features"], subcommands: { "*": {} } },
  doppler: SUBCOMMANDS_ONLY,
  op: SUBCOMMANDS_ONLY,
  infisical: SUBCOMMANDS_ONLY,
  dotenvx: SUBCOMMANDS_ONLY,
  "aws-vault": SUBCOMMANDS_ONLY,
  tmux: { style: "posix", flags: "2CDluvNV", values: "cLSfT", subcommands: { "*": {} } },
  unzip: { flags: "lvtzTuUfnoqjCLKXVMaab", values: "dxPZ" },
  patch: { flags: "lfstuNREZcnevb", values: "pdiorDBFVYzg", long: ["forward", "reverse", "dry-run", "batch", "force", "silent", "quiet"], longValues: ["strip", "directory", "input", "output", "reject-file", "backup-if-mismatch", "suffix"], canonical: { "--directory": "-d", "--input": "-i", "--output": "-o", "--strip": "-p" } },
  ed: { flags: "GslrEx", values: "p" },
  iptables: IPTABLES,
  ip6tables: IPTABLES,
  "iptables-legacy": IPTABLES,
  "iptables-nft": IPTABLES,
  "7z": SEVEN_ZIP,
  "7za": SEVEN_ZIP,
  "7zz": SEVEN_ZIP,
  fuser: { flags: "aiklmsuvMw4", values: "n" },
  gcloud: { values: "q", longValues: ["project", "zone", "region", "format", "account", "configuration", "max-instances"], long: ["quiet", "async", "help"] },
};

/** Shells: `-c` marks the first operand as the script; `-o`/`+o` and `-O`/`+O` take a value. */
export const SHELL_OPTIONS: OptionSpec = {
  style: "posix",
  flags: "abcefhikmnprstuvxBCEHPTls",
  values: "oO",
  long: ["login", "noprofile", "norc", "posix", "restricted", "verbose", "version", "help", "debugger", "dump-strings", "dump-po-strings", "pretty-print", "no-rcs", "interactive", "no-config", "private"],
  longValues: ["rcfile", "init-file", "init-command", "command"],
  canonical: { "--init-file": "--rcfile", "--command": "-c" },
};
