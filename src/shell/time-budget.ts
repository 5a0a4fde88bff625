/**
 * The time budget of one parse. It is spent only when both the wall clock and
 * this process's CPU time have run past it: wall time alone fails trivial
 * commands on a loaded machine (the process waits for a core while its budget
 * runs out), and a parse that really is slow spends CPU, so it is still cut off.
 */

export interface TimeBudget {
  expired(): boolean;
}

export const NO_TIME_LIMIT: TimeBudget = { expired: () => false };

export function timeBudget(ms: number): TimeBudget {
  if (!Number.isFinite(ms)) return NO_TIME_LIMIT;
  const wallDeadline = performance.now() + ms;
  const cpuStart = process.cpuUsage();
  return {
    expired(): boolean {
      if (performance.now() <= wallDeadline) return false;
      const used = process.cpuUsage(cpuStart);
      return (used.user + used.system) / 1000 > ms;
    },
  };
}
