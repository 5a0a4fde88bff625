/**
 * Interpreter payloads (`python -c`, `node -e`, `perl -e`, `ruby -e`, `php -r`,
 * `lua -e`, heredocs into them): a language we do not parse. We look for calls
 * by name with small regular expressions, read their literal arguments, and
 * map each call onto what it does:
 *
 * - `shell`: the first argument is a command line for `/bin/sh` (`os.system`);
 * - `exec`: a string is a command line, a list (or several strings) an argv
 *   (`subprocess.run`, `child_process.spawn`, Perl/Ruby `system`);
 * - `argv-from`: the argv starts at argument N (`os.execv(path, [argv…])`);
 * - `command`: the call is equivalent to this shell command (`shutil.rmtree(X)`
 *   → `rm -r X`; `{0}` is the first argument, `{?}` something the code computes),
 *   which then goes through the ordinary rules;
 * - `finding`: reports a finding.
 *
 * Extracted command lines and argvs are analysed as scripts. A shell-out whose
 * command is not a literal makes the command unanalysable.
 *
 * Limits (documented in docs/command-safety.md): aliases and indirection
 * (`f = os.system; f(x)`), string building, and anything that imports a
 * module under another name than the patterns expect are not seen.
 */
import type { PayloadLanguage } from "./programs.js";

export type PayloadUse =
  | { kind: "shell" }
  | { kind: "exec" }
  | { kind: "argv-from"; from: number }
  | { kind: "command"; argv: readonly string[]; when?: { arg: number; pattern: RegExp } }
  | { kind: "finding"; finding: string; when?: { arg: number; pattern: RegExp } };

export interface PayloadCall {
  languages: readonly PayloadLanguage[];
  /** Matches the callee, ending where its arguments start (`(`, or a space or quote in Perl/Ruby/Lua call syntax). */
  callee: RegExp;
  use: PayloadUse;
  /** Only when the whole payload matches this too (`run(` counts only after `from subprocess import`). */
  requires?: RegExp;
  /** The call means something without arguments too (`p.unlink()`). */
  noArguments?: boolean;
}

