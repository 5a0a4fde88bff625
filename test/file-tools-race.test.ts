/**
 * write_file and patch write exactly where the approval gate checked, or
 * nowhere: a symlink or directory changed between the check and the write is
 * refused, never followed. Real files, a real gate (manual mode, non-interactive:
 * anything that needs approval is refused), and for the races a separate
 * process (test/support/symlink-flipper.ts) that flips paths between a
 * harmless target and this test's own fake `$HOME/.ssh` as fast as it can.
 */

import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";

import type { ApprovalGate } from "../src/approval/flow/gate.js";
import type { CheckOptions } from "../src/approval/flow/types.js";
import type { EnvironmentManager } from "../src/environments/manager.js";
import type { Environment, EnvironmentProvider, ExecOptions, ExecResult } from "../src/environments/types.js";
import type { WriteGate } from "../src/files/approval.js";
import { createPatchHandler } from "../src/tools/patch.js";
import { createReadFileHandler } from "../src/tools/read-file.js";
import { createWriteFileHandler } from "../src/tools/write-file.js";
import { callFileTool, localFileTools, type Handler, type Json } from "./support/local-file-tools.js";
import { startFlipper } from "./support/symlink-flipper.js";


const KEYS = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5 original@host marker\n";

let root: string;
let home: string;
let ssh: string;
let keys: string;
let manager: EnvironmentManager;
let gate: ApprovalGate;

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "mibyan-file-race-")));
  home = join(root, "home");
  ssh = join(home, ".ssh");
  keys = join(ssh, "authorized_keys");
  mkdirSync(ssh, { recursive: true, mode: 0o700 });
  writeFileSync(keys, KEYS, { mode: 0o600 });
  ({ manager, gate } = localFileTools(root, home));
});

afterAll(async () => {
  await manager?.closeAll();
  if (root) rmSync(root, { recursive: true, force: true });
});

const sha = (data: Buffer | string) => createHash("sha256").update(data).digest("hex");

const call = (handler: Handler, args: Record<string, unknown>): Promise<Json> => callFileTool(handler, args, "race");

/** Everything under the fake ~/.ssh: names, kinds, modes and contents. */
function protectedState(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const st = statSync(path);
      out.push(`${path} ${st.mode.toString(8)} ${st.isDirectory() ? "dir" : sha(readFileSync(path))}`);
      if (st.isDirectory()) walk(path);
    }
  };
  out.push(`${ssh} ${statSync(ssh).mode.toString(8)}`);
  walk(ssh);
  return out;
}

/** A fresh directory under the test root. */
function scratch(name: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Files named `name` anywhere under `dir`. */
function findAll(dir: string, name: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...findAll(path, name));
    else if (entry.name === name) found.push(path);
  }
  return found;
}

// The refusals a race may legitimately produce: each says what happened and that nothing was written.
const RACE_REFUSAL = new RegExp(
  [
    "changed after the write to .* was checked: it is no longer the directory that was approved",
    "became a symbolic link after the write was checked",
    "was changed by something else after it was read",
    "was altered by something else while it was being written",
    "^Cannot tell where .* leads",
    // patch: the directory was away (or was the link) at the instant the file was looked at.
    "^Not found: ",
    "is not a regular file; the file tools only work on regular files",
    "disappeared while it was being looked at",
    "changed while it was being read",
  ].join("|"),
);

interface Tally {
  ok: number;
  blocked: number;
  refused: number;
}

/** Counts an outcome; anything but success, a block by the gate or a clear race refusal fails the test. */
function tally(t: Tally, r: Json, what: string): void {
  if (r.error === null) t.ok++;
  else if (r.status === "blocked") {
    expect(r.error, what).toMatch(/^(write_file|patch) was not allowed to write /);
    t.blocked++;
  } else {
    expect(r.error, what).toMatch(RACE_REFUSAL);
    t.refused++;
  }
}

