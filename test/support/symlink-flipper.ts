// A separate process that keeps changing what a path is, as fast as it can, while a test writes
// through it: the real race a check-then-write has to survive. Every change is a rename, so the
// path is never half-made (except where noted), and the flipper never stops on an error.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, lstatSync, readlinkSync } from "node:fs";

export type FlipMode =
  /** `path` is a symlink that points at `a`, then at `b`, then at `a` ... */
  | "link"
  /** `path` is a regular file (content `a`), then a symlink to `b`, then a new regular file ... */
  | "file"
  /** `path` is a real directory, then a symlink to `b`, then the directory again (absent for a moment in between). */
  | "dir";

const FLIPPER = String.raw`
const fs = require("fs");
const [mode, path, a, b, dwell] = process.argv.slice(1);
// Each state is held for a random 0..dwell ms (0: flip as fast as possible).
const pause = new Int32Array(new SharedArrayBuffer(4));
const hold = () => { if (Number(dwell) > 0) Atomics.wait(pause, 0, 0, Math.random() * Number(dwell)); };
const tmp = path + ".flip-tmp";
const stash = path + ".flip-stash";
const deadline = Date.now() + 120000;
const quiet = (f) => { try { f(); } catch {} };
const link = (target) => { quiet(() => { quiet(() => fs.unlinkSync(tmp)); fs.symlinkSync(target, tmp); fs.renameSync(tmp, path); }); hold(); };
let flips = 0;
process.send && process.send("ready");
for (;;) {
  if (mode === "link") { link(a); link(b); }
  else if (mode === "file") {
    quiet(() => { fs.writeFileSync(tmp, a); fs.renameSync(tmp, path); });
    hold();
    link(b);
  } else {
    // The directory goes to the side, a symlink takes its place, then the directory comes back.
    quiet(() => { if (!fs.lstatSync(path).isSymbolicLink()) fs.renameSync(path, stash); });
    link(b);
    quiet(() => fs.unlinkSync(path));
    quiet(() => { if (!fs.existsSync(stash)) fs.mkdirSync(stash); fs.renameSync(stash, path); });
    hold();
    // When the directory could not come back (the writer made one in the gap), it is kept
    // aside, files and all, and the writer's directory takes its turn.
    quiet(() => { if (fs.existsSync(stash)) fs.renameSync(stash, stash + "." + flips); });
  }
  if (++flips % 256 === 0 && Date.now() > deadline) break;
}
`;

export interface Flipper {
  /** Stops the process and waits for it. */
  stop(): Promise<void>;
}

/**
 * Starts flipping `path`; resolves once the child runs. `dwellMs`: each state is held for a
 * random time up to that long (0: none), so that a slower writer sometimes gets through.
 */
export async function startFlipper(mode: FlipMode, path: string, a: string, b: string, dwellMs = 0): Promise<Flipper> {
  const child: ChildProcess = spawn(process.execPath, ["-e", FLIPPER, mode, path, a, b, String(dwellMs)], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  await new Promise<void>((resolve, reject) => {
    child.once("message", () => resolve());
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`the flipper exited early (${code})`)));
  });
  // Let it change the path a few times before the test starts.
  const seen = new Set<string>();
  for (let i = 0; i < 2000 && seen.size < 2; i++) {
    seen.add(kindOf(path));
    await new Promise((r) => setTimeout(r, 1));
  }
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGKILL");
      }),
  };
}

function kindOf(path: string): string {
  try {
    const st = lstatSync(path);
    return st.isSymbolicLink() ? `link:${readlinkSync(path)}` : st.isDirectory() ? "dir" : "file";
  } catch {
    return existsSync(path) ? "?" : "absent";
  }
}
