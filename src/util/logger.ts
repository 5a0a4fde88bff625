import type { Logger } from "../registry/types.js";

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
export type LogLevel = keyof typeof LEVELS;

/**
 * The default logger: one line per message on stderr, so stdout stays clean for
 * results. The threshold comes from MIBYAN_LOG_LEVEL (default `warn`).
 */
export function createStderrLogger(level: LogLevel = envLevel()): Logger {
  const threshold = LEVELS[level];
  const write = (name: LogLevel, message: string): void => {
    if (LEVELS[name] >= threshold) process.stderr.write(`mibyan ${name}: ${message}\n`);
  };
  return {
    debug: (m) => write("debug", m),
    info: (m) => write("info", m),
    warn: (m) => write("warn", m),
    error: (m) => write("error", m),
  };
}

function envLevel(): LogLevel {
  const raw = process.env.MIBYAN_LOG_LEVEL?.toLowerCase();
  return raw !== undefined && raw in LEVELS ? (raw as LogLevel) : "warn";
}

/** A logger that keeps every message, for tests and for callers that report warnings themselves. */
export interface MemoryLogger extends Logger {
  readonly messages: { level: Exclude<LogLevel, "silent">; message: string }[];
}

export function createMemoryLogger(): MemoryLogger {
  const messages: MemoryLogger["messages"] = [];
  return {
    messages,
    debug: (message) => void messages.push({ level: "debug", message }),
    info: (message) => void messages.push({ level: "info", message }),
    warn: (message) => void messages.push({ level: "warn", message }),
    error: (message) => void messages.push({ level: "error", message }),
  };
}