describe("a racing flipper never gets a write past the gate", () => {
  const writeFile = createWriteFileHandler({ environments: () => manager, gate: () => gate });
  const writeInChunks = createWriteFileHandler({ environments: () => manager, gate: () => gate, chunkChars: 4096 });
  const patch = createPatchHandler({ environments: () => manager, gate: () => gate });
  let before: string[];
  beforeEach(() => {
    before = protectedState();
  });

  it("a new file under a directory symlink flipping between the project and ~/.ssh", async () => {
    const proj = scratch("race-link");
    const safe = scratch("race-link/safe");
    const link = join(proj, "link");
    const flipper = await startFlipper("link", link, safe, ssh);
    const t: Tally = { ok: 0, blocked: 0, refused: 0 };
    try {
      for (let i = 0; i < 40; i++) {
        const content = `note ${i}\n`;
        const r = await call(writeFile, { path: join(link, `note-${i}.txt`), content });
        tally(t, r, `call ${i}`);
        // A write that succeeded is in the directory the gate approved.
        if (r.error === null) expect(readFileSync(join(safe, `note-${i}.txt`), "utf8")).toBe(content);
      }
    } finally {
      await flipper.stop();
    }
    expect(protectedState()).toEqual(before);
    expect(t.ok + t.blocked + t.refused).toBe(40);
    expect(t.ok, JSON.stringify(t)).toBeGreaterThan(0);
    expect(t.blocked, JSON.stringify(t)).toBeGreaterThan(0);
  }, 60_000);

  it("a checked directory swapped for a symlink to ~/.ssh (single and chunked writes, patch)", async () => {
    const proj = scratch("race-dir");
    const dir = scratch("race-dir/a");
    writeFileSync(join(dir, "patch-me.txt"), "marker\n");
    // Each state held up to 15 ms: some writes fit in between, others see the directory change under them.
    const flipper = await startFlipper("dir", dir, "", ssh, 15);
    const t: Tally = { ok: 0, blocked: 0, refused: 0 };
    const written: string[] = [];
    try {
      for (let i = 0; i < 30; i++) {
        const name = `note-${i}.txt`;
        const r = await call(writeFile, { path: join(dir, name), content: `note ${i}\n` });
        tally(t, r, `write ${i}`);
        if (r.error === null) written.push(name);
        const big = await call(writeInChunks, { path: join(dir, `big-${i}.txt`), content: `${i} `.repeat(6000) });
        tally(t, big, `chunked write ${i}`);
        if (big.error === null) written.push(`big-${i}.txt`);
        tally(t, await call(patch, { path: join(dir, "patch-me.txt"), old_string: "marker", new_string: "marker!" }), `patch ${i}`);
      }
    } finally {
      await flipper.stop();
    }
    expect(protectedState()).toEqual(before);
    // Every write that succeeded landed in the project (the directory, or where the flipper moved it), nowhere else.
    for (const name of written) expect(findAll(proj, name).length, name).toBeGreaterThan(0);
    expect(t.ok, JSON.stringify(t)).toBeGreaterThan(0);
    expect(t.blocked + t.refused, JSON.stringify(t)).toBeGreaterThan(0);
  }, 90_000);

  it("the file itself flipping between a regular file and a symlink to ~/.ssh/authorized_keys", async () => {
    const proj = scratch("race-file");
    const target = join(proj, "target");
    const flipper = await startFlipper("file", target, "marker\n", keys);
    const t: Tally = { ok: 0, blocked: 0, refused: 0 };
    try {
      for (let i = 0; i < 30; i++) {
        tally(t, await call(writeFile, { path: target, content: `ssh-ed25519 AAAA attacker-${i}\n` }), `write ${i}`);
        tally(t, await call(patch, { path: target, old_string: "marker", new_string: "marker attacker" }), `patch ${i}`);
      }
    } finally {
      await flipper.stop();
    }
    expect(protectedState()).toEqual(before);
    expect(readFileSync(keys, "utf8")).toBe(KEYS);
    expect(statSync(keys).mode & 0o777).toBe(0o600);
    expect(t.ok, JSON.stringify(t)).toBeGreaterThan(0);
    expect(t.blocked, JSON.stringify(t)).toBeGreaterThan(0);
  }, 60_000);
});

/** The real gate's answer, then `swap()` — a change made exactly between the check and the write. */
function swappingGate(swap: () => void): WriteGate {
  return {
    check: async (command: string, options: CheckOptions) => {
      const decision = await gate.check(command, options);
      swap();
      return decision;
    },
  };
}

