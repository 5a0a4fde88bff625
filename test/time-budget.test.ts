/**
 * The parse time budget (src/shell/time-budget.ts). In a file of its own: the
 * budget counts the whole process's CPU time, so wasm compilation on V8's
 * background threads (other test files' parser start-up) would disturb it.
 */

import { expect, it } from "vitest";

import { timeBudget } from "../src/shell/time-budget.js";

it("is spent only when CPU time ran past it too, so a loaded machine does not fail trivial commands", async () => {
  const budget = timeBudget(25);
  // Waiting (as for a core on a busy machine) spends wall time, not CPU time.
  await new Promise((r) => setTimeout(r, 60));
  expect(budget.expired()).toBe(false);
  const spinUntil = performance.now() + 80;
  while (performance.now() < spinUntil) {
    // Work: CPU time runs past the budget.
  }
  expect(budget.expired()).toBe(true);
});

it("has no limit for an infinite budget", () => {
  expect(timeBudget(Infinity).expired()).toBe(false);
});
