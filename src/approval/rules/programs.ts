/**
 * Program groups the engine's structural analysis needs, as data: which
 * programs run a script they read (shells, interpreters, SQL clients), which
 * fetch from the network, which decode, which write files, which options
 * of otherwise read-only tools hold a command to run, and which read or send secrets.
 */
import type { CommandMatcher } from "./types.js";

/** Shells: `-c SCRIPT`, a script file, or the script on stdin. Parsed with the bash grammar. */
export const SHELLS: ReadonlySet<string> = new Set([
  "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "rbash", "fish", "csh", "tcsh", "busybox-sh",
]);

/** `source FILE` / `. FILE`: run a file in the current shell. */
export const SOURCE_COMMANDS: ReadonlySet<string> = new Set(["source", "."]);

export type PayloadLanguage = "python" | "javascript" | "perl" | "ruby" | "php" | "lua" | "r" | "tcl" | "powershell" | "cmd" | "applescript";

export interface InterpreterSpec {
  /** The payload language whose calls are inspected (payload.ts, foreign-code.ts); `null`: code in it is unanalysable. */
  language: PayloadLanguage | null;
  /** Canonical options whose values are program text (`python -c`, `node -e`, `perl -e`). */
  codeOptions: readonly string[];
}

/**
 * Interpreters, keyed by the program name without a version suffix
 * (`python3.12` → `python`, `node18` → `node`; see `interpreterName` in the engine).
 */
export const INTERPRETERS: Readonly<Record<string, InterpreterSpec>> = {
  python: { language: "python", codeOptions: ["-c"] },
  pypy: { language: "python", codeOptions: ["-c"] },
  node: { language: "javascript", codeOptions: ["-e", "-p"] },
  nodejs: { language: "javascript", codeOptions: ["-e", "-p"] },
  bun: { language: "javascript", codeOptions: ["-e", "-p"] },
  deno: { language: "javascript", codeOptions: [] },
  perl: { language: "perl", codeOptions: ["-e"] },
  ruby: { language: "ruby", codeOptions: ["-e"] },
  php: { language: "php", codeOptions: ["-r", "-B", "-R", "-E"] },
  lua: { language: "lua", codeOptions: ["-e"] },
  luajit: { language: "lua", codeOptions: ["-e"] },
  Rscript: { language: "r", codeOptions: ["-e"] },
  R: { language: "r", codeOptions: ["-e"] },
  tclsh: { language: "tcl", codeOptions: [] },
  wish: { language: "tcl", codeOptions: [] },
  expect: { language: "tcl", codeOptions: ["-c"] },
  pwsh: { language: "powershell", codeOptions: ["-c"] },
  powershell: { language: "powershell", codeOptions: ["-c"] },
  "powershell.exe": { language: "powershell", codeOptions: ["-c"] },
  "pwsh.exe": { language: "powershell", codeOptions: ["-c"] },
  osascript: { language: "applescript", codeOptions: ["-e"] },
  julia: { language: null, codeOptions: ["-e", "-E"] },
  jshell: { language: null, codeOptions: [] },
  guile: { language: null, codeOptions: ["-c"] },
  sbcl: { language: null, codeOptions: ["--eval"] },
};

/** Programs whose output comes from the network. */
export const NETWORK_FETCHERS: ReadonlySet<string> = new Set([
  "curl", "wget", "wget2", "fetch", "http", "https", "xh", "httpie", "aria2c", "lwp-request", "lwp-download", "GET",
  "nc", "ncat", "netcat", "socat", "telnet", "tftp", "ftp", "lynx", "links", "w3m", "elinks", "axel", "curlie",
]);

/** How a decoder turns its input into output; `opaque` means it cannot be computed here. */
export type DecodeKind = "base64" | "base32" | "hex" | "tr" | "rev" | "opaque";

export interface DecoderSpec {
  /** Subcommand words that must lead (`openssl base64`, `openssl enc`). */
  subcommands?: readonly string[];
  /** Canonical options of which one must be present (`-d`); empty: always decodes. */
  anyOptions?: readonly string[];
  decode: DecodeKind;
}

