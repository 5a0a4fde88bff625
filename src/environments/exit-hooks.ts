/**
 * The process-level exit handlers of the environment managers (see the
 * module comment of manager.ts for what runs when): installed while at least
 * one manager holds an environment, removed when none does.
 */

/** What the handlers need of a manager. */
export interface ExitManaged {
  disposeAllSync(): void;
  closeAll(): Promise<void>;
}

const EXIT_SIGNALS: readonly NodeJS.Signals[] = process.platform === "win32" ? ["SIGINT", "SIGTERM"] : ["SIGINT", "SIGTERM", "SIGHUP"];

/** The process-level handlers, installed while at least one manager holds an environment. */
export const exitHooks = (() => {
  const managers = new Set<ExitManaged>();
  let installed = false;

  const disposeAll = (): void => {
    for (const manager of [...managers]) manager.disposeAllSync();
  };
  const onBeforeExit = (): void => {
    for (const manager of [...managers]) void manager.closeAll().catch(() => {});
  };
  const onExit = (): void => disposeAll();
  const onSignal = (signal: NodeJS.Signals): void => {
    // Someone else handles this signal: let them decide; `exit` cleans up if they exit.
    if (process.listenerCount(signal) > 1) return;
    disposeAll();
    uninstall();
    // With no listener left, the default action (terminate) applies again.
    process.kill(process.pid, signal);
  };

  function install(): void {
    if (installed) return;
    installed = true;
    process.on("beforeExit", onBeforeExit);
    process.on("exit", onExit);
    for (const signal of EXIT_SIGNALS) process.on(signal, onSignal);
  }

  function uninstall(): void {
    if (!installed) return;
    installed = false;
    process.removeListener("beforeExit", onBeforeExit);
    process.removeListener("exit", onExit);
    for (const signal of EXIT_SIGNALS) process.removeListener(signal, onSignal);
  }

  return {
    add(manager: ExitManaged): void {
      managers.add(manager);
      install();
    },
    remove(manager: ExitManaged): void {
      managers.delete(manager);
      if (managers.size === 0) uninstall();
    },
  };
})();

