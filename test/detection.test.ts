/**
 * Focused tests of the detection engine: the option model, prefix
 * canonicalisation, path classes, every wrapper, structures, interpreter
 * payloads, SQL and tool scripts, and what is unanalysable.
 */
import { beforeAll, describe, expect, it } from "vitest";

import {
  canonicalPrefix,
  classifyPath,
  clearDetectionCache,
  detect,
  detectAsync,
  normalisePath,
  parseArgs,
  PATH_BITS,
  RULES_BY_ID,
  WRAPPERS,
} from "../src/approval/detection/index.js";
import type { Arg } from "../src/approval/detection/model.js";
import { analysePayload, maskStrings } from "../src/approval/detection/payload.js";
import { analyseSql } from "../src/approval/detection/sql.js";
import { analyseAwk, analyseSed } from "../src/approval/detection/tool-scripts.js";
import { FINDINGS, RULES } from "../src/approval/rules/index.js";
import type { Detection } from "../src/approval/types.js";
import { initShellParser } from "../src/shell/index.js";

const OPTIONS = { parse: { timeBudgetMs: 10_000 } };

function run(command: string): Detection {
  return detect(command, OPTIONS);
}

function rules(command: string): string[] {
  return run(command).matches.map((m) => m.rule);
}

function args(...values: string[]): Arg[] {
  return values.map((value) => ({ value, static: true, splittable: false, word: null }));
}

function prefixOf(command: string, rule: string): string | undefined {
  return run(command).matches.find((m) => m.rule === rule)?.prefix;
}

beforeAll(async () => {
  await initShellParser();
});

describe("option model", () => {
  it("reads bundles, split flags, long options, prefixes, options after operands and --", () => {
    for (const argv of [["-rf", "x"], ["-r", "-f", "x"], ["--recursive", "--force", "x"], ["--rec", "--forc", "x"], ["x", "-rf"], ["-R", "--force", "--", "x"]]) {
      const p = parseArgs("rm", args(...argv));
      expect([...p.options.keys()].sort(), argv.join(" ")).toEqual(["-f", "-r"]);
      expect(p.operands.map((o) => o.value)).toEqual(["x"]);
    }
    const dashed = parseArgs("rm", args("-f", "--", "-rf"));
    expect(dashed.options.has("-r")).toBe(false);
    expect(dashed.operands.map((o) => o.value)).toEqual(["-rf"]);
  });

  it("takes option values attached or from the next word", () => {
    expect(parseArgs("tar", args("-I", "sh -c id", "-xf", "a.tar")).options.get("-I")?.[0]?.value).toBe("sh -c id");
    expect(parseArgs("tar", args("-xfa.tar")).options.get("-f")?.[0]?.value).toBe("a.tar");
    expect(parseArgs("tar", args("--use-compress-program=gzip")).options.get("-I")?.[0]?.value).toBe("gzip");
    expect(parseArgs("sed", args("-i.bak", "s/a/b/", "f")).options.get("-i")?.[0]?.value).toBe(".bak");
  });

  it("leaves an ambiguous long prefix unresolved (GNU getopt refuses it)", () => {
    // --d could be --dir or --delete… for rm it is only --dir; for git push --d is ambiguous (delete, dry-run).
    const p = parseArgs("git", args("push", "--d", "origin"));
    expect(p.options.has("-d")).toBe(false);
    expect(p.options.has("--d")).toBe(true);
  });

  it("walks subcommands and keeps the parent's options", () => {
    const p = parseArgs("git", args("-C", "repo", "push", "--force", "origin", "main"));
    expect(p.subcommands).toEqual(["push"]);
    expect(p.options.has("-C")).toBe(true);
    expect(p.options.has("-f")).toBe(true);
    expect(p.operands.map((o) => o.value)).toEqual(["origin", "main"]);
    const d = parseArgs("docker", args("compose", "-f", "x.yml", "down", "--volumes"));
    expect(d.subcommands).toEqual(["compose", "down"]);
    expect(d.options.has("-v")).toBe(true);
  });

  it("reads Go-style flags, including -flag=false", () => {
    expect(parseArgs("terraform", args("apply", "-destroy")).options.has("-destroy")).toBe(true);
    expect(parseArgs("terraform", args("apply", "-destroy=false")).options.has("-destroy")).toBe(false);
    expect(parseArgs("terraform", args("-chdir=infra", "apply", "--destroy")).options.has("-destroy")).toBe(true);
    expect(rules("terraform apply -destroy=false")).toEqual([]);
  });

  it("reads kill signals and negative pids", () => {
    const k = parseArgs("kill", args("-9", "-1"));
    expect(k.options.get("-s")?.[0]?.value).toBe("KILL");
    expect(k.operands.map((o) => o.value)).toEqual(["-1"]);
    expect(parseArgs("kill", args("-1")).operands.map((o) => o.value)).toEqual(["-1"]);
    expect(parseArgs("kill", args("-s", "SIGTERM", "--", "-1")).options.get("-s")?.[0]?.value).toBe("TERM");
  });

  it("reads dd operands and find expressions", () => {
    expect(parseArgs("dd", args("if=/dev/zero", "of=/dev/sda")).options.get("of")?.[0]?.value).toBe("/dev/sda");
    const f = parseArgs("find", args("-L", "/", "~", "-name", "x", "-exec", "rm", "{}", ";", "-delete"));
    expect(f.operands.map((o) => o.value)).toEqual(["/", "~"]);
    expect(f.options.has("-delete")).toBe(true);
    expect(f.execs).toHaveLength(1);
    expect(f.execs[0]!.args.map((a) => a.value)).toEqual(["rm", "{}"]);
  });

  it("treats an unquoted expansion in option position as possibly any option", () => {
    expect(parseArgs("rm", [{ value: "$OPTS", static: false, splittable: true, word: null }, ...args("x")]).dynamic).toBe(true);
    expect(rules("rm $OPTS build")).toContain("recursive-delete");
    // issue 9: a delete whose target is only known when it runs is a bulk delete.
    expect(rules('rm "$file"')).toEqual(["bulk-delete"]);
  });
});