/** Programs that decode, decompress or transform text into something else. Into a shell, that is obfuscated execution. */
export const DECODERS: Readonly<Record<string, readonly DecoderSpec[]>> = {
  base64: [{ anyOptions: ["-d"], decode: "base64" }],
  base32: [{ anyOptions: ["-d"], decode: "base32" }],
  basenc: [{ anyOptions: ["-d"], decode: "opaque" }],
  openssl: [
    { subcommands: ["base64"], anyOptions: ["-d"], decode: "base64" },
    { subcommands: ["enc"], anyOptions: ["-d"], decode: "opaque" },
  ],
  xxd: [{ anyOptions: ["-r"], decode: "hex" }],
  tr: [{ decode: "tr" }],
  rev: [{ decode: "rev" }],
  uudecode: [{ decode: "opaque" }],
  gunzip: [{ decode: "opaque" }],
  zcat: [{ decode: "opaque" }],
  gzip: [{ anyOptions: ["-d"], decode: "opaque" }],
  bzip2: [{ anyOptions: ["-d"], decode: "opaque" }],
  bunzip2: [{ decode: "opaque" }],
  bzcat: [{ decode: "opaque" }],
  xz: [{ anyOptions: ["-d"], decode: "opaque" }],
  unxz: [{ decode: "opaque" }],
  xzcat: [{ decode: "opaque" }],
  zstd: [{ anyOptions: ["-d"], decode: "opaque" }],
  unzstd: [{ decode: "opaque" }],
  lz4: [{ anyOptions: ["-d"], decode: "opaque" }],
  gpg: [{ anyOptions: ["-d"], decode: "opaque" }],
};

/** Programs that only pass their input through (or a fixed part of it): the stream keeps its origin. */
export const PASS_THROUGH: ReadonlySet<string> = new Set([
  "cat", "tee", "head", "tail", "dd", "buffer", "pv", "stdbuf", "unbuffer",
]);

export interface SqlClientSpec {
  /** Canonical options whose values are statements (`psql -c`, `mysql -e`). */
  codeOptions: readonly string[];
  /** Operands from this index on are statements (`sqlite3 DB "SQL"` → 1). */
  operandsFrom?: number;
  /** The text is not SQL but a JavaScript shell (`mongosh --eval`). */
  dialect?: "sql" | "mongo";
}

/** Database clients: their statements come from options, operands, heredocs, here-strings or a pipe. */
export const SQL_CLIENTS: Readonly<Record<string, SqlClientSpec>> = {
  psql: { codeOptions: ["-c"] },
  pgcli: { codeOptions: ["-e"] },
  mysql: { codeOptions: ["-e"] },
  mariadb: { codeOptions: ["-e"] },
  sqlite3: { codeOptions: ["-cmd"], operandsFrom: 1 },
  sqlite: { codeOptions: ["-cmd"], operandsFrom: 1 },
  duckdb: { codeOptions: ["-c", "-cmd"], operandsFrom: 1 },
  "clickhouse-client": { codeOptions: ["-q"] },
  sqlcmd: { codeOptions: ["-Q", "-q"] },
  cqlsh: { codeOptions: ["-e"] },
  snowsql: { codeOptions: ["-q"] },
  mongo: { codeOptions: ["--eval"], dialect: "mongo" },
  mongosh: { codeOptions: ["--eval"], dialect: "mongo" },
};

export interface WriterSpec {
  /** Which operands are written: all of them, the last one (a copy's destination), or none (only `option`). */
  operands: "all" | "last" | "none";
  /** Canonical option(s) whose values are written files (`dd of=`, `cp -t`, `curl -o`, `find -fprint`). */
  option?: string | readonly string[];
  /** Only when this canonical option is present (`sed -i`). */
  when?: string;
  /** Not when one of these canonical options is present (`ssh-keygen -l` only reads). */
  unless?: readonly string[];
  /** At least this many operands for `last` (a lone `cp x` writes nothing). */
  minOperands?: number;
}

