#!/usr/bin/env node
// The CLI runs one command, or a stream of them, and exits. V8 would optimise the bash grammar's
// wasm (its lexer is one 160 KB function) with TurboFan in the background, about 1.2 s of CPU that
// the process then waits for at exit; Liftoff's code is fast enough for any number of commands a
// CLI process checks (docs/benchmarks.md, "CLI start-up"). Set here, not in the library, which
// keeps V8's defaults: a long-running process gains from the optimised grammar. The commands that
// never parse shell skip it: importing node:v8 alone costs them about 8 ms.
const GRAMMAR_FREE = new Set(["tools", "definitions", "approvals", "processes"]);
// `mcp serve` runs for hours: it gains from the optimised grammar like any long-running process.
const LONG_RUNNING = process.argv[2] === "mcp" && process.argv[3] === "serve";
if (!GRAMMAR_FREE.has(process.argv[2]) && !LONG_RUNNING) {
  const { setFlagsFromString } = await import("node:v8");
  setFlagsFromString("--liftoff-only");
}
const { main } = await import("../dist/cli/main.js");
await main();
