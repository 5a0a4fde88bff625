/**
 * Reading `config.yaml` without trusting what is at its path: a symlink to
 * `/dev/zero` once grew the read to 16 GB before an abort, a FIFO hung the
 * CLI. Only a regular file of at most `MAX_CONFIG_BYTES` is read (see
 * util/read-regular-file.ts for how).
 */
import { readRegularFileSync, RegularFileError } from "../util/read-regular-file.js";
import { ConfigError } from "./config-error.js";

/** The largest `config.yaml` read: far above any real configuration, far below any harm. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/** The file's text, or `undefined` when there is no file. Throws `ConfigError` for anything but a regular file of bounded size. */
export function readConfigFile(file: string): string | undefined {
  try {
    return readRegularFileSync(file, MAX_CONFIG_BYTES).text;
  } catch (err) {
    if (!(err instanceof RegularFileError)) throw err;
    switch (err.problem) {
      case "missing":
        return undefined;
      case "not_file":
        return fail(`the configuration is ${err.message.replace(/^it is /, "")}; config.yaml must be a file`, "not_file", file);
      case "too_large":
        return fail(`the configuration is ${err.message.replace(/^it is /, "")}; config.yaml must be smaller`, "too_large", file);
      default:
        return fail(`cannot read the configuration: ${err.message}`, "io", file, err.cause);
    }
  }
}

function fail(reason: string, kind: "not_file" | "too_large" | "io", file: string, cause?: unknown): never {
  throw new ConfigError(reason, { kind, file, cause });
}
