/**
 * `notifications/tools/list_changed`: the server's tool list changed, so list it again (every page)
 * and re-register.
 *
 * The notification only schedules the work (hermes ran it as a task, never inline in the message
 * handler, so a refresh cannot block the stream it arrives on). Refreshes never overlap: one that
 * arrives while another runs makes exactly one more run afterwards. The listing runs beside calls in
 * flight, not behind them (the call slot is for tool calls only), so a call that started before the
 * change completes normally and the new tools are callable well within a second. Every registration
 * and removal bumps the registry's `generation`, which is how an agent loop notices.
 */
import type { Logger } from "../../registry/types.js";
import type { McpConnection } from "./connection.js";
import { describe } from "./connection.js";
import { listAllTools, type ApplyOutcome, type ServerTools } from "./register.js";

export class ToolRefresher {
  private running: Promise<ApplyOutcome | undefined> | undefined;
  private queued: Promise<ApplyOutcome | undefined> | undefined;

  constructor(
    private readonly connection: McpConnection,
    private readonly tools: ServerTools,
    private readonly logger: Logger,
  ) {}

  /** From the notification handler: refresh soon, without waiting. */
  schedule(): void {
    void this.refresh();
  }

  /** Re-lists and re-registers now (or once after the refresh already running); resolves with what changed. */
  refresh(): Promise<ApplyOutcome | undefined> {
    if (this.running !== undefined) {
      this.queued ??= this.running.then(() => {
        this.queued = undefined;
        return this.refresh();
      });
      return this.queued;
    }
    const run = this.run().finally(() => {
      if (this.running === run) this.running = undefined;
    });
    this.running = run;
    return run;
  }

  private async run(): Promise<ApplyOutcome | undefined> {
    const client = this.connection.client;
    if (client === undefined) return undefined; // not ready: the next ready transition lists anyway
    try {
      const tools = await listAllTools(client, { timeout: this.connection.server.connectTimeoutMs });
      if (this.connection.client !== client) return undefined; // the session changed meanwhile
      const outcome = this.tools.apply(tools, client.getServerCapabilities());
      if (outcome.added.length > 0 || outcome.removed.length > 0) {
        this.logger.warn(
          `MCP server '${this.connection.name}': tools changed dynamically — added: ${outcome.added.join(", ") || "none"}; removed: ${outcome.removed.join(", ") || "none"}`,
        );
      }
      return outcome;
    } catch (error) {
      this.logger.warn(`MCP server '${this.connection.name}': refreshing the tool list failed: ${describe(error)}`);
      return undefined;
    }
  }
}