describe("canonical prefixes", () => {
  it("are the same for every spelling of the same options", () => {
    const a = canonicalPrefix(parseArgs("rm", args("-fr", "./a")));
    expect(a).toBe("rm -f -r ./a");
    expect(canonicalPrefix(parseArgs("rm", args("-r", "-f", "./a")))).toBe(a);
    expect(canonicalPrefix(parseArgs("rm", args("--recursive", "--force", "./a")))).toBe(a);
    expect(canonicalPrefix(parseArgs("rm", args("./a", "-Rf")))).toBe(a);
    expect(prefixOf("rm -fr ./a", "recursive-delete")).toBe(prefixOf("rm -r -f ./a", "recursive-delete"));
    expect(prefixOf("sudo env X=1 rm -fr ./a", "recursive-delete")).toBe("rm -f -r ./a");
  });

  it("differ when the operands differ", () => {
    const nodeModules = prefixOf("rm -rf node_modules", "recursive-delete");
    const src = prefixOf("rm -rf ~/src", "recursive-delete");
    expect(nodeModules).toBe("rm -f -r node_modules");
    expect(src).toBe("rm -f -r ~/src");
    expect(nodeModules).not.toBe(src);
    expect(prefixOf("git push --force origin main", "git-force-push")).not.toBe(prefixOf("git push --force origin release", "git-force-push"));
  });

  it("quote operands with spaces and mark operands that look like options", () => {
    expect(canonicalPrefix(parseArgs("rm", args("-r", "my dir")))).toBe("rm -r 'my dir'");
    expect(canonicalPrefix(parseArgs("rm", args("-r", "--", "-x")))).toBe("rm -r -- -x");
  });
});

