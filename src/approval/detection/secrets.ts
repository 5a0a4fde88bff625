/**
 * Secrets leaving the machine: which paths hold secrets (credentials but not
 * public keys, `.env` files, shell history, a process's environment), which
 * commands print secrets (rules/programs.ts `SECRET_SOURCES`, or a reader of a
 * secret file), and which arguments of a network program send a file or stdin
 * (`curl -T -`, `curl -F f=@~/.kube/config`, `scp ~/.aws/credentials host:`).
 */
import { PUBLIC_CREDENTIAL_PATTERNS } from "../rules/paths.js";
import { FILE_READERS, FILE_SENDERS, SECRET_SOURCES } from "../rules/programs.js";
import type { Rule } from "../rules/types.js";
import type { Arg, ParsedArgs } from "./model.js";
import { classifyPath, normalisePath, PATH_BITS } from "./paths.js";
import { compileCommand, matchCommand, type CompiledCommand } from "./rule-index.js";

const SECRET_BITS = PATH_BITS.credential | PATH_BITS["env-file"] | PATH_BITS.history;
const SOURCE_RULE: Rule = { id: "secret-source", description: "", category: "secret_exfiltration", hardline: false, match: [] };
const SOURCES = new Map<string, CompiledCommand[]>();
for (const m of SECRET_SOURCES) {
  const compiled = compileCommand(SOURCE_RULE, m);
  for (const p of m.programs) SOURCES.set(p, [...(SOURCES.get(p) ?? []), compiled]);
}

/**
 * Text without any of these cannot name a secret file (credential, `.env`, history, environ);
 * with a `$` it may, once expanded.
 */
export const SECRET_HINT = /[$~]|ssh|aws|env|hist|cred|netrc|npmrc|pypirc|kube|gnupg|gpg|shadow|passwd|sudoers|docker|pgpass|my\.cnf|vault|token|azure|gcloud|\.config/i;

/** Programs that print secrets of their own (`printenv`), whatever files they are given. */
export function printsSecretsItself(program: string): boolean {
  return SOURCES.has(program);
}

/** Programs `printsSecret` may say yes for. */
export function mayPrintSecret(program: string): boolean {
  return FILE_READERS.has(program) || SOURCES.has(program);
}

/** A file whose content is a secret: a credential (not a public key), a `.env` file, a history file, an environ. */
export function isSecretPath(value: string, isStatic: boolean): boolean {
  if (/^\/proc\/(?:self|\d+|\$\$)\/environ$/.test(value)) return true;
  if ((classifyPath(value, isStatic) & SECRET_BITS) === 0) return false;
  const path = isStatic ? normalisePath(value) : value;
  return !PUBLIC_CREDENTIAL_PATTERNS.some((re) => re.test(path));
}

/** Does this command print secrets (its own, or the content of a secret file it reads)? */
export function printsSecret(parsed: ParsedArgs): boolean {
  const sources = SOURCES.get(parsed.program);
  if (sources?.some((m) => matchCommand(m, parsed))) return true;
  if (!FILE_READERS.has(parsed.program)) return false;
  if (parsed.operands.some((a) => isSecretPath(a.value, a.static))) return true;
  for (const values of parsed.options.values()) if (values.some((a) => isSecretPath(a.value, a.static))) return true;
  return false;
}

/** `@FILE`, `<FILE`, `name=@FILE`, `name=<FILE;type=…`: the file an upload option names ("-" is stdin). */
function uploadedFile(value: string): string | null {
  const m = /^(?:[^=@<]*=)?[@<]([^;]+)/.exec(value);
  return m ? m[1]! : null;
}

export interface Sending {
  /** Files it sends to another machine. */
  files: Arg[];
  /** It sends what it reads on stdin. */
  stdin: boolean;
}

/** What a network program sends: files named in its upload options or copied to a remote, or its stdin. */
export function sentByCommand(parsed: ParsedArgs): Sending {
  const out: Sending = { files: [], stdin: false };
  const p = parsed.program;
  const add = (a: Arg, file: string | null): void => {
    if (file === null) return;
    if (file === "-" || file === "/dev/stdin" || file === ".") out.stdin = true;
    else out.files.push({ ...a, value: file });
  };
  if (p === "curl" || p === "curlie") {
    for (const a of parsed.options.get("-T") ?? []) add(a, a.value);
    for (const o of ["-d", "--data-binary", "--data-raw", "--data-urlencode", "--json", "-F", "--form", "--form-string"]) {
      for (const a of parsed.options.get(o) ?? []) add(a, uploadedFile(a.value));
    }
  } else if (p === "wget" || p === "wget2") {
    for (const o of ["--post-file", "--body-file"]) for (const a of parsed.options.get(o) ?? []) add(a, a.value);
  } else if (p === "http" || p === "https" || p === "xh" || p === "xhs") {
    // HTTPie sends its stdin when it is piped; `field@FILE` and `@FILE` send files.
    out.stdin = !parsed.options.has("--ignore-stdin");
    for (const a of parsed.operands) {
      const m = /^(?:[^@=:]*(?:=|:=)?)@(.+)$/.exec(a.value);
      if (m) add(a, m[1]!);
    }
  } else if (p === "nc" || p === "ncat" || p === "netcat" || p === "telnet" || p === "openssl") {
    out.stdin = p !== "openssl" || parsed.subcommands[0] === "s_client" || parsed.operands[0]?.value === "s_client";
  } else if (p === "socat") {
    for (const a of parsed.operands) {
      if (a.value === "-" || /^(?:STDIN|STDIO)$/i.test(a.value)) out.stdin = true;
      const m = /^(?:FILE|OPEN|GOPEN):([^,]+)/i.exec(a.value);
      if (m) add(a, m[1]!);
    }
  } else if (FILE_SENDERS.has(p)) {
    const ops = parsed.operands;
    const last = ops[ops.length - 1];
    // A copy to somewhere remote: `host:path`, `user@host:`, `s3://…`, `gs://…`, `remote:` (rclone).
    const remote = last !== undefined && /^(?:[\w.-]+@)?[\w.-]+:(?!\/\/)|^(?:s3|gs|az|https?):\/\//.test(last.value) && !/^[A-Za-z]:[\\/]/.test(last.value);
    if (remote || p === "gh" || p === "glab") for (const a of ops.slice(0, remote ? -1 : undefined)) out.files.push(a);
  }
  return out;
}
