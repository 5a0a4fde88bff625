/**
 * The time budget of one parse. It is spent only when both the wall clock and
 * this process's CPU time have run past it: wall time alone fails trivial
 * commands on a loaded machine (the process waits for a core while its budget
 * runs out), and a parse that really is slow spends CPU, so it is still cut off.
 *
 * Reading the CPU clock is a system call that costs about as much as the whole
 * analysis of a short command (1.5 µs here), so it is read only once a parse has
 * lasted `CPU_CLOCK_AFTER_MS`: CPU time is counted from that first check on. A
 * slow parse is checked often (the parser's progress callback), so it is cut off
 * at most about that long after its budget.
 */

export interface TimeBudget {
  expired(): boolean;
}

export const NO_TIME_LIMIT: TimeBudget = { expired: () => false };

/** How long a parse runs before the CPU clock is read. */
export const CPU_CLOCK_AFTER_MS = 1;

export function timeBudget(ms: number): TimeBudget {
  if (!Number.isFinite(ms)) return NO_TIME_LIMIT;
  const start = performance.now();
  const wallDeadline = start + ms;
  let cpuStart: NodeJS.CpuUsage | null = null;
  return {
    expired(): boolean {
      const now = performance.now();
      if (cpuStart === null) {
        if (now - start >= CPU_CLOCK_AFTER_MS || now > wallDeadline) cpuStart = process.cpuUsage();
        return false;
      }
      if (now <= wallDeadline) return false;
      const used = process.cpuUsage(cpuStart);
      return (used.user + used.system) / 1000 > ms;
    },
  };
}
