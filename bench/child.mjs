/**
 * Runs a benchmark file again as a child Node process (`node --expose-gc
 * <file> --child ...args`), so memory figures see only that run, and resolves
 * with the JSON line the child prints.
 */

import { spawn } from "node:child_process";

export function runJsonChild(file, args, label) {
  const env = { ...process.env };
  delete env.NODE_OPTIONS; // npm may set it; measure a plain `node`
  const argv = ["--expose-gc", file, "--child", ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (text) => (stdout += text));
    child.stderr.setEncoding("utf8").on("data", (text) => (stderr += text));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`${label} child (${args.join(" ")}) exited with ${code}: ${stderr.trim()}`));
      else resolve(JSON.parse(stdout));
    });
  });
}
