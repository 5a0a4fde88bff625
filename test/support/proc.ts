/**
 * Process and network probes the attack tests share: whether a pid still runs
 * (a zombie does not count: an orphan's zombie lingers until init reaps it),
 * and a real HTTP server on 127.0.0.1 that counts the requests reaching it.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** Running and not a zombie, by `/proc/<pid>/stat`. */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

export interface CountingServer {
  readonly port: number;
  /** Requests that reached the server so far. */
  readonly hits: number;
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1 (a free port) answering every request with `body`. */
export async function startCountingServer(body = "pong-from-host"): Promise<CountingServer> {
  let hits = 0;
  const server = createServer((_req, res) => {
    hits++;
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    get hits() {
      return hits;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
