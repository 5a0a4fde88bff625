/**
 * The receipt store with real files in a temporary directory: atomic
 * no-overwrite creation, redaction of everything that reaches the disk,
 * crash behaviour (including a writer killed with SIGKILL mid-write),
 * retention, hostile ids and corrupt files.
 */

import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import { afterAll, describe, expect, it } from "vitest";

import {
  boundOutput,
  CorruptReceiptError,
  DEFAULT_RECEIPT_RETENTION,
  InvalidProcessIdError,
  ReceiptStore,
  receiptsDir,
} from "../src/process/receipts.js";
import type { ProcessReceipt } from "../src/process/types.js";
import { isTempFileName } from "../src/util/atomic-file.js";

const scratch = mkdtempSync(path.join(tmpdir(), "mibyan-receipts-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let dirCount = 0;
/** A fresh receipts directory per test, not yet created (the store creates it). */
function freshDir(): string {
  return receiptsDir(path.join(scratch, `home-${++dirCount}`));
}

function newId(): string {
  return `proc_${randomBytes(6).toString("hex")}`;
}

function makeReceipt(overrides: Partial<ProcessReceipt> = {}): ProcessReceipt {
  const ended = Date.now();
  return {
    version: 1,
    id: newId(),
    owner: "session-1",
    taskId: "task-1",
    backend: "local",
    command: "npm run build",
    cwd: "/srv/app",
    pid: 4242,
    pty: false,
    startedAt: new Date(ended - 1500).toISOString(),
    endedAt: new Date(ended).toISOString(),
    durationMs: 1500,
    exitCode: 0,
    ended: "exited",
    reason: null,
    output: "built\n",
    outputBytes: 6,
    outputTruncated: false,
    logPath: "/tmp/mibyan-proc/log",
    writer: { pid: process.pid, startTime: "12345", host: "test-host", instance: "abc123" },
    ...overrides,
  };
}

function isoAgo(now: number, ms: number): string {
  return new Date(now - ms).toISOString();
}

const DAY = 24 * 60 * 60 * 1000;

describe("write and read", () => {
  it("round-trips a receipt, file 0600 in a 0700 directory, plain JSON on disk", async () => {
    const dir = freshDir();
    const store = new ReceiptStore({ dir });
    const receipt = makeReceipt();
    const result = await store.write(receipt);
    expect(result).toEqual({ receipt, written: true });
    expect(await store.read(receipt.id)).toEqual(receipt);

    const file = path.join(dir, `${receipt.id}.json`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(receipt);
    expect(readdirSync(dir)).toEqual([`${receipt.id}.json`]);
  });

  it("keeps the first receipt for an id: a second write returns it with written: false", async () => {
    const store = new ReceiptStore({ dir: freshDir() });
    const first = makeReceipt({ output: "first\n" });
    await store.write(first);
    const second = await store.write({ ...first, output: "second\n", exitCode: 1 });
    expect(second).toEqual({ receipt: first, written: false });
    expect(await store.read(first.id)).toEqual(first);
  });

  it("lets exactly one of 20 concurrent writers from two stores win", async () => {
    const dir = freshDir();
    const stores = [new ReceiptStore({ dir }), new ReceiptStore({ dir })];
    const id = newId();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => stores[i % 2]!.write(makeReceipt({ id, output: `writer ${i}\n`, pid: 1000 + i }))),
    );
    expect(results.filter((r) => r.written)).toHaveLength(1);
    const onDisk = JSON.parse(readFileSync(path.join(dir, `${id}.json`), "utf8"));
    for (const r of results) expect(r.receipt).toEqual(onDisk);
    expect(readdirSync(dir).filter(isTempFileName)).toEqual([]);
  });

  it("returns undefined for an id with no receipt, without creating anything", async () => {
    const dir = freshDir();
    const store = new ReceiptStore({ dir });
    expect(await store.read(newId())).toBeUndefined();
    expect(await store.list()).toEqual([]);
    expect(existsSync(dir)).toBe(false);
  });

  it("drops unknown fields and refuses a receipt of the wrong shape", async () => {
    const store = new ReceiptStore({ dir: freshDir() });
    const receipt = makeReceipt();
    const { receipt: written } = await store.write({ ...receipt, extra: "x" } as ProcessReceipt);
    expect(written).toEqual(receipt);
    await expect(store.write({ ...makeReceipt(), exitCode: "0" } as unknown as ProcessReceipt)).rejects.toThrow(/exitCode/);
    await expect(store.write({ ...makeReceipt(), writer: { pid: 1 } } as unknown as ProcessReceipt)).rejects.toThrow(/writer/);
  });
});

describe("output bounds", () => {
  it("keeps the end of the output and marks it truncated", async () => {
    const store = new ReceiptStore({ dir: freshDir(), maxOutputChars: 10 });
    const { receipt } = await store.write(makeReceipt({ output: "0123456789abcdefghij", outputBytes: 20 }));
    expect(receipt.output).toBe("abcdefghij");
    expect(receipt.outputTruncated).toBe(true);
    expect(receipt.outputBytes).toBe(20);
  });

  it("keeps outputTruncated when the caller already cut the output", async () => {
    const store = new ReceiptStore({ dir: freshDir() });
    const { receipt } = await store.write(makeReceipt({ output: "tail", outputTruncated: true }));
    expect(receipt).toMatchObject({ output: "tail", outputTruncated: true });
  });

  it("never starts with a partial [REDACTED] marker or a lone surrogate", () => {
    // "…TOKEN=[REDACTED] end": cut 3 characters into the marker.
    const redactedTail = "[REDACTED] end";
    const cut = boundOutput(`x TOKEN=${"v".repeat(30)} end`, redactedTail.length - 3);
    expect(cut.truncated).toBe(true);
    expect(cut.output).toBe(" end");

    const emoji = "😀".repeat(5); // 10 UTF-16 units
    const odd = boundOutput(emoji, 7);
    expect(odd.output).toBe("😀".repeat(3));
    expect(odd.output.length).toBeLessThanOrEqual(7);
  });

  it("uses the default limit of 50,000 characters", async () => {
    const store = new ReceiptStore({ dir: freshDir() });
    const { receipt } = await store.write(makeReceipt({ output: "y".repeat(60_000) }));
    expect(receipt.output).toHaveLength(50_000);
    expect(receipt.outputTruncated).toBe(true);
  });
});

describe("redaction", () => {
  const hex = (n: number) => randomBytes(n).toString("hex");
  const b64 = (n: number) => randomBytes(n).toString("base64").replace(/[+/=]/g, "Q");
  // Built at run time, so this file holds nothing that looks like a credential.
  const pemBody = [b64(48), b64(48), b64(30)];
  const corpus: { text: string; secrets: string[] }[] = (() => {
    const v = {
      openai: `sk-${"proj-"}${hex(24)}`,
      anthropic: `sk-${"ant-"}api03-${hex(24)}`,
      ghp: `gh${"p_"}${hex(18)}`,
      ghpat: `github${"_pat_"}${hex(11)}_${hex(20)}`,
      aws: `AK${"IA"}${hex(8).toUpperCase()}`,
      google: `AI${"za"}${hex(18)}`,
      slack: `xox${"b-"}1234567890-${hex(12)}`,
      stripe: `sk${"_live_"}${hex(12)}`,
      hf: `hf${"_"}${hex(17)}`,
      apiKey: `ak${hex(10)}`,
      ghToken: `gt${hex(10)}`,
      bearer: `br${hex(16)}`,
      basic: b64(18),
      dbPass: `pa55${hex(6)}`,
      jwt: `ey${"J"}${b64(12)}.${b64(24)}.${b64(24)}`,
      password: `hunter2${hex(4)}`,
    };
    return [
      ...[v.openai, v.anthropic, v.ghp, v.ghpat, v.aws, v.google, v.slack, v.stripe, v.hf, v.jwt].map((s) => ({ text: `key ${s} end`, secrets: [s] })),
      { text: `API_KEY=${v.apiKey} npm start`, secrets: [v.apiKey] },
      { text: `export GITHUB_TOKEN="${v.ghToken}"`, secrets: [v.ghToken] },
      { text: `curl -H "Authorization: Bearer ${v.bearer}" https://api.example.com`, secrets: [v.bearer] },
      { text: `Authorization: Basic ${v.basic}`, secrets: [v.basic] },
      { text: `-----BEGIN OPENSSH ${"PRIVATE KEY"}-----\n${pemBody.join("\n")}\n-----END OPENSSH ${"PRIVATE KEY"}-----`, secrets: pemBody },
      { text: `psql postgres://user:${v.dbPass}@db.internal/app`, secrets: [v.dbPass] },
      { text: `mysql --password ${v.password} -h db`, secrets: [v.password] },
    ];
  })();
  const allText = corpus.map((c) => c.text).join("\n");
  const allSecrets = corpus.flatMap((c) => c.secrets);

  function expectNoSecret(bytes: string, secrets: string[]): void {
    for (const secret of secrets) expect(bytes, `leaked ${secret}`).not.toContain(secret);
  }

  it("redacts command, output, reason and cwd, whatever the caller passed", async () => {
    const dir = freshDir();
    const store = new ReceiptStore({ dir });
    const receipt = makeReceipt({ command: allText, output: allText, reason: allText, cwd: `/work/${allText}` });
    const { receipt: written } = await store.write(receipt);
    const bytes = readFileSync(path.join(dir, `${receipt.id}.json`), "utf8");
    expectNoSecret(bytes, allSecrets);
    expect(written.command).toContain("[REDACTED]");
    expect(JSON.parse(bytes)).toEqual(written);
  });

  it("leaves no part of a secret that straddles the cut point", async () => {
    const dir = freshDir();
    const maxOutputChars = 400;
    const store = new ReceiptStore({ dir, maxOutputChars });
    for (const { text, secrets } of corpus) {
      for (const secret of secrets) {
        // Place the raw text so that a naive tail cut would fall in the middle of the secret.
        const prefix = "line of build output\n".repeat(40);
        const middle = prefix.length + text.indexOf(secret) + Math.floor(secret.length / 2);
        const suffixLength = middle + maxOutputChars - prefix.length - text.length;
        expect(suffixLength).toBeGreaterThan(0);
        const output = prefix + text + "\n" + "z".repeat(suffixLength - 1);
        expect(output.length - maxOutputChars).toBe(middle);
        const receipt = makeReceipt({ output });
        const { receipt: written } = await store.write(receipt);
        const bytes = readFileSync(path.join(dir, `${receipt.id}.json`), "utf8");
        expectNoSecret(bytes, [secret, secret.slice(Math.floor(secret.length / 2))]);
        expect(written.output.length).toBeLessThanOrEqual(maxOutputChars);
        expect(written.outputTruncated).toBe(true);
        expect(written.output).not.toMatch(/^(?:REDACTED\]|EDACTED\]|DACTED\]|ACTED\]|CTED\]|TED\]|ED\]|D\]|\])/);
      }
    }
  });
});

