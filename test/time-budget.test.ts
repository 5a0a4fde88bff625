/**
 * The parse time budget (src/shell/time-budget.ts). In a file of its own: the
 * budget counts the whole process's CPU time, so wasm compilation on V8's
 * background threads (other test files' parser start-up) would disturb it.
 */

import { expect, it, vi } from "vitest";

import { CPU_CLOCK_AFTER_MS, timeBudget } from "../src/shell/time-budget.js";

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

it("does not read the CPU clock during a parse shorter than CPU_CLOCK_AFTER_MS, and counts CPU from its first later check", () => {
  const cpuUsage = vi.spyOn(process, "cpuUsage");
  try {
    const start = performance.now();
    const budget = timeBudget(5);
    const early = [budget.expired(), budget.expired(), budget.expired()];
    const elapsed = performance.now() - start;
    expect(early).toEqual([false, false, false]);
    // A parse that short (unless the machine stalled this very test) makes no system call.
    if (elapsed < CPU_CLOCK_AFTER_MS) expect(cpuUsage).not.toHaveBeenCalled();
    const later = performance.now() + CPU_CLOCK_AFTER_MS + 1;
    while (performance.now() < later) {
      // Work past the mark.
    }
    expect(budget.expired()).toBe(false);
    expect(cpuUsage).toHaveBeenCalledTimes(1);
    const spinUntil = performance.now() + 30;
    while (performance.now() < spinUntil) {
      // Work: CPU time since that check runs past the budget.
    }
    expect(budget.expired()).toBe(true);
  } finally {
    cpuUsage.mockRestore();
  }
});