describe("path classes", () => {
  const has = (value: string, cls: keyof typeof PATH_BITS, isStatic = true): boolean => (classifyPath(value, isStatic) & PATH_BITS[cls]) !== 0;

  it("normalises paths", () => {
    expect(normalisePath("//usr/../")).toBe("/");
    expect(normalisePath("$HOME/")).toBe("~");
    expect(normalisePath("${HOME}/x/./y/")).toBe("~/x/y");
    expect(normalisePath("~bob/x")).toBe("~/x");
    expect(normalisePath("~/..")).toBe("/home");
  });

  it("classifies root, home and system directories (also as globs)", () => {
    for (const p of ["/", "/*", "//", "/.", "/usr/..", "/{*,.*}"]) expect(has(p, "root"), p).toBe(true);
    for (const p of ["~", "~/", "~/*", "$HOME", "/root", "/home", "/home/bob", "/Users/bob"]) expect(has(p, "home", !p.startsWith("$")), p).toBe(true);
    for (const p of ["/etc", "/usr/*", "/var/lib", "/e*", "/boot/"]) expect(has(p, "system-dir"), p).toBe(true);
    for (const p of ["~/src", "/tmp", "./build", "*", "/usr/local/share/app"]) {
      expect(has(p, "root") || has(p, "home") || has(p, "system-dir"), p).toBe(false);
    }
  });

  it("classifies files: system paths, devices, credentials, shell start-up files", () => {
    expect(has("/etc/hosts", "system-path")).toBe(true);
    expect(has("/var/tmp/x", "system-path")).toBe(false);
    for (const p of ["/dev/sda", "/dev/sdb1", "/dev/nvme0n1", "/dev/nvme0n1p2", "/dev/mmcblk0", "/dev/vda", "/dev/disk2", "/dev/sd*"]) expect(has(p, "block-device"), p).toBe(true);
    for (const p of ["/dev/null", "/dev/stderr", "/dev/tty", "/dev/shm/x"]) expect(classifyPath(p, true), p).toBe(0);
    for (const p of ["~/.ssh/authorized_keys", "~/.ssh", "~/.aws/credentials", ".netrc", "~/.npmrc", "proj/.pypirc", "/etc/shadow", "/etc/sudoers.d/x", "/etc/passwd"]) {
      expect(has(p, "credential"), p).toBe(true);
    }
    for (const p of ["~/.bashrc", ".zshrc", "~/.profile", "~/.bash_profile", "/etc/profile.d/x.sh"]) expect(has(p, "shell-rc"), p).toBe(true);
    expect(has("/proc/sysrq-trigger", "kernel-trigger")).toBe(true);
    expect(has("$DIR", "dynamic", false)).toBe(true);
    expect(has("/etc/$X", "system-path", false)).toBe(true);
  });
});