describe("hostile ids", () => {
  const hostile = ["../x", "proc_../../etc", "PROC_0123456789AB", "", "proc_0123456789ab/../../x", "proc_0123456789ab\n", "proc_0123456789abc", "/etc/passwd"];

  it.each(hostile)("refuses %j before touching the filesystem", async (id) => {
    const dir = freshDir();
    const store = new ReceiptStore({ dir });
    const write = store.write(makeReceipt({ id }));
    await expect(write).rejects.toBeInstanceOf(InvalidProcessIdError);
    await expect(write).rejects.toMatchObject({ code: "invalid_id" });
    await expect(store.read(id)).rejects.toMatchObject({ code: "invalid_id" });
    expect(existsSync(path.dirname(dir))).toBe(false);
  });
});

describe("corrupt files", () => {
  it("read throws CorruptReceiptError naming the file; list skips it and reports it", async () => {
    const dir = freshDir();
    const reported: [string, Error][] = [];
    const store = new ReceiptStore({ dir, onCorrupt: (file, error) => reported.push([file, error]) });
    const good = makeReceipt();
    await store.write(good);

    const notJson = newId();
    const wrongShape = newId();
    const otherId = newId();
    writeFileSync(path.join(dir, `${notJson}.json`), "{ half a rec");
    writeFileSync(path.join(dir, `${wrongShape}.json`), JSON.stringify({ ...makeReceipt({ id: wrongShape }), ended: "exploded" }));
    writeFileSync(path.join(dir, `${otherId}.json`), JSON.stringify(makeReceipt()));
    // Not receipts: a leftover temporary file (whole, even) and a stranger.
    writeFileSync(path.join(dir, `.${newId()}.json.123.abcdef.tmp`), JSON.stringify(makeReceipt()));
    writeFileSync(path.join(dir, "notes.txt"), "hello");

    for (const id of [notJson, wrongShape, otherId]) {
      const error = await store.read(id).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(CorruptReceiptError);
      expect(error).toMatchObject({ code: "corrupt_receipt", file: path.join(dir, `${id}.json`) });
      expect((error as Error).message).toContain(`${id}.json`);
    }
    expect(await store.list()).toEqual([good]);
    expect(reported.map(([file]) => path.basename(file)).sort()).toEqual([notJson, wrongShape, otherId].map((id) => `${id}.json`).sort());
    for (const [, error] of reported) expect(error).toBeInstanceOf(CorruptReceiptError);
  });
});