const NETWORK_CODE = /urlopen|urllib|requests\.|httpx|http\.client|socket|fetch\(|https?\.get|axios|XMLHttpRequest|LWP|HTTP::Tiny|Net::HTTP|open-uri|URI\.open|file_get_contents\(\s*['"]https?:|curl_exec/;
const DECODE_CODE = /b64decode|base64|fromhex|unhexlify|zlib|marshal|codecs\.decode|rot_?13|atob\(|Buffer\.from\([^)]*(?:base64|hex)|decode_base64|unpack\(|Base64\.decode|pack\(\s*['"]H|gzinflate|str_rot13|hex2bin/i;

export const PAYLOAD_CALLS: readonly PayloadCall[] = [
  // Python
  { languages: ["python"], callee: /\.(?:system|popen[234]?)\s*(?=\()/g, use: { kind: "shell" } },
  { languages: ["python"], callee: /\b(?:commands|subprocess)\.(?:getoutput|getstatusoutput)\s*(?=\()/g, use: { kind: "shell" } },
  { languages: ["python"], callee: /\b(?:subprocess|sp)\.(?:run|call|check_call|check_output|Popen)\s*(?=\()/g, use: { kind: "exec" } },
  { languages: ["python"], callee: /(?<![.\w])(?:check_call|check_output|Popen|getoutput|getstatusoutput)\s*(?=\()/g, use: { kind: "exec" }, requires: /\bsubprocess\b/ },
  { languages: ["python"], callee: /(?<![.\w])(?:run|call)\s*(?=\()/g, use: { kind: "exec" }, requires: /from\s+subprocess\s+import/ },
  { languages: ["python"], callee: /\bos\.exec[lv]p?e?\s*(?=\()/g, use: { kind: "argv-from", from: 1 } },
  { languages: ["python"], callee: /\bos\.spawn[lv]p?e?\s*(?=\()/g, use: { kind: "argv-from", from: 2 } },
  { languages: ["python"], callee: /\bpty\.spawn\s*(?=\()/g, use: { kind: "exec" } },
  { languages: ["python"], callee: /\b(?:shutil\.)?rmtree\s*(?=\()/g, use: { kind: "command", argv: ["rm", "-r", "{0}"] } },
  { languages: ["python"], callee: /\bos\.(?:remove|unlink|rmdir|removedirs)\s*(?=\()/g, use: { kind: "command", argv: ["rm", "{0}"] } },
  // pathlib: `p.unlink()`, `Path(x).rmdir()` delete the path the object stands for (not read here).
  { languages: ["python"], callee: /(?<!\bos)\.(?:unlink|rmdir)\s*(?=\()/g, use: { kind: "command", argv: ["rm", "{?}"] }, noArguments: true },
  // Walking a tree and deleting what it finds is a recursive delete of the tree.
  { languages: ["python"], callee: /\bos\.(?:walk|scandir|listdir)\s*(?=\()/g, use: { kind: "command", argv: ["rm", "-r", "{0}"] }, requires: /\bos\.(?:remove|unlink|rmdir)\s*\(|\.unlink\s*\(|rmtree\s*\(/ },
  { languages: ["python"], callee: /(?<![.\w])open\s*(?=\()/g, use: { kind: "command", argv: ["tee", "{0}"], when: { arg: 1, pattern: /^[rb]*[wax]|\+/ } } },
  { languages: ["python"], callee: /\bos\.kill\s*(?=\()/g, use: { kind: "command", argv: ["kill", "-s", "{1}", "--", "{0}"] } },
  { languages: ["python"], callee: /\b(?:exec|eval)\s*(?=\()/g, use: { kind: "finding", finding: "payload-network-exec", when: { arg: 0, pattern: NETWORK_CODE } } },
  { languages: ["python"], callee: /\b(?:exec|eval)\s*(?=\()/g, use: { kind: "finding", finding: "payload-obfuscated-exec", when: { arg: 0, pattern: DECODE_CODE } } },

  // JavaScript (Node, Bun)
  { languages: ["javascript"], callee: /(?:\bchild_process\.|\bcp\.|\)\.|(?<![.\w$]))(?:exec|execSync)\s*(?=\()/g, use: { kind: "shell" }, requires: /child_process/ },
  { languages: ["javascript"], callee: /(?:\bchild_process\.|\bcp\.|\)\.|(?<![.\w$]))(?:spawn|spawnSync|execFile|execFileSync)\s*(?=\()/g, use: { kind: "exec" }, requires: /child_process/ },
  { languages: ["javascript"], callee: /\bBun\.spawn(?:Sync)?\s*(?=\()/g, use: { kind: "exec" } },
  { languages: ["javascript"], callee: /\.(?:rmSync|rmdirSync|rm|rmdir)\s*(?=\()/g, use: { kind: "command", argv: ["rm", "-r", "{0}"], when: { arg: 1, pattern: /recursive\s*:\s*(?:true|!0|1)/ } }, requires: /\bfs\b|fs\/promises|fs-extra/ },
  { languages: ["javascript"], callee: /\.(?:unlinkSync|unlink|rmSync|rm)\s*(?=\()/g, use: { kind: "command", argv: ["rm", "{0}"] }, requires: /\bfs\b|fs\/promises|fs-extra/ },
  { languages: ["javascript"], callee: /\.(?:removeSync|remove|emptyDirSync|emptyDir)\s*(?=\()/g, use: { kind: "command", argv: ["rm", "-r", "{0}"] }, requires: /fs-extra|rimraf/ },
  { languages: ["javascript"], callee: /(?<![.\w$])rimraf(?:\.sync)?\s*(?=\()/g, use: { kind: "command", argv: ["rm", "-r", "{0}"] } },
  { languages: ["javascript"], callee: /\.(?:writeFileSync|appendFileSync|writeFile|appendFile|createWriteStream)\s*(?=\()/g, use: { kind: "command", argv: ["tee", "{0}"] } },
  { languages: ["javascript"], callee: /\bprocess\.kill\s*(?=\()/g, use: { kind: "command", argv: ["kill", "--", "{0}"] } },
  { languages: ["javascript"], callee: /(?<![.\w$])(?:eval|Function)\s*(?=\()/g, use: { kind: "finding", finding: "payload-network-exec", when: { arg: 0, pattern: NETWORK_CODE } } },
  { languages: ["javascript"], callee: /(?<![.\w$])(?:eval|Function)\s*(?=\()/g, use: { kind: "finding", finding: "payload-obfuscated-exec", when: { arg: 0, pattern: DECODE_CODE } } },

  // Perl
  { languages: ["perl"], callee: /(?<![\w$@%&:>-])(?:system|exec)\b\s*(?=[(\s'"q])/g, use: { kind: "exec" } },
  { languages: ["perl"], callee: /(?<![\w$@%&:>-])(?:File::Path::)?(?:rmtree|remove_tree)\b\s*(?=[(\s'"q])/g, use: { kind: "command", argv: ["rm", "-r", "{0}"] } },
  { languages: ["perl"], callee: /(?<![\w$@%&:>-])unlink\b\s*(?=[(\s'"q])/g, use: { kind: "command", argv: ["rm", "{0}"] } },
  { languages: ["perl"], callee: /(?<![\w$@%&:>-])kill\b\s*(?=[(\s'"\d-])/g, use: { kind: "command", argv: ["kill", "-s", "{0}", "--", "{1}"] } },
  { languages: ["perl"], callee: /(?<![\w$@%&:>-])eval\b\s*(?=[({\s])/g, use: { kind: "finding", finding: "payload-network-exec", when: { arg: 0, pattern: NETWORK_CODE } } },
  { languages: ["perl"], callee: /(?<![\w$@%&:>-])eval\b\s*(?=[({\s])/g, use: { kind: "finding", finding: "payload-obfuscated-exec", when: { arg: 0, pattern: DECODE_CODE } } },

  // Ruby
  { languages: ["ruby"], callee: /(?<![\w.$@:])(?:Kernel\.)?(?:system|exec|spawn)\b\s*(?=[(\s'"%])/g, use: { kind: "exec" } },
  { languages: ["ruby"], callee: /\bIO\.popen\s*(?=[(\s'"%])/g, use: { kind: "exec" } },
  { languages: ["ruby"], callee: /\bOpen3\.(?:capture2e?|capture3|popen2e?|popen3|pipeline\w*)\s*(?=[(\s'"%])/g, use: { kind: "exec" } },
  { languages: ["ruby"], callee: /\bFileUtils\.(?:rm_rf|rm_r|remove_dir|remove_entry|remove_entry_secure|rmtree)\b\s*(?=[(\s'"%])/g, use: { kind: "command", argv: ["rm", "-r", "{0}"] } },
  { languages: ["ruby"], callee: /\b(?:FileUtils\.(?:rm|rm_f|remove)|File\.(?:delete|unlink))\b\s*(?=[(\s'"%])/g, use: { kind: "command", argv: ["rm", "{0}"] } },
  { languages: ["ruby"], callee: /\bFile\.write\b\s*(?=[(\s'"%])/g, use: { kind: "command", argv: ["tee", "{0}"] } },
  { languages: ["ruby"], callee: /\bFile\.open\b\s*(?=[(\s'"%])/g, use: { kind: "command", argv: ["tee", "{0}"], when: { arg: 1, pattern: /^[wa]/ } } },
  { languages: ["ruby"], callee: /\bProcess\.kill\b\s*(?=[(\s'"%:])/g, use: { kind: "command", argv: ["kill", "-s", "{0}", "--", "{1}"] } },
  { languages: ["ruby"], callee: /(?<![\w.$@:])(?:eval|instance_eval)\b\s*(?=[(\s])/g, use: { kind: "finding", finding: "payload-network-exec", when: { arg: 0, pattern: NETWORK_CODE } } },
  { languages: ["ruby"], callee: /(?<![\w.$@:])(?:eval|instance_eval)\b\s*(?=[(\s])/g, use: { kind: "finding", finding: "payload-obfuscated-exec", when: { arg: 0, pattern: DECODE_CODE } } },

  // PHP
  { languages: ["php"], callee: /(?<![\w$>:])(?:system|exec|shell_exec|passthru|popen|proc_open|pcntl_exec)\s*(?=\()/g, use: { kind: "exec" } },
  // R
  { languages: ["r"], callee: /(?<![\w.])(?:system|shell)\s*(?=\()/g, use: { kind: "shell" } },
  { languages: ["r"], callee: /(?<![\w.])system2\s*(?=\()/g, use: { kind: "exec" } },
  { languages: ["r"], callee: /(?<![\w.])unlink\s*(?=\()/g, use: { kind: "command", argv: ["rm", "-r", "{0}"], when: { arg: 1, pattern: /recursive\s*=\s*(?:TRUE|T)\b/ } } },
  { languages: ["r"], callee: /(?<![\w.])(?:unlink|file\.remove)\s*(?=\()/g, use: { kind: "command", argv: ["rm", "{0}"] } },
  { languages: ["php"], callee: /(?<![\w$>:])(?:unlink|rmdir)\s*(?=\()/g, use: { kind: "command", argv: ["rm", "{0}"] } },
  { languages: ["php"], callee: /(?<![\w$>:])file_put_contents\s*(?=\()/g, use: { kind: "command", argv: ["tee", "{0}"] } },
  { languages: ["php"], callee: /(?<![\w$>:])fopen\s*(?=\()/g, use: { kind: "command", argv: ["tee", "{0}"], when: { arg: 1, pattern: /^[waxc]/ } } },
  { languages: ["php"], callee: /(?<![\w$>:])posix_kill\s*(?=\()/g, use: { kind: "command", argv: ["kill", "-s", "{1}", "--", "{0}"] } },
  { languages: ["php"], callee: /(?<![\w$>:])(?:eval|assert)\s*(?=\()/g, use: { kind: "finding", finding: "payload-network-exec", when: { arg: 0, pattern: NETWORK_CODE } } },
  { languages: ["php"], callee: /(?<![\w$>:])(?:eval|assert)\s*(?=\()/g, use: { kind: "finding", finding: "payload-obfuscated-exec", when: { arg: 0, pattern: DECODE_CODE } } },

  // Lua
  { languages: ["lua"], callee: /\b(?:os\.execute|io\.popen)\s*(?=[("'[])/g, use: { kind: "shell" } },
  { languages: ["lua"], callee: /\bos\.remove\s*(?=[("'[])/g, use: { kind: "command", argv: ["rm", "{0}"] } },
  { languages: ["lua"], callee: /\bio\.open\s*(?=\()/g, use: { kind: "command", argv: ["tee", "{0}"], when: { arg: 1, pattern: /^[wa]/ } } },
];

/** Whole-payload patterns that report a finding on their own. */
export const PAYLOAD_PATTERNS: readonly { languages: readonly PayloadLanguage[]; pattern: RegExp; finding: string }[] = [
  { languages: ["perl"], pattern: /\bfork\s+while\s+(?:fork|1)\b|\bwhile\s*\(\s*1?\s*\)\s*\{\s*fork\b|\{\s*fork\s*;?\s*redo\b/, finding: "fork-bomb" },
  { languages: ["python"], pattern: /\bwhile\s+(?:True|1)\s*:\s*(?:\n\s*)?os\.fork\s*\(\s*\)/, finding: "fork-bomb" },
  { languages: ["ruby"], pattern: /\bloop\s*(?:do|\{)\s*fork\b|\bfork\s+while\s+true\b|\bwhile\s+true\s*(?:do)?\s*[;\n]?\s*fork\b/, finding: "fork-bomb" },
  { languages: ["javascript"], pattern: /\bwhile\s*\(\s*(?:true|1)\s*\)\s*\{?\s*(?:child_process\.|cp\.)?(?:fork|spawn)\s*\(\s*process\.argv/, finding: "fork-bomb" },
  { languages: ["php"], pattern: /\bwhile\s*\(\s*(?:true|1)\s*\)\s*\{?\s*pcntl_fork\s*\(/, finding: "fork-bomb" },
];

/** Expressions that name the home directory, for arguments that are not literals (`Path.home()`, `os.homedir()`). */
export const HOME_EXPRESSIONS =
  /^(?:(?:os\.path\.)?expanduser\(\s*(['"])~\1\s*\)|(?:pathlib\.)?Path\.home\(\)|(?:require\(\s*['"](?:node:)?os['"]\s*\)\.|os\.)?homedir\(\)|process\.env\.HOME|process\.env\[\s*(['"])HOME\2\s*\]|os\.environ\[\s*(['"])HOME\3\s*\]|os\.(?:environ\.get|getenv)\(\s*(['"])HOME\4\s*\)|ENV\[\s*(['"])HOME\5\s*\]|\$ENV\{\s*['"]?HOME['"]?\s*\}|Dir\.home|getenv\(\s*(['"])HOME\6\s*\)|\$_SERVER\[\s*(['"])HOME\7\s*\])$/;

/** Calls that wrap a path without changing it (`Path('/')`, `os.path.abspath('~')`). */
export const PATH_WRAPPERS = /^(?:(?:pathlib\.)?Path|os\.path\.(?:abspath|realpath|normpath|expanduser)|path\.(?:resolve|join|normalize)|File\.expand_path|realpath|(?:glob\.)?i?glob|Dir\.glob)\s*\(([\s\S]*)\)$/;
