/**
 * What a signal that ends the CLI does to the MCP servers it started. Stdio servers run in process
 * groups of their own (so a terminal's Ctrl-C reaches the CLI and not them), which also means they
 * outlive a CLI killed by a signal: the library's `exit` hook does not run on a signal death, and a
 * server that ignores its stdin closing would be left behind. The CLI alone installs this: a library
 * must not take over its host's signals.
 */
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** How long servers get to exit after SIGTERM before SIGKILL, when the CLI is going down. */
const SERVER_GRACE_MS = 1_000;

export function endMcpServersOnSignals(): void {
  for (const signal of SIGNALS) {
    const onSignal = (): void => {
      // A command that handles this signal itself keeps it: `call` turns Ctrl-C into cancelling the
      // tool and then closes its servers; `mcp serve` shuts down cleanly.
      if (process.listenerCount(signal) > 1) return;
      process.removeListener(signal, onSignal);
      void import("../mcp/client/stdio-process.js")
        .then(({ endLiveStdioServers }) => endLiveStdioServers(SERVER_GRACE_MS))
        .catch(() => undefined)
        // With no listener left, the signal's default action ends the CLI as it would have.
        .finally(() => process.kill(process.pid, signal));
    };
    process.on(signal, onSignal);
  }
}
