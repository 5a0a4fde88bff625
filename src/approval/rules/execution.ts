/**
 * Running code the command line does not show (remote code, decoded payloads,
 * commands hidden in options of read-only tools), privilege escalation and
 * permission changes.
 */
import type { Rule } from "./types.js";

/** `git -c` keys whose value is a command git runs (the value of `-c` is `key=value`). */
const GIT_EXEC_CONFIG =
  /^(?:core\.(?:pager|editor|sshcommand|fsmonitor|askpass|gitproxy|hookspath)|sequence\.editor|diff\.external|diff\.[^=]+\.(?:textconv|command)|merge\.[^=]+\.driver|filter\.[^=]+\.(?:clean|smudge|process)|gpg\.(?:[^=]+\.)?program|pager\.[^=]+|uploadpack\.packobjectshook|remote\.[^=]+\.(?:uploadpack|receivepack)|protocol\.(?:ext\.)?allow)=|^(?:alias\.[^=]+|credential(?:\.[^=]+)?\.helper)=\s*!/i;
/** The same keys as `git config KEY VALUE` operands (a persistent version of `-c`). */
const GIT_EXEC_KEY =
  /^(?:core\.(?:pager|editor|sshcommand|fsmonitor|askpass|gitproxy|hookspath)|sequence\.editor|diff\.external|diff\..+\.(?:textconv|command)|merge\..+\.driver|filter\..+\.(?:clean|smudge|process)|gpg\.(?:.+\.)?program|uploadpack\.packobjectshook|remote\..+\.(?:uploadpack|receivepack)|protocol\.(?:ext\.)?allow)$/i;

/** Plain pagers and editors, and `true`/`false` for `pager.<cmd>`: what agents set to avoid interactivity. */
const GIT_BENIGN_CONFIG =
  /^(?:core\.pager|core\.editor|sequence\.editor|pager\.[^=]+)=\s*(?:cat|less|more|true|false|:|vim?|nvim|nano|emacs|code(?:\s+--wait)?)?(?:\s+-[A-Za-z]+)*\s*$|^protocol\.(?:ext\.)?allow=\s*(?:never|user)\s*$/i;