describe("a path changed between the check and the write is refused", () => {
  let before: string[];
  beforeEach(() => {
    before = protectedState();
  });

  it("a symlink in the last component leading to ~/.ssh/authorized_keys is blocked (write_file and patch)", async () => {
    const dir = scratch("final-link");
    const link = join(dir, "keys.txt");
    symlinkSync(keys, link);
    const writeFile = createWriteFileHandler({ environments: () => manager, gate: () => gate });
    const patch = createPatchHandler({ environments: () => manager, gate: () => gate });
    const w = await call(writeFile, { path: link, content: "ssh-ed25519 AAAA attacker\n" });
    expect(w).toEqual({ error: expect.stringMatching(/^write_file was not allowed to write .*keys\.txt: .*credential-file-write/), status: "blocked" });
    const p = await call(patch, { path: link, old_string: "marker", new_string: "attacker" });
    expect(p).toMatchObject({ status: "blocked" });
    expect(protectedState()).toEqual(before);
  });

  it("the approved directory replaced by a symlink to ~/.ssh", async () => {
    const dir = scratch("swap-dir");
    const sub = scratch("swap-dir/sub");
    const handler = createWriteFileHandler({
      environments: () => manager,
      gate: () => swappingGate(() => (renameSync(sub, join(dir, "sub.moved")), symlinkSync(ssh, sub))),
    });
    const r = await call(handler, { path: join(sub, "new.txt"), content: "x\n" });
    expect(r.error).toBe(
      `The directory ${sub} changed after the write to ${sub}/new.txt was checked: it is no longer the directory that was approved ` +
        "(a symbolic link or another directory took its place). Nothing was written. Look at the path again (something is changing it) and retry if it is still what you mean.",
    );
    expect(protectedState()).toEqual(before);
    expect(readdirSync(join(dir, "sub.moved"))).toEqual([]);
  });

  it("the file replaced by a symlink to authorized_keys, or to ~/.ssh itself", async () => {
    const dir = scratch("swap-file");
    for (const [name, to] of [["a.txt", keys], ["b.txt", ssh]] as const) {
      const target = join(dir, name);
      writeFileSync(target, "marker\n");
      const swap = () => (rmSync(target), symlinkSync(to, target));
      for (const handler of [
        createWriteFileHandler({ environments: () => manager, gate: () => swappingGate(swap) }),
        createPatchHandler({ environments: () => manager, gate: () => swappingGate(swap) }),
      ]) {
        const r = await call(handler, { path: target, content: "attacker\n", old_string: "marker", new_string: "attacker" });
        expect(r.error).toBe(
          `${target} became a symbolic link after the write was checked; file writes never follow a link that appears between the check and the write. ` +
            "Nothing was written. Look at the path again (something is changing it) and retry if it is still what you mean.",
        );
        rmSync(target);
        writeFileSync(target, "marker\n");
      }
      expect(readdirSync(dir).filter((n) => n.includes(".mibyan-"))).toEqual([]);
    }
    expect(protectedState()).toEqual(before);
  });

  it("the parts of a chunked write: a part replaced by a symlink or altered, or a part's name taken by a symlink first", async () => {
    const dir = scratch("swap-part");
    const content = "y".repeat(20_000);
    const expected = {
      "swap-first": /^The temporary copy of .* disappeared or was replaced while it was being written\. The file was not changed\.$/,
      "alter-first": /^The temporary copy of .* was altered by something else while it was being written\. The file was not changed\.$/,
      "plant-second": /^Cannot create a file in .*: \.\/\.plant-second\.txt\.mibyan-[0-9a-f]{12}\.2 already exists\. The file was not changed\.$/,
    };
    // Just before the third command (the write of the second part), something else acts on the parts.
    for (const attack of ["swap-first", "alter-first", "plant-second"] as const) {
      const target = join(dir, `${attack}.txt`);
      let count = 0;
      const provider: EnvironmentProvider = {
        get: async (taskId) =>
          observe(await manager.get(taskId), () => {
            if (++count !== 3) return;
            const first = readdirSync(dir).find((n) => n.startsWith(`.${attack}.txt.mibyan-`) && n.endsWith(".1"));
            expect(first).toBeDefined();
            const part = join(dir, first!);
            if (attack === "swap-first") (rmSync(part), symlinkSync(keys, part));
            else if (attack === "alter-first") writeFileSync(part, "z".repeat(statSync(part).size));
            else symlinkSync(keys, part.replace(/\.1$/, ".2"));
          }),
      };
      const handler = createWriteFileHandler({ environments: provider, gate: () => gate, chunkChars: 4096 });
      const r = await call(handler, { path: target, content });
      expect(r.error, attack).toMatch(expected[attack]);
      expect(readdirSync(dir).filter((n) => n.includes(".mibyan-")), attack).toEqual([]);
      expect(readdirSync(dir)).not.toContain(`${attack}.txt`);
    }
    expect(readFileSync(keys, "utf8")).toBe(KEYS);
    expect(protectedState()).toEqual(before);
  });

  it("describes the file a link leads to, not the link: mode kept on write, size and last line on read", async () => {
    const dir = scratch("modes");
    const real = join(dir, "tool.sh");
    writeFileSync(real, "#!/bin/sh\n");
    chmodSync(real, 0o751);
    symlinkSync(real, join(dir, "tool-link"));
    const writeFile = createWriteFileHandler({ environments: () => manager, gate: () => gate });
    expect(await call(writeFile, { path: join(dir, "tool-link"), content: "#!/bin/sh\necho hi\n" })).toMatchObject({ created: false, error: null });
    expect(statSync(real).mode & 0o7777).toBe(0o751);
    expect(readFileSync(real, "utf8")).toBe("#!/bin/sh\necho hi\n");
    // A link's own size (its target's name) once made the last line without a newline vanish.
    writeFileSync(join(dir, "data.txt"), "first\nsecond line without newline");
    symlinkSync(join(dir, "data.txt"), join(dir, "d"));
    const read = createReadFileHandler({ environments: () => manager });
    expect(await call(read, { path: join(dir, "d") })).toMatchObject({ total_lines: 2, file_size: 33, content: "     1\tfirst\n     2\tsecond line without newline" });
  });
});

/** `env` with `before()` called ahead of each command. */
function observe(env: Environment, before: () => void): Environment {
  return {
    get backend() {
      return env.backend;
    },
    get taskId() {
      return env.taskId;
    },
    get isolation() {
      return env.isolation;
    },
    get cwd() {
      return env.cwd;
    },
    exec(command: string, options: ExecOptions): Promise<ExecResult> {
      before();
      return env.exec(command, options);
    },
    close: () => env.close(),
  };
}
