/**
 * Command languages that are not bash but run commands word by word: Tcl and
 * expect (`exec`, `spawn`, `send`, `file delete`), PowerShell (cmdlets and
 * external programs), cmd.exe (`del /s`, `rd /s`, `format`), AppleScript
 * (`do shell script`). Statements are split and read as words; what they do is
 * handed back as argvs and command lines in the shapes of interpreter payloads
 * (payload.ts), so the ordinary rules judge them. Windows paths become their
 * POSIX counterparts for path classes: `C:\` is `/`, `C:\Windows` a system
 * directory, `%USERPROFILE%`/`$env:USERPROFILE`/`~` the home directory.
 * Anything computed (a variable as a command, `Invoke-Expression $x`) is unanalysable.
 */
import type { PayloadAnalysis } from "./payload.js";

export type ForeignLanguage = "tcl" | "powershell" | "cmd" | "applescript";

const MAX_STATEMENTS = 256;

/** Splits text into statements at `;`, newlines, `&&`, `||`, `|`, `&` outside quotes and braces. */
function statements(code: string, separators: RegExp): string[] {
  const out: string[] = [];
  let start = 0;
  let quote: string | null = null;
  let depth = 0;
  for (let i = 0; i < code.length; i++) {
    const ch = code[i]!;
    if (quote) {
      if (ch === quote) quote = null;
      else if (ch === "\\" && quote === '"') i++;
      continue;
    }
    if (ch === '"' || ch === "'") quote = ch;
    else if (ch === "{" || ch === "[" || ch === "(") depth++;
    else if (ch === "}" || ch === "]" || ch === ")") depth = Math.max(0, depth - 1);
    else if (depth === 0 && separators.test(ch)) {
      out.push(code.slice(start, i));
      start = i + 1;
    }
    if (out.length > MAX_STATEMENTS) break;
  }
  out.push(code.slice(start));
  return out.map((s) => s.trim()).filter((s) => s !== "" && !s.startsWith("#") && !/^rem\b/i.test(s));
}

/** Words of a statement: `"…"`, `'…'` and `{…}` (Tcl) group; the quotes go. */
function words(statement: string, braces: boolean): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < statement.length) {
    while (i < statement.length && /\s/.test(statement[i]!)) i++;
    if (i >= statement.length) break;
    let word = "";
    while (i < statement.length && !/\s/.test(statement[i]!)) {
      const ch = statement[i]!;
      if (ch === '"' || ch === "'") {
        const end = statement.indexOf(ch, i + 1);
        const stop = end < 0 ? statement.length : end;
        word += statement.slice(i + 1, stop);
        i = stop + 1;
      } else if (braces && ch === "{") {
        let depth = 1;
        let j = i + 1;
        while (j < statement.length && depth > 0) {
          if (statement[j] === "{") depth++;
          else if (statement[j] === "}") depth--;
          j++;
        }
        word += statement.slice(i + 1, j - 1);
        i = j;
      } else {
        word += ch;
        i++;
      }
    }
    out.push(word);
  }
  return out;
}

/** A Windows path as the POSIX path of the same class. */
export function windowsPath(p: string): string {
  let v = p.replace(/\\/g, "/");
  v = v.replace(/^(?:%USERPROFILE%|%HOMEPATH%|\$env:USERPROFILE|\$env:HOME|\$HOME|~)(?=\/|$)/i, "~");
  v = v.replace(/^[A-Za-z]:\/Users\/[^/]+(?=\/|$)/i, "~");
  v = v.replace(/^(?:%SystemRoot%|%windir%|\$env:SystemRoot|\$env:windir|[A-Za-z]:\/Windows)(?=\/|$)/i, "/usr");
  v = v.replace(/^[A-Za-z]:\/Program Files(?: \(x86\))?(?=\/|$)/i, "/opt");
  v = v.replace(/^[A-Za-z]:(?:\/|$)/, "/");
  return v === "" ? "/" : v;
}

function empty(): PayloadAnalysis {
  return { scripts: [], argvs: [], findings: [], unanalysable: [] };
}

function argv(out: PayloadAnalysis, words: string[], via: string): void {
  out.argvs.push({ argv: words, dynamic: words.map(() => false), via });
}

// ---------------------------------------------------------------- Tcl / expect

