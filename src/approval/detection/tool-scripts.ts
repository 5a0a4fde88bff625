/**
 * Scripts of "read-only" text tools that can run commands or write files:
 * sed (`e` command, `e` flag of `s`, `w FILE`, `s///w FILE`) and awk
 * (`system(…)`, `"cmd" | getline`, `print | "cmd"`, `print > "file"`).
 */

export interface ToolScriptAnalysis {
  /** The script runs commands that are not literal (computed, or the text being edited): unanalysable. */
  exec: boolean;
  /** Command lines it runs, when they are literal. */
  commands: string[];
  /** Files it writes. */
  writes: string[];
  /** Files it writes whose names it computes, as far as they are known (the literal text they start with, or ""). */
  computedWrites?: string[];
}

function readUntilDelimiter(s: string, i: number, delim: string): number {
  while (i < s.length) {
    if (s[i] === "\\") i += 2;
    else if (s[i] === delim) return i;
    else if (s[i] === "\n" && delim !== "\n") return i;
    else i++;
  }
  return i;
}

function restOfLine(s: string, i: number): [string, number] {
  const end = s.indexOf("\n", i);
  const stop = end < 0 ? s.length : end;
  return [s.slice(i, stop).trim(), stop];
}

/** GNU sed script analysis (enough of the grammar to find `e` and `w`). */
export function analyseSed(script: string): ToolScriptAnalysis {
  const out: ToolScriptAnalysis = { exec: false, commands: [], writes: [] };
  let i = 0;
  const s = script;
  while (i < s.length) {
    const ch = s[i]!;
    if (ch === " " || ch === "\t" || ch === "\n" || ch === ";" || ch === "{" || ch === "}" || ch === "!") {
      i++;
      continue;
    }
    // Addresses: numbers, $, /re/, \cREc, first~step, addr1,addr2, +N, ~N.
    if (/[0-9$,~+]/.test(ch)) {
      i++;
      continue;
    }
    if (ch === "/" || (ch === "\\" && i + 1 < s.length)) {
      const delim = ch === "/" ? "/" : s[i + 1]!;
      i = readUntilDelimiter(s, ch === "/" ? i + 1 : i + 2, delim) + 1;
      while (s[i] === "I" || s[i] === "M") i++;
      continue;
    }
    if (ch === "#") {
      i = restOfLine(s, i)[1];
      continue;
    }
    i++;
    switch (ch) {
      case "s": {
        const delim = s[i];
        if (delim === undefined) return out;
        const endPattern = readUntilDelimiter(s, i + 1, delim);
        const endReplacement = readUntilDelimiter(s, endPattern + 1, delim);
        i = endReplacement + 1;
        // Flags up to ; } newline, or a w FILE that takes the rest of the line.
        while (i < s.length && !/[;\n}]/.test(s[i]!)) {
          const f = s[i]!;
          if (f === "e") out.exec = true;
          if (f === "w" || f === "W") {
            const [file, next] = restOfLine(s, i + 1);
            if (file) out.writes.push(file);
            i = next;
            break;
          }
          i++;
        }
        break;
      }
      case "y": {
        const delim = s[i];
        if (delim === undefined) return out;
        const endA = readUntilDelimiter(s, i + 1, delim);
        i = readUntilDelimiter(s, endA + 1, delim) + 1;
        break;
      }
      case "e": {
        const [command, next] = restOfLine(s, i);
        const cmd = command.replace(/[;}]\s*$/, "");
        // `e COMMAND` runs that command; a bare `e` runs the pattern space (the text being edited).
        if (cmd) out.commands.push(cmd);
        else out.exec = true;
        i = next;
        break;
      }
      case "w":
      case "W": {
        const [file, next] = restOfLine(s, i);
        if (file) out.writes.push(file);
        i = next;
        break;
      }
      case "a":
      case "i":
      case "c":
      case "r":
      case "R":
      case ":":
      case "b":
      case "t":
      case "T": {
        // Text, a file read, or a label: up to the end of the line (labels also end at ;).
        const [, next] = restOfLine(s, i);
        if (ch === "b" || ch === "t" || ch === "T" || ch === ":") {
          const semi = s.indexOf(";", i);
          i = semi >= 0 && semi < next ? semi + 1 : next;
        } else i = next;
        break;
      }
      case "q":
      case "Q":
      case "l":
      case "L":
        while (i < s.length && /[0-9 ]/.test(s[i]!)) i++;
        break;
      default:
        break;
    }
  }
  return out;
}

function awkString(s: string, start: number): [string, number] | null {
  if (s[start] !== '"') return null;
  let out = "";
  let i = start + 1;
  while (i < s.length && s[i] !== '"') {
    if (s[i] === "\\" && i + 1 < s.length) {
      const n = s[i + 1]!;
      out += n === "n" ? "\n" : n === "t" ? "\t" : n;
      i += 2;
    } else out += s[i++];
  }
  return [out, i + 1];
}

/** awk program analysis by pattern (awk is not parsed). */
export function analyseAwk(program: string): ToolScriptAnalysis {
  const out: ToolScriptAnalysis = { exec: false, commands: [], writes: [] };
  const systemRe = /\bsystem\s*\(\s*/g;
  for (let m = systemRe.exec(program); m; m = systemRe.exec(program)) {
    const lit = awkString(program, m.index + m[0].length);
    const after = lit ? program.slice(lit[1]).trimStart() : "";
    // A literal command is analysed like any other; a computed one cannot be.
    if (lit && after.startsWith(")")) out.commands.push(lit[0]);
    else out.exec = true;
  }
  // "cmd" | getline, cmd | getline, print … | "cmd", print … |& "cmd"
  const pipes = (program.match(/\|\s*&?\s*getline\b/g)?.length ?? 0) + (program.match(/\bprint[f]?\b[^;}\n]*\|&?\s*(?:"|[A-Za-z_])/g)?.length ?? 0);
  if (pipes > 0) {
    const pipeRe = /"((?:[^"\\]|\\.)*)"\s*\|&?\s*getline\b|\|&?\s*"((?:[^"\\]|\\.)*)"/g;
    let literal = 0;
    for (let m = pipeRe.exec(program); m; m = pipeRe.exec(program)) {
      out.commands.push((m[1] ?? m[2] ?? "").replace(/\\(.)/g, "$1"));
      literal++;
    }
    if (literal < pipes) out.exec = true;
  }
  const writeRe = /\bprint[f]?\b[^;}\n|]*?>>?\s*"((?:[^"\\]|\\.)*)"/g;
  for (let m = writeRe.exec(program); m; m = writeRe.exec(program)) out.writes.push(m[1]!.replace(/\\(.)/g, "$1"));
  // `print > ("/etc/" $1 ".conf")`, `print > file`: a file name the program computes.
  const computedRe = /\bprint[f]?\b[^;}\n|]*?>>?\s*(?!")([(A-Za-z_$][^;}\n]*)/g;
  for (let m = computedRe.exec(program); m; m = computedRe.exec(program)) {
    const head = /^\(?\s*"((?:[^"\\]|\\.)*)"/.exec(m[1]!);
    (out.computedWrites ??= []).push(head ? head[1]!.replace(/\\(.)/g, "$1") : "");
  }
  return out;
}