/** Programs that write or delete the files named in their arguments. */
export const FILE_WRITERS: Readonly<Record<string, WriterSpec>> = {
  tee: { operands: "all" },
  sponge: { operands: "all" },
  truncate: { operands: "all" },
  cp: { operands: "last", option: "-t", minOperands: 2 },
  mv: { operands: "last", option: "-t", minOperands: 2 },
  install: { operands: "last", option: "-t", minOperands: 2 },
  ln: { operands: "last", option: "-t", minOperands: 2 },
  rsync: { operands: "last", minOperands: 2 },
  scp: { operands: "last", minOperands: 2 },
  dd: { operands: "none", option: "of" },
  sed: { operands: "all", when: "-i" },
  perl: { operands: "all", when: "-i" },
  curl: { operands: "none", option: "-o" },
  wget: { operands: "none", option: "-O" },
  rm: { operands: "all" },
  unlink: { operands: "all" },
  rmdir: { operands: "all" },
  shred: { operands: "all" },
  srm: { operands: "all" },
  sudoedit: { operands: "all" },
  chattr: { operands: "all" },
  "ssh-keygen": { operands: "none", option: "-f", unless: ["-l", "-y", "-F", "-B", "-D"] },
  // Editors given a file edit it (scripted with -c/-s/heredocs, or interactively).
  ed: { operands: "all" },
  red: { operands: "all" },
  ex: { operands: "all" },
  vim: { operands: "all" },
  vi: { operands: "all" },
  nvim: { operands: "all" },
  nano: { operands: "all" },
  emacs: { operands: "all" },
  pico: { operands: "all" },
  micro: { operands: "all" },
  patch: { operands: "all", option: "-o" },
  touch: { operands: "all" },
  // Converters and formatters that rewrite files in place, and options that name an output file.
  dos2unix: { operands: "all" },
  unix2dos: { operands: "all" },
  mac2unix: { operands: "all" },
  unix2mac: { operands: "all" },
  sort: { operands: "none", option: "-o" },
  iconv: { operands: "none", option: "-o" },
  shfmt: { operands: "all", when: "-w" },
  tar: { operands: "none", option: "-C", when: "-x" },
  gtar: { operands: "none", option: "-C", when: "-x" },
  bsdtar: { operands: "none", option: "-C", when: "-x" },
  unzip: { operands: "none", option: "-d" },
  gpg: { operands: "none", option: "-o" },
  find: { operands: "none", option: ["-fprint", "-fprint0", "-fprintf", "-fls"] },
  openssl: { operands: "none", option: "-out" },
  "ssh-copy-id": { operands: "none" },
};

/** Programs whose output holds the content of the files they are given (`cat ~/.ssh/id_rsa`, `tar c ~/.aws`). */
export const FILE_READERS: ReadonlySet<string> = new Set([
  "cat", "tac", "head", "tail", "less", "more", "base64", "base32", "basenc", "xxd", "od", "hexdump", "strings", "gzip", "bzip2",
  "xz", "zstd", "lz4", "tar", "gtar", "bsdtar", "zip", "7z", "gpg", "openssl", "jq", "yq", "grep", "rg", "sed", "awk", "sort", "uniq",
  "cut", "tr", "nl", "paste", "column", "dd", "pv", "cp", "install", "ssh-keygen",
]);

/** Programs that print secrets of their own (the environment, exported keys, tokens). */
export const SECRET_SOURCES: readonly CommandMatcher[] = [
  { kind: "command", programs: ["printenv", "set"], maxOperands: 0 },
  { kind: "command", programs: ["env"], maxOperands: 0 },
  { kind: "command", programs: ["export", "declare", "typeset"], anyOptions: ["-p", "-x"] },
  { kind: "command", programs: ["gpg", "gpg2"], anyOptions: ["--export-secret-keys", "--export-secret-subkeys"] },
  { kind: "command", programs: ["aws"], operands: [{ which: 0, equals: ["configure"] }, { which: 1, equals: ["export-credentials", "get"] }] },
  { kind: "command", programs: ["gh", "glab"], operands: [{ which: 0, equals: ["auth"] }, { which: 1, equals: ["token", "status"] }] },
  { kind: "command", programs: ["kubectl"], subcommands: ["config"], operands: [{ which: 0, equals: ["view"] }], anyOptions: ["--raw"] },
  { kind: "command", programs: ["security"], operands: [{ which: 0, pattern: /^find-(?:generic|internet)-password$/ }] },
  { kind: "command", programs: ["op"], operands: [{ which: 0, equals: ["read", "inject"] }] },
  { kind: "command", programs: ["doppler", "infisical"], operands: [{ which: 0, equals: ["secrets"] }] },
  { kind: "command", programs: ["vault"], operands: [{ which: 0, equals: ["read", "kv"] }] },
  { kind: "command", programs: ["ssh-add"], anyOptions: ["-L"] },
];

/** Programs that send what they read on stdin to another machine. */
export const STDIN_SENDERS: ReadonlySet<string> = new Set(["nc", "ncat", "netcat", "socat", "telnet", "openssl", "ssh", "http", "https", "xh", "xhs"]);

/** Programs that copy files they are given to another machine (the last operand, when remote, is where). */
export const FILE_SENDERS: ReadonlySet<string> = new Set(["scp", "sftp", "rsync", "rclone", "aws", "gsutil", "gcloud", "az", "s3cmd", "gh", "glab", "azcopy"]);

/**
 * Environment variables whose value is a command some program runs
 * (`GIT_SSH_COMMAND='…' git fetch`). The value is scanned as a script; `flag`
 * ones are also reported as `exec-via-environment` on their own.
 */