function analyseTcl(code: string, out: PayloadAnalysis): void {
  const queue = [code];
  for (let n = 0; n < queue.length && n < MAX_STATEMENTS; n++) {
    for (const s of statements(queue[n]!, /[;\n]/)) {
      // Command substitutions `[exec …]` run too.
      for (const m of s.matchAll(/\[([^\[\]]+)\]/g)) queue.push(m[1]!);
      const w = words(s.replace(/\[[^\[\]]*\]/g, "X"), true);
      const cmd = w[0];
      if (cmd === "exec" || cmd === "spawn") {
        let rest = w.slice(1);
        while (rest[0]?.startsWith("-") && rest[0] !== "--") rest = rest.slice(1);
        if (rest[0] === "--") rest = rest.slice(1);
        if (rest.some((x) => x.includes("$"))) out.unanalysable.push(`tcl ${cmd} runs a command that is computed at run time: ${s.slice(0, 80)}`);
        else if (rest.length > 0) argv(out, rest, `tcl ${cmd}`);
      } else if (cmd === "file" && w[1] === "delete") {
        const force = w.includes("-force");
        for (const target of w.slice(2).filter((x) => x !== "-force" && x !== "--")) argv(out, force ? ["rm", "-r", target] : ["rm", target], "tcl file delete");
      } else if (cmd === "send") {
        // expect: what is typed into a spawned shell runs there.
        const text = (w[w.length - 1] ?? "").replace(/\\r|\\n/g, "\n");
        if (text.includes("$") && !/\\\$/.test(text)) out.unanalysable.push(`expect sends text that is computed at run time: ${s.slice(0, 80)}`);
        else if (text.trim() !== "") out.scripts.push({ text, via: "expect send" });
      } else if (cmd === "open" && w[1]?.startsWith("|")) {
        out.scripts.push({ text: w[1].slice(1), via: "tcl open |" });
      } else if ((cmd === "eval" || cmd === "uplevel") && w.slice(1).some((x) => x.includes("$"))) {
        out.unanalysable.push(`tcl ${cmd} runs code that is computed at run time`);
      }
    }
  }
}

// ---------------------------------------------------------------- PowerShell

const PS_DELETE = /^(?:remove-item|ri|rm|del|erase|rd|rmdir)$/i;
const PS_RECURSE = /^-r(?:e(?:c(?:u(?:r(?:s(?:e)?)?)?)?)?)?$/i;
const PS_NETWORK = /downloadstring|downloadfile|invoke-webrequest|\biwr\b|invoke-restmethod|\birm\b|net\.webclient|start-bitstransfer/i;

function analysePowerShell(code: string, out: PayloadAnalysis): void {
  const elements: { s: string; piped: boolean }[] = [];
  for (const pipeline of statements(code, /[;\n]/)) statements(pipeline, /\|/).forEach((s, i) => elements.push({ s, piped: i > 0 }));
  for (const { s, piped } of elements) {
    const w = words(s, false);
    const cmd = w[0] ?? "";
    const lower = cmd.toLowerCase();
    if (cmd.startsWith("$") || cmd.startsWith("&") || cmd.startsWith(".")) {
      if (/^[&.]$/.test(cmd) && w[1] && !w[1].includes("$")) argv(out, w.slice(1), "powershell &");
      else out.unanalysable.push(`PowerShell runs a command that is computed at run time: ${s.slice(0, 80)}`);
      continue;
    }
    if (PS_DELETE.test(cmd)) {
      const recurse = w.some((x) => PS_RECURSE.test(x));
      const paths: string[] = [];
      for (let i = 1; i < w.length; i++) {
        const x = w[i]!;
        if (/^-(?:path|literalpath|lp)$/i.test(x)) paths.push(w[++i] ?? "");
        else if (!x.startsWith("-")) paths.push(x);
      }
      // `Get-ChildItem … | Remove-Item`: it deletes whatever comes down the pipeline.
      if (paths.length === 0 && piped) out.argvs.push({ argv: recurse ? ["rm", "-r", "$PIPELINE"] : ["rm", "$PIPELINE"], dynamic: recurse ? [false, false, true] : [false, true], via: `powershell ${cmd}` });
      for (const p of paths.length ? paths : piped ? [] : ["."]) argv(out, recurse ? ["rm", "-r", windowsPath(p)] : ["rm", windowsPath(p)], `powershell ${cmd}`);
    } else if (/^(?:format-volume|clear-disk|initialize-disk)$/i.test(cmd)) argv(out, ["mkfs", ...w.slice(1)], `powershell ${cmd}`);
    else if (/^stop-computer$/i.test(cmd)) argv(out, ["shutdown"], "powershell Stop-Computer");
    else if (/^restart-computer$/i.test(cmd)) argv(out, ["reboot"], "powershell Restart-Computer");
    else if (/^stop-service$/i.test(cmd)) argv(out, ["systemctl", "stop", ...w.slice(1).filter((x) => !x.startsWith("-"))], "powershell Stop-Service");
    else if (/^restart-service$/i.test(cmd)) argv(out, ["systemctl", "restart", ...w.slice(1).filter((x) => !x.startsWith("-"))], "powershell Restart-Service");
    else if (/^(?:stop-process|kill|spps)$/i.test(cmd)) argv(out, ["pkill", ...w.slice(1).filter((x) => !x.startsWith("-"))], `powershell ${cmd}`);
    else if (/^(?:invoke-expression|iex)$/i.test(cmd) || /\|\s*(?:iex|invoke-expression)\b/i.test(s)) {
      if (PS_NETWORK.test(code)) out.findings.push({ finding: "payload-network-exec", via: "powershell Invoke-Expression" });
      else out.unanalysable.push(`PowerShell Invoke-Expression runs code that is computed at run time: ${s.slice(0, 80)}`);
    } else if (/^(?:set-mppreference)$/i.test(cmd) && w.some((x) => /^-disable/i.test(x))) argv(out, ["setenforce", "0"], "powershell Set-MpPreference -Disable…");
    else if (/^set-netfirewallprofile$/i.test(cmd) && /-enabled\s+(?:\$?false|0)/i.test(s)) argv(out, ["ufw", "disable"], "powershell Set-NetFirewallProfile");
    else if (/^(?:invoke-restmethod|irm|invoke-webrequest|iwr)$/i.test(cmd) && /-method\s+delete\b/i.test(s)) argv(out, ["curl", "-X", "DELETE", ...w.slice(1).filter((x) => /^https?:/i.test(x))], `powershell ${cmd}`);
    else if (/^(?:cmd|cmd\.exe)$/i.test(lower)) analyseCmd(w.slice(1).join(" ").replace(/^\/[ck]\s+/i, ""), out);
    else if (!/^[a-z]+-[a-z]+$/i.test(cmd) && cmd !== "") argv(out, w, "powershell");
  }
}

