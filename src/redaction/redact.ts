/**
 * `redactSecrets`: replaces credentials in free text (commands, log lines,
 * command output) with `[REDACTED]`. Shared by everything that hands text to a
 * model, a log or a file: the approval flow's logs and prompts, every tool
 * output the model reads (through tool-output.ts), process receipts. Best
 * effort and deliberately eager: a log line losing a harmless `-pv` is better
 * than one keeping a password.
 */

export const REDACTED = "[REDACTED]";

/** Names of variables, options and fields whose value is a secret. */
const SECRET_NAME = String.raw`(?:[A-Za-z0-9_.-]*?(?:api[_-]?key|apikey|access[_-]?key|secret|token|passw(?:or)?d|passwd|pwd|credentials?|private[_-]?key)[A-Za-z0-9_.-]*|(?:[A-Za-z0-9_.-]*[_.-])?key)`;

/** A value: quoted (either quote) or a run of non-space characters. */
const VALUE = String.raw`(?:"[^"\n]*"|'[^'\n]*'|[^\s"'&;|)]+)`;

const RULES: readonly { pattern: RegExp; replace: string | ((...groups: string[]) => string) }[] = [
  // PEM private keys, whole block.
  {
    pattern: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g,
    replace: REDACTED,
  },
  // Authorization headers (`Authorization: Bearer x`, `Basic x`, any scheme) and a bare `Bearer x`.
  {
    pattern: /\b((?:Proxy-)?Authorization\s*:\s*)(?:([A-Za-z]+)\s+)?[^\s"']+/gi,
    replace: (_m, head, scheme) => `${head}${scheme ? `${scheme} ` : ""}${REDACTED}`,
  },
  { pattern: /\b(Bearer\s+)(?!\[REDACTED\])[A-Za-z0-9._~+/=-]{8,}/g, replace: (_m, head) => `${head}${REDACTED}` },
  // URLs with a password: scheme://user:password@host
  {
    pattern: /\b([a-z][a-z0-9+.-]*:\/\/)([^\s:/@]*):([^\s@/]+)@/gi,
    replace: (_m, scheme, user) => `${scheme}${user}:${REDACTED}@`,
  },
  // Vendor key shapes.
  { pattern: /\bsk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{16,}/g, replace: REDACTED }, // OpenAI, Anthropic, ...
  { pattern: /\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}/g, replace: REDACTED }, // Stripe
  { pattern: /\bgh[pousr]_[A-Za-z0-9]{20,}/g, replace: REDACTED }, // GitHub tokens
  { pattern: /\bgithub_pat_[A-Za-z0-9_]{20,}/g, replace: REDACTED },
  { pattern: /\bglpat-[A-Za-z0-9_-]{16,}/g, replace: REDACTED }, // GitLab
  { pattern: /\bxox[abposre]-[A-Za-z0-9-]{10,}/g, replace: REDACTED }, // Slack
  { pattern: /\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g, replace: REDACTED }, // AWS access key ids
  { pattern: /\bAIza[A-Za-z0-9_-]{35,}/g, replace: REDACTED }, // Google API keys
  { pattern: /\bhf_[A-Za-z0-9]{20,}/g, replace: REDACTED }, // Hugging Face
  { pattern: /\bnpm_[A-Za-z0-9]{30,}/g, replace: REDACTED }, // npm
  { pattern: /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, replace: REDACTED }, // JWTs
  // Headers and fields: `X-Api-Key: v`, `"password": "v"`, `token: v`.
  {
    pattern: new RegExp(String.raw`(["']?\b${SECRET_NAME}["']?\s*:\s*)(?!\[REDACTED\])${VALUE}`, "gi"),
    replace: (_m, head) => `${head}${REDACTED}`,
  },
  // Assignments: `API_KEY=v`, `export GITHUB_TOKEN="v"`, `--password=v`.
  {
    pattern: new RegExp(String.raw`(\b${SECRET_NAME}=)(?!\[REDACTED\])${VALUE}`, "gi"),
    replace: (_m, head) => `${head}${REDACTED}`,
  },
  // Options with a separate value: `--password v`, `--token v`, `--api-key v`.
  {
    pattern: new RegExp(String.raw`((?:^|\s)--${SECRET_NAME}\s+)(?!-|\[REDACTED\])${VALUE}`, "gi"),
    replace: (_m, head) => `${head}${REDACTED}`,
  },
  // curl/wget credentials: `-u user:pass`, `--user user:pass`.
  {
    pattern: /((?:^|\s)(?:-u|--user|--proxy-user)\s*)(["']?)([^\s:"']+):([^\s"']+)\2/g,
    replace: (_m, head, quote, user) => `${head}${quote}${user}:${REDACTED}${quote}`,
  },
  // `-pSECRET` (mysql and friends): a value glued to `-p`.
  { pattern: /((?:^|\s)-p)(?=[^\s-])(?!\[REDACTED\])("[^"\n]*"|'[^'\n]*'|\S+)/g, replace: (_m, head) => `${head}${REDACTED}` },
];

export interface RedactOptions {
  /**
   * Keep the number of lines: a secret spanning lines (a private key block)
   * becomes `[REDACTED]` on each line it covered, so line numbers around it
   * stay right (read_file's window, search hits, a diff).
   */
  keepLines?: boolean;
}

const newlines = (text: string): number => {
  let n = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) n++;
  return n;
};

/**
 * A text none of the rules can match: one pass over it, far cheaper than the
 * twenty-odd passes of the rules, so text without a secret (most of it) costs
 * little. Every rule needs at least one of these fragments to match (checked
 * rule by rule in test/redact-errors.test.ts); a new rule must add its own.
 */
const MAY_CONTAIN_SECRET =
  /key|secret|token|passw|pwd|credential|auth|bearer|:\/\/|sk-|_live_|_test_|gh[pousr]_|github_pat|glpat-|xox|akia|asia|aiza|hf_|npm_|eyj|-p|-u/i;

/** False when no rule of `redactSecrets` can match `text` (true does not mean it holds a secret). */
export function mayContainSecret(text: string): boolean {
  return MAY_CONTAIN_SECRET.test(text);
}

const SECRET_NAME_ONLY = new RegExp(`^${SECRET_NAME}$`, "i");

/** Whether a field or variable of this name holds a secret (`password`, `api_key`, `GITHUB_TOKEN`, ...). */
export function isSecretName(name: string): boolean {
  return SECRET_NAME_ONLY.test(name);
}

/** `text` with every credential this module recognises replaced by `[REDACTED]`. */
export function redactSecrets(text: string, options: RedactOptions = {}): string {
  if (!MAY_CONTAIN_SECRET.test(text)) return text;
  return applyRules(text, options);
}

/** The rules, without the pre-filter (exported for the test that checks the pre-filter against them). */
export function applyRules(text: string, options: RedactOptions = {}): string {
  let out = text;
  for (const rule of RULES) {
    const replace = rule.replace as (substring: string, ...args: unknown[]) => string;
    if (!options.keepLines) {
      out = out.replace(rule.pattern, replace);
      continue;
    }
    out = out.replace(rule.pattern, (matched: string, ...args: unknown[]) => {
      const replacement = typeof rule.replace === "string" ? rule.replace : replace(matched, ...args);
      const lost = newlines(matched) - newlines(replacement);
      return lost > 0 ? replacement + `\n${REDACTED}`.repeat(lost) : replacement;
    });
  }
  return out;
}

/** True when `redactSecrets` would change `text`. */
export function containsSecret(text: string): boolean {
  return redactSecrets(text) !== text;
}