export const EXEC_ENV_VARIABLES: Readonly<Record<string, { flag: boolean; strip?: RegExp }>> = {
  GIT_SSH_COMMAND: { flag: false },
  GIT_SSH: { flag: false },
  GIT_PAGER: { flag: false },
  GIT_EDITOR: { flag: false },
  GIT_SEQUENCE_EDITOR: { flag: false },
  GIT_EXTERNAL_DIFF: { flag: false },
  GIT_PROXY_COMMAND: { flag: false },
  GIT_ASKPASS: { flag: false },
  SSH_ASKPASS: { flag: false },
  PAGER: { flag: false },
  MANPAGER: { flag: false },
  EDITOR: { flag: false },
  VISUAL: { flag: false },
  PROMPT_COMMAND: { flag: false },
  LD_PRELOAD: { flag: true },
  LD_AUDIT: { flag: true },
  DYLD_INSERT_LIBRARIES: { flag: true },
  BASH_ENV: { flag: true },
  ENV: { flag: true },
  PERL5OPT: { flag: true },
  NODE_OPTIONS: { flag: false },
  PYTHONSTARTUP: { flag: false },
  // less runs its input preprocessor: `|cmd %s` (the leading `|` or `||` only says how output is read).
  LESSOPEN: { flag: false, strip: /^\|{1,2}-?/ },
  LESSCLOSE: { flag: false, strip: /^\|{1,2}-?/ },
};

/**
 * Options of tools that look read-only but run a command. The engine extracts
 * the command (the value, or the capture group of `value`) and scans it as a
 * script; whether the option is also flagged on its own is up to the rules
 * (`exec-via-tool-option` in execution.ts).
 */
export interface EmbeddedScript {
  programs: readonly string[];
  subcommands?: readonly string[];
  /** Canonical option. */
  option: string;
  /** When given, only values matching it count, and group 1 (if any) is the command. */
  value?: RegExp;
  /** The value is a program and its arguments rather than shell text (scanned as a command line all the same). */
  argv?: boolean;
}

export const EMBEDDED_SCRIPTS: readonly EmbeddedScript[] = [
  {
    programs: ["git"],
    option: "-c",
    value:
      /^(?:core\.(?:pager|editor|sshcommand|fsmonitor|askpass|gitproxy)|sequence\.editor|diff\.external|diff\.[^=]+\.(?:textconv|command)|merge\.[^=]+\.driver|filter\.[^=]+\.(?:clean|smudge|process)|gpg\.(?:[^=]+\.)?program|pager\.[^=]+|uploadpack\.packobjectshook|remote\.[^=]+\.(?:uploadpack|receivepack)|core\.hookspath)=([\s\S]*)$/i,
  },
  { programs: ["git"], option: "-c", value: /^(?:alias\.[^=]+|credential(?:\.[^=]+)?\.helper)=\s*!([\s\S]*)$/i },
  { programs: ["git"], subcommands: ["clone|fetch|pull|ls-remote|archive"], option: "--upload-pack" },
  { programs: ["git"], subcommands: ["push|send-pack"], option: "--receive-pack" },
  { programs: ["git"], subcommands: ["rebase"], option: "-x" },
  { programs: ["rg"], option: "--pre", argv: true },
  { programs: ["tar", "gtar", "bsdtar"], option: "--checkpoint-action", value: /^exec=([\s\S]*)$/ },
  { programs: ["tar", "gtar", "bsdtar"], option: "--to-command" },
  { programs: ["tar", "gtar", "bsdtar"], option: "-I" },
  { programs: ["tar", "gtar", "bsdtar"], option: "-F" },
  { programs: ["tar", "gtar", "bsdtar"], option: "--new-volume-script" },
  { programs: ["zip"], option: "-TT" },
  { programs: ["ssh", "scp", "sftp"], option: "-o", value: /^(?:ProxyCommand|LocalCommand|KnownHostsCommand)\s*[= ]\s*([\s\S]*)$/i },
  { programs: ["rsync"], option: "-e" },
  { programs: ["vim", "vi", "nvim", "ex", "view"], option: "-c", value: /^\s*:?\s*(?:silent!?\s*)?!([\s\S]*)$/ },
  // Debuggers run shell commands from their command options.
  { programs: ["gdb"], option: "-ex", value: /^\s*(?:shell|!)\s*([\s\S]*)$/ },
  { programs: ["gdb"], option: "-iex", value: /^\s*(?:shell|!)\s*([\s\S]*)$/ },
  { programs: ["lldb"], option: "-o", value: /^\s*platform\s+shell\s+([\s\S]*)$/ },
  { programs: ["lldb"], option: "-O", value: /^\s*platform\s+shell\s+([\s\S]*)$/ },
];