// ---------------------------------------------------------------- cmd.exe

function analyseCmd(code: string, out: PayloadAnalysis): void {
  for (const s of statements(code.replace(/&&|\|\|/g, "\n"), /[&|\n]/)) {
    const w = words(s, false);
    const cmd = (w[0] ?? "").toLowerCase().replace(/\.exe$/, "");
    const flags = w.slice(1).filter((x) => x.startsWith("/")).map((x) => x.toLowerCase());
    const paths = w.slice(1).filter((x) => !/^\/[a-z?](?::\S*)?$/i.test(x));
    if (cmd === "del" || cmd === "erase") {
      const recurse = flags.includes("/s") || flags.includes("/q");
      for (const p of paths.length ? paths : ["."]) argv(out, recurse ? ["rm", "-r", windowsPath(p)] : ["rm", windowsPath(p)], `cmd ${cmd}`);
    } else if (cmd === "rd" || cmd === "rmdir") {
      const recurse = flags.includes("/s");
      for (const p of paths.length ? paths : ["."]) argv(out, recurse ? ["rm", "-r", windowsPath(p)] : ["rmdir", windowsPath(p)], `cmd ${cmd}`);
    } else if (cmd === "format" && w[1] && /^[a-z]:?$/i.test(w[1])) argv(out, ["mkfs", w[1]], "cmd format");
    else if (cmd === "shutdown" && flags.some((f) => f === "/s" || f === "/r" || f === "/p")) argv(out, ["shutdown"], "cmd shutdown");
    else if (cmd === "taskkill") argv(out, w, "cmd taskkill");
    else if (cmd === "powershell" || cmd === "pwsh") {
      const i = w.findIndex((x) => /^-(?:c|command)$/i.test(x));
      if (w.some((x) => /^-(?:e|ec|enc|encodedcommand)$/i.test(x))) out.findings.push({ finding: "payload-obfuscated-exec", via: "powershell -EncodedCommand" });
      if (i > 0) analysePowerShell(w.slice(i + 1).join(" "), out);
    } else if (cmd === "cmd") analyseCmd(w.slice(1).join(" ").replace(/^\/[ck]\s+/i, ""), out);
    else if (cmd.startsWith("%")) out.unanalysable.push(`cmd runs a command that is computed at run time: ${s.slice(0, 80)}`);
    else if (cmd !== "" && !["echo", "set", "cd", "dir", "type", "rem", "cls", "if", "for", "call", "start", "exit", "pushd", "popd", "title", "ver", "where"].includes(cmd)) argv(out, w, "cmd");
  }
}

// ---------------------------------------------------------------- AppleScript

function analyseAppleScript(code: string, out: PayloadAnalysis): void {
  for (const m of code.matchAll(/do\s+shell\s+script\s+(?:"((?:[^"\\]|\\.)*)"|(\S+))/gi)) {
    if (m[1] !== undefined) out.scripts.push({ text: m[1].replace(/\\(.)/g, "$1"), via: "applescript do shell script" });
    else out.unanalysable.push(`AppleScript runs a shell command that is computed at run time: ${m[0].slice(0, 80)}`);
  }
}

export function analyseForeign(code: string, lang: ForeignLanguage): PayloadAnalysis {
  const out = empty();
  if (lang === "tcl") analyseTcl(code, out);
  else if (lang === "powershell") analysePowerShell(code, out);
  else if (lang === "cmd") analyseCmd(code, out);
  else analyseAppleScript(code, out);
  return out;
}