describe("list", () => {
  it("returns receipts newest first and applies the filter", async () => {
    const dir = freshDir();
    const store = new ReceiptStore({ dir });
    const now = Date.now();
    const a = makeReceipt({ endedAt: isoAgo(now, 3000), owner: "s1" });
    const b = makeReceipt({ endedAt: isoAgo(now, 1000), owner: "s2" });
    const c = makeReceipt({ endedAt: isoAgo(now, 2000), owner: "s1" });
    for (const r of [a, b, c]) await store.write(r);
    expect((await store.list()).map((r) => r.id)).toEqual([b.id, c.id, a.id]);
    expect((await store.list((r) => r.owner === "s1")).map((r) => r.id)).toEqual([c.id, a.id]);
  });
});

describe("retention", () => {
  /** Writes receipts with a store that keeps everything, so only the store under test prunes. */
  async function seed(dir: string, receipts: ProcessReceipt[]): Promise<void> {
    const writer = new ReceiptStore({ dir, retention: { maxAgeMs: Infinity, maxCount: Infinity } });
    for (const r of receipts) await writer.write(r);
  }

  it("has the documented defaults", () => {
    expect(DEFAULT_RECEIPT_RETENTION).toEqual({ maxAgeMs: 7 * DAY, maxCount: 1000 });
  });

  it("removes receipts older than maxAgeMs, judged by endedAt", async () => {
    const dir = freshDir();
    const now = Date.now();
    const old = makeReceipt({ endedAt: isoAgo(now, 8 * DAY) });
    const recent = makeReceipt({ endedAt: isoAgo(now, 6 * DAY) });
    await seed(dir, [old, recent]);
    const store = new ReceiptStore({ dir, now: () => now });
    expect(await store.prune()).toEqual({ removed: 1 });
    expect(await store.list()).toEqual([recent]);
    // Ten days later the other one goes too.
    expect(await new ReceiptStore({ dir, now: () => now + 10 * DAY }).prune()).toEqual({ removed: 1 });
    expect(readdirSync(dir)).toEqual([]);
  });

  it("keeps the newest maxCount receipts", async () => {
    const dir = freshDir();
    const now = Date.now();
    const receipts = Array.from({ length: 5 }, (_, i) => makeReceipt({ endedAt: isoAgo(now, (i + 1) * 60_000) }));
    await seed(dir, receipts);
    const store = new ReceiptStore({ dir, retention: { maxCount: 2 }, now: () => now });
    expect(await store.prune()).toEqual({ removed: 3 });
    expect((await store.list()).map((r) => r.id)).toEqual([receipts[0]!.id, receipts[1]!.id]);
  });

  it("ages a corrupt receipt file by its mtime, and removes stale temporary files only", async () => {
    const dir = freshDir();
    const now = Date.now();
    await seed(dir, [makeReceipt()]);
    const corrupt = path.join(dir, `${newId()}.json`);
    writeFileSync(corrupt, "garbage");
    const staleTemp = path.join(dir, `.${newId()}.json.1.aaaaaa.tmp`);
    const freshTemp = path.join(dir, `.${newId()}.json.2.bbbbbb.tmp`);
    writeFileSync(staleTemp, "x");
    writeFileSync(freshTemp, "x");
    const store = new ReceiptStore({ dir, now: () => now });
    expect(await store.prune()).toEqual({ removed: 0 });

    const longAgo = (now - 8 * DAY) / 1000;
    utimesSync(corrupt, longAgo, longAgo);
    utimesSync(staleTemp, (now - 120_000) / 1000, (now - 120_000) / 1000);
    expect(await store.prune()).toEqual({ removed: 2 });
    expect(existsSync(corrupt)).toBe(false);
    expect(existsSync(staleTemp)).toBe(false);
    expect(existsSync(freshTemp)).toBe(true);
  });

  it("lets concurrent pruners in several stores race without errors", async () => {
    const dir = freshDir();
    const now = Date.now();
    await seed(dir, Array.from({ length: 30 }, (_, i) => makeReceipt({ endedAt: isoAgo(now, i * 1000) })));
    const stores = Array.from({ length: 4 }, () => new ReceiptStore({ dir, retention: { maxCount: 10 }, now: () => now }));
    const results = await Promise.all(stores.map((s) => s.prune()));
    expect(results.reduce((sum, r) => sum + r.removed, 0)).toBe(20);
    expect(readdirSync(dir)).toHaveLength(10);
  });

  it("prunes after a write, at most once per pruneIntervalMs", async () => {
    const dir = freshDir();
    let now = Date.now();
    const store = new ReceiptStore({ dir, retention: { maxCount: 2 }, now: () => now });
    const receipts = Array.from({ length: 4 }, (_, i) => makeReceipt({ endedAt: isoAgo(now, (10 - i) * 1000) }));
    for (const r of receipts.slice(0, 3)) await store.write(r);
    expect(readdirSync(dir)).toHaveLength(3); // pruned after the first write only
    now += 60_000;
    await store.write(receipts[3]!);
    expect((await store.list()).map((r) => r.id)).toEqual([receipts[3]!.id, receipts[2]!.id]);
  });

  it("rejects nonsensical limits", () => {
    expect(() => new ReceiptStore({ dir: freshDir(), retention: { maxCount: -1 } })).toThrow(RangeError);
    expect(() => new ReceiptStore({ dir: freshDir(), retention: { maxAgeMs: Number.NaN } })).toThrow(RangeError);
  });
});