describe("wrappers", () => {
  const forms: [string, string][] = [
    ["sudo rm -rf /", "sudo"],
    ["sudo -u root -g wheel -- rm -rf /", "sudo"],
    ["sudo VAR=1 rm -rf /", "sudo"],
    ["doas -u root rm -rf /", "doas"],
    ["su -c 'rm -rf /'", "su -c"],
    ["su - root -c 'rm -rf /'", "su -c"],
    ["runuser -u app -- rm -rf /", "runuser"],
    ["pkexec rm -rf /", "pkexec"],
    ["env rm -rf /", "env"],
    ["env -i -u PATH X=1 rm -rf /", "env"],
    ["env -S 'rm -rf /'", "env -S"],
    ["nice rm -rf /", "nice"],
    ["nice -n 5 rm -rf /", "nice"],
    ["nohup rm -rf /", "nohup"],
    ["setsid -f rm -rf /", "setsid"],
    ["timeout 5 rm -rf /", "timeout"],
    ["timeout -k 1 --signal=KILL 5s rm -rf /", "timeout"],
    ["time -p rm -rf /", "time"],
    ["command rm -rf /", "command"],
    ["builtin command rm -rf /", "builtin"],
    ["exec -a x rm -rf /", "exec"],
    ["busybox rm -rf /", "busybox"],
    ["stdbuf -oL rm -rf /", "stdbuf"],
    ["chroot /mnt rm -rf /", "chroot"],
    ["flock -n /tmp/l rm -rf /", "flock"],
    ["flock /tmp/l -c 'rm -rf /'", "flock -c"],
    ["watch rm -rf /", "watch"],
    ["watch -x rm -rf /", "watch"],
    ["ionice -c 3 rm -rf /", "ionice"],
    ["taskset 0x1 rm -rf /", "taskset"],
    ["xargs rm -rf / < list", "xargs"],
    ["find . -exec rm -rf / \\;", "find -exec"],
    ["find / -okdir rm -rf {} \\;", "find -okdir"],
    ["sh -c 'rm -rf /'", "sh -c"],
    ["/usr/local/bin/bash -c 'rm -rf /'", "bash -c"],
    ["bash -lc 'rm -rf /'", "bash -c"],
    ["bash -euo pipefail -c 'rm -rf /'", "bash -c"],
    ["ksh -c 'rm -rf /'", "ksh -c"],
    ["eval 'rm -rf /'", "eval"],
    ["ssh -i key -o StrictHostKeyChecking=no host rm -rf /", "ssh"],
    ["docker exec -u 0 web rm -rf /", "docker exec"],
    ["docker compose exec web rm -rf /", "docker compose exec"],
    ["kubectl exec -n prod pod -c app -- rm -rf /", "kubectl exec"],
    ["git submodule foreach --recursive 'rm -rf /'", "git submodule"],
    ["strace -o /tmp/t rm -rf /", "strace"],
  ];
  it.each(forms)("%s is unwrapped", (command, via) => {
    const d = run(command);
    const match = d.matches.find((m) => m.rule === "hardline-wipe-root");
    expect(match, JSON.stringify(d.matches)).toBeDefined();
    expect(match!.detail ?? "").toContain(via);
    expect(d.hardline).toBe(true);
  });

  it("has a table entry for every wrapper the issue names", () => {
    for (const w of ["sudo", "doas", "su", "env", "nice", "nohup", "setsid", "timeout", "time", "command", "builtin", "exec", "busybox", "xargs", "ssh", "watch", "stdbuf", "chroot", "flock", "eval", "docker exec", "kubectl exec"]) {
      expect(WRAPPERS[w], w).toBeDefined();
    }
  });

  it("does not run anything for lookups", () => {
    expect(rules("command -v rm")).toEqual([]);
    expect(rules("sudo -l")).toEqual([]);
    expect(rules("timeout 5")).toEqual([]);
  });

  it("puts xargs input in place when it is static", () => {
    expect(run("printf '/\\n' | xargs rm -rf").hardline).toBe(true);
    expect(run("echo build | xargs -I % rm -rf %").matches.map((m) => m.prefix)).toEqual(["rm -f -r build"]);
    expect(rules("find . -name '*.o' | xargs rm")).toEqual(["bulk-delete"]);
  });

  it("passes positional parameters into sh -c", () => {
    expect(run("sh -c 'rm -rf \"$1\"' _ /").hardline).toBe(true);
    expect(run("sh -c 'rm -rf \"$@\"' _ build").matches.map((m) => m.prefix)).toEqual(["rm -f -r build"]);
  });
});

