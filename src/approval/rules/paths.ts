/**
 * Path classes as data. `classifyPath` (detection/paths.ts) normalises a path
 * (`~`, `$HOME`, `${HOME}` → `~`; `//`, `/./`, `..` folded; trailing `/` and
 * trailing `/*` "contents of" globs stripped for the directory classes) and
 * tests it against these lists. Globs in a path are matched against the
 * directory lists, so `/e*` counts as `/etc`.
 */

/** Directories whose removal (of the directory or all of its contents) breaks the system. */
export const SYSTEM_DIRS: readonly string[] = [
  "/etc", "/usr", "/bin", "/sbin", "/boot", "/var", "/lib", "/lib32", "/lib64", "/libx32",
  "/dev", "/proc", "/sys", "/run", "/opt", "/srv", "/snap", "/mnt", "/media",
  "/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libexec", "/usr/local",
  "/usr/local/bin", "/usr/local/lib", "/usr/share", "/usr/include", "/usr/src",
  "/var/lib", "/var/log", "/var/cache", "/var/spool", "/var/mail", "/var/www",
  "/etc/ssh", "/etc/systemd", "/etc/apt", "/etc/init.d", "/etc/default",
  // macOS
  "/System", "/Library", "/Applications", "/private", "/private/etc", "/private/var", "/Volumes", "/cores",
];

/** Directories under which any write or delete counts as a system file write. */
export const SYSTEM_PATH_ROOTS: readonly string[] = [
  "/etc", "/usr", "/bin", "/sbin", "/boot", "/lib", "/lib32", "/lib64", "/libx32", "/var", "/sys", "/opt",
  "/proc/sys", "/System", "/Library", "/private/etc", "/private/var",
];

/** Exceptions to `SYSTEM_PATH_ROOTS` (scratch space). */
export const SYSTEM_PATH_EXCEPTIONS: readonly string[] = ["/var/tmp", "/var/folders", "/private/var/folders", "/private/tmp"];

/** Parents of home directories: `/home/NAME` and `/Users/NAME` are homes, and so are the parents themselves. */
export const HOME_PARENTS: readonly string[] = ["/home", "/Users"];

/** Home directories spelled out. */
export const HOME_DIRS: readonly string[] = ["/root", "/var/root"];

/** Environment variables that name a home directory (`$HOME`, `${HOME}`). */
export const HOME_VARIABLES: readonly string[] = ["HOME", "ZDOTDIR"];

/** Raw disks and memory devices. A write to one is hardline. */
export const BLOCK_DEVICE_PATTERNS: readonly RegExp[] = [
  /^\/dev\/(?:sd|hd|vd|xvd)[a-z]+\d*$/,
  /^\/dev\/nvme\d+(?:n\d+(?:p\d+)?)?$/,
  /^\/dev\/mmcblk\d+(?:p\d+)?$/,
  /^\/dev\/r?disk\d+(?:s\d+)?$/,
  /^\/dev\/(?:dm-\d+|md\d+|loop\d+|sr\d+|nbd\d+|zd\d+|rbd\d+)$/,
  /^\/dev\/(?:mapper|disk|md|zvol|vg[^/]*)\/.+$/,
  /^\/dev\/(?:mem|kmem|port)$/,
];

/** `/dev` entries that are harmless to write (`2>/dev/null`). */
export const HARMLESS_DEVICES: readonly RegExp[] = [
  /^\/dev\/(?:null|zero|full|random|urandom|tty|stdin|stdout|stderr|console|ptmx)$/,
  /^\/dev\/(?:fd|pts|shm)\/.*/,
  /^\/dev\/tcp\/.*/,
  /^\/dev\/udp\/.*/,
];

/** Credential and account files (patterns over the normalised path, `~` for home). */
export const CREDENTIAL_PATTERNS: readonly RegExp[] = [
  /(?:^|\/)\.ssh(?:\/|$)/,
  /(?:^|\/)authorized_keys2?$/,
  /(?:^|\/)\.aws(?:\/(?:credentials|config))?$/,
  /(?:^|\/)\.(?:netrc|npmrc|pypirc|git-credentials|pgpass|my\.cnf|vault-token|dockercfg|s3cfg|boto)$/,
  /(?:^|\/)\.docker\/config\.json$/,
  /(?:^|\/)\.kube\/config$/,
  /(?:^|\/)\.gnupg(?:\/|$)/,
  /(?:^|\/)\.config\/(?:gh\/hosts\.yml|gcloud(?:\/|$)|hub$)/,
  /(?:^|\/)\.azure(?:\/|$)/,
  /^\/etc\/(?:shadow|gshadow|passwd|group|sudoers|master\.passwd|security\/opasswd)-?$/,
  /^\/etc\/sudoers\.d(?:\/|$)/,
  /^\/etc\/ssh\/(?:ssh_host_|sshd_config)/,
  /^\/etc\/pam\.d(?:\/|$)/,
];

/** Files a shell runs when it starts (persistence). */
export const SHELL_RC_PATTERNS: readonly RegExp[] = [
  /(?:^|\/)\.(?:bashrc|bash_profile|bash_login|bash_logout|profile|zshrc|zprofile|zshenv|zlogin|zlogout|kshrc|mkshrc|cshrc|tcshrc|login)$/,
  /(?:^|\/)\.config\/fish\/(?:config\.fish|conf\.d\/.*)$/,
  /^\/etc\/(?:profile|bash\.bashrc|bashrc|zshrc|zprofile|zshenv|environment|csh\.cshrc|csh\.login)$/,
  /^\/etc\/(?:profile\.d|zsh)(?:\/|$)/,
];

/** Kernel files whose write halts or reboots the machine. */
export const KERNEL_TRIGGER_PATTERNS: readonly RegExp[] = [/^\/proc\/sysrq-trigger$/, /^\/proc\/sys\/kernel\/sysrq$/];

/** Environment files with an application's secrets (`.env`, `.env.local`), not their templates. */
export const ENV_FILE_PATTERNS: readonly RegExp[] = [/(?:^|\/)\.env(?:\.(?!(?:example|sample|template|dist|defaults?|schema|tpl)$)[^/]+)?$/i];

/** History files of shells and REPLs: wiping them hides what was done. */
export const HISTORY_PATTERNS: readonly RegExp[] = [
  /(?:^|\/)\.(?:bash_history|zsh_history|zhistory|sh_history|ksh_history|history|python_history|node_repl_history|psql_history|mysql_history|sqlite_history|lesshst|irb_history|rediscli_history|mongosh_history)$/,
  /(?:^|\/)\.local\/share\/fish\/fish_history$/,
];

/**
 * Where a path only known when it runs is still confined: scratch directories, and the
 * variables that name them or the working directory. Anything else computed may be a
 * protected file (path class `unbounded`).
 */
export const SCRATCH_PREFIXES: readonly string[] = ["/tmp/", "/var/tmp/", "/dev/shm/", "/private/tmp/"];
export const CONFINED_VARIABLES: readonly RegExp[] = [
  /^\$\{?(?:TMPDIR|TMP|TEMP|PWD|RUNNER_TEMP)(?:[:?=-][^}]*)?\}?\//,
  /^\$\(\s*(?:pwd|mktemp(?:\s+[^)]*)?|git rev-parse --(?:show-toplevel|git-dir|git-common-dir|absolute-git-dir))\s*\)\//,
];

/** Credential files whose content is not secret (public keys, host keys of others). */
export const PUBLIC_CREDENTIAL_PATTERNS: readonly RegExp[] = [/\.pub$/, /(?:^|\/)known_hosts2?(?:\.old)?$/, /(?:^|\/)authorized_keys2?$/];