describe("a crash between the temporary file and its link", () => {
  it("leaves nothing behind when beforeCommit throws", async () => {
    const dir = freshDir();
    const store = new ReceiptStore({ dir, hooks: { beforeCommit: () => Promise.reject(new Error("disk on fire")) } });
    const receipt = makeReceipt();
    await expect(store.write(receipt)).rejects.toThrow("disk on fire");
    expect(readdirSync(dir)).toEqual([]);
    expect(await new ReceiptStore({ dir }).read(receipt.id)).toBeUndefined();
  });

  // The child imports the built module (plain Node cannot load the TypeScript
  // source). `npm test` builds first, so in CI this never skips; locally it
  // runs once `npm run build` has produced dist/process/receipts.js.
  const distFile = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../dist/process/receipts.js");

  describe.skipIf(!existsSync(distFile))("in a writer killed with SIGKILL", () => {
    it("leaves no receipt, only a temporary file that readers skip and prune removes", async () => {
      const dir = freshDir();
      mkdirSync(path.dirname(dir), { recursive: true });
      const script = path.join(path.dirname(dir), "killed-writer.mjs");
      writeFileSync(
        script,
        [
          `import { ReceiptStore } from ${JSON.stringify(pathToFileURL(distFile).href)};`,
          `const store = new ReceiptStore({ dir: process.argv[2], hooks: { beforeCommit: () => { process.kill(process.pid, "SIGKILL"); } } });`,
          `await store.write(JSON.parse(process.argv[3]));`,
          `console.log("not killed");`,
        ].join("\n"),
      );
      const receipt = makeReceipt();
      const child = spawnSync(process.execPath, [script, dir, JSON.stringify(receipt)], { encoding: "utf8", timeout: 15_000 });
      expect(child.stderr).toBe("");
      expect(child.signal).toBe("SIGKILL");
      expect(child.stdout).not.toContain("not killed");

      expect(existsSync(path.join(dir, `${receipt.id}.json`))).toBe(false);
      const store = new ReceiptStore({ dir, now: () => Date.now() + 60 * 60 * 1000 });
      expect(await store.read(receipt.id)).toBeUndefined();
      expect(await store.list()).toEqual([]);
      const temps = readdirSync(dir).filter(isTempFileName);
      expect(temps).toHaveLength(1);
      expect(temps[0]).toMatch(new RegExp(`^\\.${receipt.id}\\.json\\.`));

      expect(await store.prune()).toEqual({ removed: 1 });
      expect(readdirSync(dir)).toEqual([]);
    });
  });
});