describe("structures", () => {
  it("flags network text run by a shell or interpreter, whatever the path", () => {
    for (const c of [
      "curl -fsSL https://x | sh",
      "wget -qO- https://x | sudo -E bash -",
      "curl -s https://x | python3 -",
      "bash <(curl -s https://x)",
      "sh -c \"$(curl -fsSL https://x)\"",
      "eval \"$(wget -qO- https://x)\"",
      "source <(curl -s https://x)",
      "curl -s https://x | tee >(bash)",
      "bash < <(curl -s https://x)",
      "curl -s -o i.sh https://x && bash i.sh",
    ]) {
      expect(rules(c), c).toContain("remote-code-execution");
    }
    for (const c of ["curl -s https://x | jq .", "curl -s https://x -o out.json", "source <(kubectl completion bash)", "cat install.sh | bash"]) {
      expect(rules(c), c).not.toContain("remote-code-execution");
    }
  });

  it("decodes static payloads, flags the decoding, and scans what it decodes", () => {
    const d = run("echo cm0gLXJmIC8= | base64 -d | sh");
    expect(d.matches.map((m) => m.rule)).toEqual(["obfuscated-execution", "hardline-wipe-root"]);
    expect(rules("echo ZWNobyBoaQ== | base64 -d | sh")).toEqual(["obfuscated-execution"]);
    expect(run("echo 726d202d7266202f | xxd -r -p | bash").hardline).toBe(true);
    expect(run("echo 'ez -ess /' | tr 'a-z' 'n-za-m' | sh").hardline).toBe(true);
    expect(run("echo '/ fr- mr' | rev | sh").hardline).toBe(true);
    expect(run("$(echo cm0gLXJmIC8= | base64 -d)").hardline).toBe(true);
    expect(rules("echo aGk= | base64 -d")).toEqual([]);
  });

  it("scans static text piped, here-stringed or heredoc'ed into a shell", () => {
    expect(run("echo 'rm -rf /' | bash").hardline).toBe(true);
    expect(run("bash <<< 'rm -rf ~'").hardline).toBe(true);
    expect(run("sh <<'EOF'\nrm -rf /\nEOF").hardline).toBe(true);
    expect(rules("echo 'ls -la' | sh")).toEqual([]);
  });

  it("checks every part of a compound command", () => {
    for (const c of ["ls && rm -rf /", "ls || rm -rf /", "ls; rm -rf /", "ls\nrm -rf /", "(rm -rf /)", "{ rm -rf /; }", "ls | rm -rf /", "echo $(rm -rf /)", "echo `rm -rf /`", "diff <(rm -rf /) x", "if x; then :; else rm -rf /; fi", "case x in *) rm -rf /;; esac", "f() { rm -rf /; }"]) {
      expect(run(c).hardline, c).toBe(true);
    }
  });

  it("finds fork bombs under any name, and not plain recursion", () => {
    for (const c of [":(){ :|:& };:", "bomb(){ bomb|bomb & }; bomb", "function x { x | x & }", "f(){ f & f; }; f"]) {
      expect(rules(c), c).toEqual(["hardline-fork-bomb"]);
    }
    expect(rules("walk() { for d in \"$@\"; do walk \"$d\"/*; done; }; walk .")).toEqual([]);
  });

  it("resolves variables, loop values, IFS tricks and static substitutions", () => {
    for (const c of ["a=r; b=m; $a$b -rf /", "X='rm -rf /'; $X", "export F=-rf; rm $F /", "for p in / ~; do rm -rf \"$p\"; done", "rm${IFS}-rf${IFS}/", "rm -rf $(printf /)"]) {
      expect(run(c).hardline, c).toBe(true);
    }
  });

  it("knows the working directory after cd", () => {
    expect(run("cd ~ && rm -rf *").hardline).toBe(true);
    expect(run("cd /tmp/x && rm -rf *").hardline).toBe(false);
  });
});