export const EXECUTION_RULES: readonly Rule[] = [
  {
    id: "remote-code-execution",
    description: "Runs code downloaded from the network (curl/wget/nc piped or substituted into a shell or interpreter).",
    category: "remote_code_execution",
    hardline: false,
    match: [
      { kind: "finding", finding: "network-to-interpreter" },
      { kind: "finding", finding: "payload-network-exec" },
    ],
  },
  {
    id: "obfuscated-execution",
    description: "Runs code that is decoded or transformed first (base64, xxd, openssl, tr, rev, decompression), so what runs is hidden.",
    category: "remote_code_execution",
    hardline: false,
    match: [
      { kind: "finding", finding: "decode-to-interpreter" },
      { kind: "finding", finding: "payload-obfuscated-exec" },
    ],
  },
  {
    id: "exec-via-tool-option",
    description: "Runs a command hidden in an option or script of a tool that usually only reads (git -c core.pager/alias.!…, rg --pre, tar --checkpoint-action, sed e, awk system()).",
    category: "remote_code_execution",
    hardline: false,
    match: [
      { kind: "command", programs: ["git"], optionValues: [{ option: "-c", pattern: GIT_EXEC_CONFIG, unless: GIT_BENIGN_CONFIG }] },
      { kind: "command", programs: ["git"], optionValues: [{ option: "--config-env", pattern: GIT_EXEC_CONFIG, unless: GIT_BENIGN_CONFIG }] },
      { kind: "command", programs: ["git"], optionValues: [{ option: "--exec-path", pattern: /./ }] },
      { kind: "command", programs: ["git"], subcommands: ["config"], minOperands: 2, operands: [{ which: 0, pattern: GIT_EXEC_KEY }, { which: 1, unless: /^\s*(?:cat|less|more|true|false|:|vim?|nvim|nano|emacs|code(?:\s+--wait)?|never|user)(?:\s+-[A-Za-z]+)*\s*$/i }] },
      { kind: "command", programs: ["git"], subcommands: ["config"], minOperands: 2, operands: [{ which: 0, pattern: /^(?:alias\..+|credential(?:\..+)?\.helper)$/i }, { which: 1, pattern: /^\s*!/ }] },
      { kind: "command", programs: ["git"], anyOptions: ["--upload-pack", "--receive-pack"] },
      { kind: "command", programs: ["git"], subcommands: ["rebase"], anyOptions: ["-x"] },
      { kind: "command", programs: ["git"], operands: [{ pattern: /^ext::/ }] },
      { kind: "command", programs: ["rg"], anyOptions: ["--pre"] },
      { kind: "command", programs: ["tar", "gtar", "bsdtar"], optionValues: [{ option: "--checkpoint-action", pattern: /^exec=/ }] },
      { kind: "command", programs: ["tar", "gtar", "bsdtar"], anyOptions: ["--to-command", "-I", "-F", "--rsh-command", "--rmt-command"] },
      { kind: "command", programs: ["zip"], anyOptions: ["-TT"] },
      { kind: "command", programs: ["vim", "vi", "nvim", "ex", "view"], optionValues: [{ option: "-c", pattern: /^\s*:?\s*(?:silent!?\s*)?!/ }] },
      { kind: "finding", finding: "sed-exec" },
      { kind: "finding", finding: "awk-exec" },
      { kind: "finding", finding: "sql-shell-escape" },
    ],
  },
  {
    id: "exec-via-environment",
    description: "Sets an environment variable that makes programs load or run other code (LD_PRELOAD, BASH_ENV, PERL5OPT, ...).",
    category: "remote_code_execution",
    hardline: false,
    match: { kind: "finding", finding: "exec-env" },
  },
  {
    id: "unanalysable",
    description: "The command cannot be fully analysed (a parse error, a command name or script that is only known when it runs, or nesting deeper than the budget), so it is treated as dangerous.",
    category: "unanalysable",
    hardline: false,
    match: { kind: "finding", finding: "unanalysable" },
  },
  {
    id: "privilege-root-shell",
    description: "Opens an interactive shell as root or another user (sudo -i/-s, sudo su, su without -c, sudo bash, pkexec).",
    category: "privilege_escalation",
    hardline: false,
    match: { kind: "finding", finding: "root-shell" },
  },
  {
    id: "privilege-setuid",
    description: "Makes a program run with its owner's privileges (setuid/setgid bit, file capabilities).",
    category: "privilege_escalation",
    hardline: false,
    match: [
      { kind: "command", programs: ["chmod"], operands: [{ which: "first", pattern: /^(?:0*[2-7][0-7]{3}|[ugoa]*[+=][rwxXt]*s[rwxXst]*(?:,.*)?|.*,[ugoa]*[+=][rwxXt]*s.*)$/ }] },
      { kind: "command", programs: ["setcap"], minOperands: 2 },
    ],
  },
  {
    id: "privilege-group-add",
    description: "Adds a user to an administrative group (sudo, wheel, admin, root, docker) or gives them uid 0.",
    category: "privilege_escalation",
    hardline: false,
    match: [
      { kind: "command", programs: ["usermod"], optionValues: [{ option: "-G", pattern: /(?:^|,)(?:sudo|wheel|admin|root|docker|adm|disk|lxd|shadow)(?:,|$)/ }] },
      { kind: "command", programs: ["usermod", "useradd"], optionValues: [{ option: "-u", equals: ["0"] }] },
      { kind: "command", programs: ["usermod", "useradd"], optionValues: [{ option: "-g", equals: ["0", "root", "sudo", "wheel"] }] },
      { kind: "command", programs: ["gpasswd"], optionValues: [{ option: "-a", pattern: /./ }], operands: [{ which: "last", equals: ["sudo", "wheel", "admin", "root", "docker", "adm", "disk", "lxd"] }] },
      { kind: "command", programs: ["adduser", "addgroup"], minOperands: 2, operands: [{ which: "last", equals: ["sudo", "wheel", "admin", "root", "docker", "adm", "disk", "lxd"] }] },
      { kind: "command", programs: ["dseditgroup"], operands: [{ which: "last", equals: ["admin", "wheel"] }] },
    ],
  },
  {
    id: "account-change",
    description: "Removes a password, sets passwords, or deletes users or groups (passwd -d, chpasswd, usermod -p, userdel).",
    category: "privilege_escalation",
    hardline: false,
    match: [
      { kind: "command", programs: ["passwd"], anyOptions: ["-d", "--delete", "-u", "--unlock", "--stdin"] },
      { kind: "command", programs: ["chpasswd", "chgpasswd", "newusers"] },
      { kind: "command", programs: ["usermod"], anyOptions: ["-p", "--password"] },
      { kind: "command", programs: ["userdel", "deluser", "groupdel", "delgroup"], minOperands: 1 },
    ],
  },
  {
    id: "privilege-container-host",
    description: "Starts a container with the host's root, home, system directories or Docker socket mounted, or with host privileges (--privileged, --pid=host).",
    category: "privilege_escalation",
    hardline: false,
    match: [
      {
        kind: "command",
        programs: ["docker", "podman"],
        subcommands: ["run|create"],
        optionValues: [{ option: "-v", pattern: /^(?:\/+|\/(?:etc|root|home|boot|usr|var|dev|proc|sys|var\/run\/docker\.sock|run\/docker\.sock|run\/podman\/podman\.sock)\/?|~\/?|\$HOME\/?|\$\{HOME\}\/?)(?::|$)/ }],
      },
      {
        kind: "command",
        programs: ["docker", "podman"],
        subcommands: ["run|create"],
        optionValues: [{ option: "--mount", pattern: /(?:^|,)(?:source|src)=(?:\/+|\/(?:etc|root|home|boot|usr|var|dev|proc|sys)\/?|\/(?:var\/)?run\/docker\.sock)(?:,|$)/ }],
      },
      { kind: "command", programs: ["docker", "podman"], subcommands: ["run|create"], anyOptions: ["--privileged"] },
      { kind: "command", programs: ["docker", "podman"], subcommands: ["run|create"], optionValues: [{ option: "--pid", equals: ["host"] }] },
    ],
  },
  {
    id: "permission-recursive-system",
    description: "Changes permissions or ownership recursively on /, a home directory or a system directory.",
    category: "permission_change",
    hardline: false,
    match: [
      { kind: "command", programs: ["chmod", "chown", "chgrp", "setfacl"], anyOptions: ["-R"], operands: [{ classes: ["root", "home", "system-dir"] }] },
    ],
    overrides: ["permission-world-writable", "ownership-recursive"],
  },
  {
    id: "permission-world-writable",
    description: "Makes files writable by every user (chmod 777, o+w, a+w).",
    category: "permission_change",
    hardline: false,
    match: {
      kind: "command",
      programs: ["chmod"],
      operands: [{ which: "first", pattern: /^(?:0*[0-7]?[0-7][0-7][2367]|(?:.*,)?[ugo]*[ao][ugoa]*[+=][rxXst]*w.*|(?:.*,)?[+=][rxXst]*w.*)$/ }],
    },
  },
  {
    id: "permission-protected-file",
    description: "Changes the permissions, owner or attributes of a system file, or opens a credential file to other users (chmod 644 ~/.ssh/id_rsa).",
    category: "permission_change",
    hardline: false,
    match: [
      { kind: "command", programs: ["chmod", "chown", "chgrp", "setfacl", "chattr"], noOptions: ["--help"], operands: [{ classes: ["system-path"] }] },
      // Tightening (600, 700, u+rw, go-rwx) is fine; giving group or others access is not.
      { kind: "command", programs: ["chmod"], operands: [{ which: "first", pattern: /^(?:\d{3,4}|[ugoa]*[+=][rwxXst]*)(?:,.*)?$/, unless: /^(?:0*[0-7]?[0-7]00|u[+=][rwxXst]*|[ugoa]*-[rwxXst]*)$/ }, { classes: ["credential", "env-file"], unless: /(?:\.pub|known_hosts2?|authorized_keys2?|\.ssh\/config|\.ssh)$/ }] },
    ],
  },
  {
    id: "ownership-recursive",
    description: "Changes the owner or group of a directory tree.",
    category: "permission_change",
    hardline: false,
    match: { kind: "command", programs: ["chown", "chgrp"], anyOptions: ["-R"] },
  },
];
