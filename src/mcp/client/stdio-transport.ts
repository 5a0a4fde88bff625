/**
 * The stdio transport for MCP servers: the SDK's `Transport` over a child process
 * (stdio-process.ts), written here rather than taken from the SDK's `StdioClientTransport` because
 * the child must get exactly the environment we give it, run in a process group of its own that
 * closing ends as a whole, and be killed on the way out of a program that never closed it (the
 * reasons are in stdio-process.ts).
 *
 * The transport either spawns its child on `start()` or adopts one that launch.ts spawned before
 * the SDK had loaded (`ProcessGroupStdioTransport.adopt`); from then on the two are the same.
 *
 * Framing (newline-delimited JSON-RPC) is the SDK's own `ReadBuffer` / `serializeMessage`.
 */
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

import { StdioServerProcess, type StdioProcessOptions } from "./stdio-process.js";

export { liveStdioPids } from "./stdio-process.js";
export type StdioTransportOptions = StdioProcessOptions;

export class ProcessGroupStdioTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;

  private process: StdioServerProcess | undefined;
  private readonly readBuffer = new ReadBuffer();
  private closing = false;
  /** Whether `onclose` has been called (an adopted child may have exited before we were told). */
  private closeDelivered = false;

  /** A transport that spawns its child on `start()`. */
  constructor(private readonly options: StdioTransportOptions | undefined) {}

  /** A transport over a child that is already running (or already failed); `start()` attaches to it. */
  static adopt(child: StdioServerProcess): ProcessGroupStdioTransport {
    const transport = new ProcessGroupStdioTransport(undefined);
    transport.process = child;
    return transport;
  }

  /** The child's pid once started. */
  get pid(): number | undefined {
    return this.process?.pid;
  }

  /** The last few KiB the server wrote to stderr. */
  get stderrTail(): string {
    return this.process?.stderrTail ?? "";
  }

  async start(): Promise<void> {
    if (this.process === undefined) {
      if (this.options === undefined) throw new Error("stdio transport has no process");
      this.process = new StdioServerProcess(this.options);
    }
    const child = this.process;
    child.attach({
      stdout: (chunk) => {
        try {
          this.readBuffer.append(chunk as Buffer); // node streams give Buffers; the event type stays Node-free for the public .d.ts
        } catch (error) {
          this.onerror?.(error as Error);
          void this.close();
          return;
        }
        this.drain();
      },
      close: () => {
        this.closeDelivered = true;
        this.onclose?.();
      },
      error: (error) => this.onerror?.(error),
    });
    await child.started;
  }

  private drain(): void {
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.readBuffer.readMessage();
      } catch (error) {
        // A line that is not JSON-RPC (a server logging to stdout): reported, the stream goes on.
        this.onerror?.(error as Error);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    const child = this.process;
    if (child === undefined || this.closing) return Promise.reject(new Error("Not connected"));
    // An adopted child that exited before we attached: its exit is delivered on the next turn, so
    // this message goes where a message to a dying child goes, and the exchange ends with "Connection
    // closed" exactly as it would had we spawned the child ourselves.
    if (!child.writable && child.closed && !this.closeDelivered) return Promise.resolve();
    return child.write(serializeMessage(message));
  }

  /** Ends the server: stdin closed, then SIGTERM to its process group, then SIGKILL. Resolves once it exited. */
  async close(): Promise<void> {
    const child = this.process;
    if (child === undefined) return;
    this.closing = true;
    await child.terminate();
    this.readBuffer.clear();
  }
}