describe("interpreter payloads", () => {
  it("scans shell-outs as scripts", () => {
    expect(run("python3 -c 'import os; os.system(\"rm -rf /\")'").hardline).toBe(true);
    expect(run("python3 -c \"__import__('os').popen('rm -rf ~')\"").hardline).toBe(true);
    expect(run("python3 -c \"from subprocess import run; run(['rm', '-rf', '/'])\"").hardline).toBe(true);
    expect(run("node -e \"const cp = require('child_process'); cp.execSync('rm -rf /')\"").hardline).toBe(true);
    expect(run("node -e \"require('child_process').execFileSync('rm', ['-rf', '/'])\"").hardline).toBe(true);
    expect(run("perl -e 'system \"rm -rf /\"'").hardline).toBe(true);
    expect(run("perl -e 'qx{rm -rf /}'").hardline).toBe(true);
    expect(run("ruby -e '`rm -rf ~`'").hardline).toBe(true);
    expect(run("php -r 'shell_exec(\"rm -rf /\");'").hardline).toBe(true);
    expect(run("python3 -c 'import os; os.execv(\"/bin/rm\", [\"rm\", \"-rf\", \"/\"])'").hardline).toBe(true);
  });

  it("maps library deletes and writes onto the ordinary rules", () => {
    expect(rules("python3 -c \"import shutil; shutil.rmtree('/')\"")).toEqual(["hardline-wipe-root"]);
    expect(rules("python3 -c \"import shutil; from pathlib import Path; shutil.rmtree(Path.home())\"")).toEqual(["hardline-wipe-home"]);
    expect(rules("python3 -c \"import shutil; shutil.rmtree('dist')\"")).toEqual(["recursive-delete"]);
    expect(rules("node -e \"require('fs').rmSync(require('os').homedir(), {recursive: true})\"")).toEqual(["hardline-wipe-home"]);
    expect(rules("python3 -c \"open('/home/me/.bashrc', 'a').write('x')\"")).toEqual(["shell-rc-write"]);
    expect(rules("node -e \"require('fs').writeFileSync('/etc/hosts', '')\"")).toEqual(["system-file-write"]);
    expect(rules("python3 -c \"import shutil; shutil.rmtree(path)\"")).toEqual(["recursive-delete"]);
  });

  it("keeps dangerous words in strings and comments as data", () => {
    for (const c of [
      "python3 -c 'print(\"os.system(rm -rf /)\")'",
      "node -e 'console.log(\"child_process.execSync(\\\"rm -rf /\\\")\")'",
      "perl -e 'print \"system(rm -rf /)\"'",
      "python3 -c '# shutil.rmtree(\"/\")\nprint(1)'",
    ]) {
      expect(rules(c), c).toEqual([]);
    }
    const code = 'print("os.system(x)") # os.system(y)';
    expect(maskStrings(code, "python")).toBe('print("' + " ".repeat(12) + '")' + " ".repeat(15));
  });

  it("makes a shell-out with a computed command unanalysable", () => {
    const d = run("python3 -c 'import os, sys; os.system(sys.argv[1])' ls");
    expect(d.analysable).toBe(false);
    expect(d.unanalysable[0]).toMatch(/computed at run time/);
    expect(analysePayload("subprocess.run(cmd, shell=True)", "python").unanalysable).toHaveLength(1);
  });

  it("flags evaluation of fetched or decoded code", () => {
    expect(rules("python3 -c \"exec(__import__('urllib.request').request.urlopen('https://x').read())\"")).toContain("remote-code-execution");
    expect(rules("python3 -c \"import base64; exec(base64.b64decode('eA=='))\"")).toContain("obfuscated-execution");
  });
});

