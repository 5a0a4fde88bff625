/**
 * What checking a handler's result for serialisability costs (every result
 * that is not a string is serialised once, right after the handler, and that
 * text is what the model receives; with post-hooks it is serialised again
 * after them). Baseline, in the same run: calling the handler and
 * serialising its value once, the least any runtime must do.
 *
 * - `results.object`: dispatch of a tool returning a 20-row object, no hooks;
 * - `results.object.postHook`: the same with one post-hook that changes nothing.
 */
import { Bench } from "tinybench";
import { reportedNsRow } from "./common.mjs";

const BATCH = 1000;

export async function benchResults({ quick, note }) {
  note("results: dispatch of an object result (serialisability check) vs handler + JSON.stringify ...");
  const { ToolRegistry, createMemoryLogger } = await import("../dist/index.js");
  const settings = quick ? { time: 150, warmupTime: 50 } : { time: 1500, warmupTime: 300 };
  const rows = Array.from({ length: 20 }, (_, i) => ({ id: i, name: `row ${i}`, ok: i % 2 === 0 }));
  const handler = () => ({ rows });
  const plain = new ToolRegistry({ logger: createMemoryLogger() });
  plain.register({ name: "rows", toolset: "bench", schema: { description: "returns an object" }, handler });
  const hooked = new ToolRegistry({ logger: createMemoryLogger() });
  hooked.register({ name: "rows", toolset: "bench", schema: { description: "returns an object" }, handler });
  hooked.addPostHook(function benchPost() {
    return undefined;
  });
  const expected = JSON.stringify(handler());
  for (const registry of [plain, hooked]) {
    const content = await registry.dispatch("rows");
    if (content !== expected) throw new Error(`results bench sanity check failed: ${content.slice(0, 200)}`);
  }

  const bench = new Bench(settings);
  bench
    .add("baseline", async () => {
      for (let i = 0; i < BATCH; i++) JSON.stringify(await handler());
    })
    .add("dispatch", async () => {
      for (let i = 0; i < BATCH; i++) await plain.dispatch("rows");
    })
    .add("dispatch+posthook", async () => {
      for (let i = 0; i < BATCH; i++) await hooked.dispatch("rows");
    });
  await bench.run();
  const ns = (name) => {
    const result = bench.getTask(name)?.result;
    if (result?.latency === undefined) throw new Error(`benchmark task "${name}" did not complete`);
    return { ns: (result.latency.p50 * 1e6) / BATCH, samples: result.latency.samples?.length ?? 0 };
  };
  const baseline = ns("baseline");
  const out = [];
  for (const [task, name, label] of [
    ["dispatch", "results.object", "dispatch, 20-row object result"],
    ["dispatch+posthook", "results.object.postHook", "dispatch, 20-row object result, 1 post-hook"],
  ]) {
    const value = ns(task);
    out.push(reportedNsRow({ name, label, value, baseline, baselineLabel: "await handler() + JSON.stringify" }));
  }
  return out;
}