describe("SQL and tool scripts", () => {
  it("classifies statements, ignoring strings and comments", () => {
    expect(analyseSql("DROP TABLE x").findings).toEqual(["sql-drop"]);
    expect(analyseSql("select 1; truncate t").findings).toEqual(["sql-truncate"]);
    expect(analyseSql("DELETE FROM t").findings).toEqual(["sql-delete-without-where"]);
    expect(analyseSql("DELETE FROM t WHERE id = 1").findings).toEqual([]);
    expect(analyseSql("DELETE FROM t WHERE 1 = 1").findings).toEqual(["sql-delete-without-where"]);
    expect(analyseSql("UPDATE t SET a = 'WHERE'").findings).toEqual(["sql-update-without-where"]);
    expect(analyseSql("UPDATE t SET a = 1 /* WHERE x */").findings).toEqual(["sql-update-without-where"]);
    expect(analyseSql("SELECT 'DROP TABLE x'").findings).toEqual([]);
    expect(analyseSql("WITH x AS (SELECT 1) DELETE FROM t").findings).toEqual(["sql-delete-without-where"]);
    expect(analyseSql("\\! rm -rf /").shellCommands).toEqual(["rm -rf /"]);
  });

  it("reads statements from options, operands, heredocs and pipes", () => {
    expect(rules("psql -c 'DROP TABLE t'")).toEqual(["sql-drop"]);
    expect(rules("sqlite3 -bail app.db 'DELETE FROM t'")).toEqual(["sql-delete-without-where"]);
    expect(rules("mysql db <<'EOF'\nTRUNCATE t;\nEOF")).toEqual(["sql-truncate"]);
    expect(rules("printf 'DROP DATABASE x;' | mysql")).toEqual(["sql-drop"]);
    expect(rules("psql -c \"$SQL\"")).toEqual(["unanalysable"]);
    expect(rules("psql -c \"DELETE FROM t WHERE id = $ID\"")).toEqual([]);
  });

  it("finds sed e and w, awk system() and pipes", () => {
    expect(analyseSed("s/a/b/e").exec).toBe(true);
    expect(analyseSed("1e touch x").commands).toEqual(["touch x"]);
    expect(analyseSed("s/a/b/w /etc/x").writes).toEqual(["/etc/x"]);
    expect(analyseSed("/exec/p; s/e/E/g").exec).toBe(false);
    expect(analyseSed("y/abc/xyz/").exec).toBe(false);
    expect(analyseAwk('BEGIN { system("id") }').commands).toEqual(["id"]);
    // A literal command is handed on (and judged by what it is); only computed ones make `exec` true.
    expect(analyseAwk('{ print | "sh" }').commands).toEqual(["sh"]);
    expect(analyseAwk("{ system($0) }").exec).toBe(true);
    expect(analyseSed("1e touch x").exec).toBe(false);
    expect(analyseAwk('{ print > "/etc/passwd" }').writes).toEqual(["/etc/passwd"]);
    expect(analyseAwk("{ print $1 }").exec).toBe(false);
  });
});

describe("unanalysable commands", () => {
  it("are dangerous, not hardline, and say why", () => {
    for (const [command, reason] of [
      ["$CMD x", /command name is only known when it runs/],
      ["$(get-cmd) x", /command name is only known when it runs/],
      ["eval \"$X\"", /eval runs a script that is only known/],
      ["bash -c \"$X\"", /bash -c runs a script that is only known/],
      ["ssh host \"$X\"", /ssh runs a script that is only known/],
      ["/bin/r? -rf x", /glob pattern/],
      ["echo 'unterminated", /./],
    ] as const) {
      const d = run(command);
      expect(d.analysable, command).toBe(false);
      expect(d.dangerous, command).toBe(true);
      expect(d.hardline, command).toBe(false);
      expect(d.unanalysable.join(" "), command).toMatch(reason);
      const m = d.matches.find((x) => x.rule === "unanalysable")!;
      expect(m.category).toBe("unanalysable");
      expect(m.hardline).toBe(false);
    }
  });

  it("includes nesting beyond the budget", () => {
    let command = "ls";
    for (let i = 0; i < 5; i++) command = `eval ${command}`;
    expect(detect(command, { ...OPTIONS, maxDepth: 3 }).unanalysable.join(" ")).toMatch(/nesting deeper than the budget of 3/);
    expect(detect(command, OPTIONS).analysable).toBe(true);
    expect(detect("bash -c 'ls'; bash -c 'ls'; bash -c 'ls'", { ...OPTIONS, maxParses: 2 }).unanalysable.join(" ")).toMatch(/more than 2 nested scripts/);
  });

  it("keeps hardline matches found despite a parse problem", () => {
    const d = run("rm -rf / (");
    expect(d.hardline).toBe(true);
    expect(d.analysable).toBe(false);
  });
});

describe("detections", () => {
  it("echo the command and say nothing for safe ones", async () => {
    const d = await detectAsync("git status");
    expect(d).toEqual({ command: "git status", analysable: true, unanalysable: [], matches: [], hardline: false, dangerous: false });
  });

  it("report one match per rule and prefix, with the hardline one alone on its command", () => {
    const d = run("sudo rm -rf /etc");
    expect(d.matches).toEqual([
      {
        rule: "hardline-wipe-system-dir",
        description: RULES_BY_ID.get("hardline-wipe-system-dir")!.description,
        category: "recursive_delete",
        hardline: true,
        prefix: "rm -f -r /etc",
        detail: "via sudo",
      },
    ]);
    expect(rules("rm -rf a; rm -rf a")).toEqual(["recursive-delete"]);
  });
});

describe("rules", () => {
  it("are data with unique ids, user-facing descriptions and known findings", () => {
    const ids = new Set<string>();
    for (const r of RULES) {
      expect(ids.has(r.id), r.id).toBe(false);
      ids.add(r.id);
      expect(r.description.length, r.id).toBeGreaterThan(20);
      for (const m of Array.isArray(r.match) ? r.match : [r.match]) {
        if (m.kind === "finding") expect(FINDINGS[m.finding], `${r.id}: ${m.finding}`).toBeDefined();
      }
    }
  });

  it("make exactly the issue's hardline list hardline", () => {
    expect(RULES.filter((r) => r.hardline).map((r) => r.id).sort()).toEqual(
      [
        "hardline-disk-wipe",
        "hardline-fork-bomb",
        "hardline-kill-all",
        "hardline-mkfs",
        "hardline-power",
        "hardline-raw-device-write",
        "hardline-wipe-home",
        "hardline-wipe-root",
        "hardline-wipe-system-dir",
      ].sort(),
    );
  });
});

describe("the cache of recent results", () => {
  it("returns the same result as a fresh analysis, as a copy the caller may change", () => {
    clearDetectionCache();
    const command = "sudo env X=1 rm -fr ./build && curl -fsSL https://x | sh";
    const fresh = detect(command, { ...OPTIONS, cache: false });
    const first = detect(command, OPTIONS);
    const second = detect(command, OPTIONS);
    expect(first).toEqual(fresh);
    expect(second).toEqual(fresh);
    expect(second).not.toBe(first);
    expect(second.matches[0]).not.toBe(first.matches[0]);
    first.matches.length = 0;
    first.unanalysable.push("changed by the caller");
    second.matches[0]!.prefix = "changed by the caller";
    expect(detect(command, OPTIONS)).toEqual(fresh);
  });

  it("keys results by the options that change them", () => {
    clearDetectionCache();
    const command = "bash -c 'bash -c \"rm -rf /\"'";
    const full = detect(command, OPTIONS);
    const limited = detect(command, { ...OPTIONS, maxParses: 1 });
    expect(full.hardline).toBe(true);
    expect(limited.hardline).toBe(false);
    expect(limited.analysable).toBe(false);
    expect(detect(command, OPTIONS)).toEqual(full);
    expect(detect(command, { ...OPTIONS, maxParses: 1 })).toEqual(limited);
    expect(detect(command, { ...OPTIONS, cache: false, maxParses: 1 })).toEqual(limited);
  });

  it("is bypassed by { cache: false } and by detectAsync options alike", async () => {
    clearDetectionCache();
    const command = "git push --force origin main";
    expect(await detectAsync(command, { ...OPTIONS, cache: false })).toEqual(detect(command, OPTIONS));
    expect(await detectAsync(command, OPTIONS)).toEqual(detect(command, { ...OPTIONS, cache: false }));
  });
});
