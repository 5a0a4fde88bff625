/**
 * The errors for a path that is not the regular file a tool needs: missing
 * (with names close to the missing one, from the listing the script sent),
 * a directory (with some of its entries), a broken symlink, a pipe, socket or
 * device (never opened: reading a FIFO would block), or unreadable.
 */

import { FileToolError } from "./errors.js";
import { normalizeAbsolute, similarNames } from "./paths.js";
import type { Described } from "./scripts.js";

const KIND_NAMES: Readonly<Record<string, string>> = {
  fifo: "a named pipe (FIFO)",
  socket: "a socket",
  device: "a device file",
  special: "not a regular file",
};

/** Names in a NUL-separated listing. */
export function listingNames(data: string | undefined): string[] {
  if (!data) return [];
  return data.split("\0").filter((name) => name !== "");
}

function missingMessage(d: Described, listing: string[]): string {
  const path = normalizeAbsolute(d.path);
  if (d.blocker !== undefined) {
    return `Not found: ${path} (${normalizeAbsolute(d.blocker)} is a file, not a directory).`;
  }
  if (d.ancestor === undefined) return `Not found: ${path}.`;
  const ancestor = normalizeAbsolute(d.ancestor);
  // The first component that does not exist is the one to suggest names for.
  const rest = d.path.slice(d.ancestor.length).split("/").filter((c) => c !== "" && c !== ".");
  const missing = rest[0] ?? "";
  let message =
    rest.length > 1 ? `Not found: ${path} (the directory ${posixJoin(ancestor, missing)} does not exist).` : `Not found: ${path}.`;
  const similar = similarNames(missing, listing);
  if (similar.length > 0) message += ` Similar names in ${ancestor}: ${similar.join(", ")}.`;
  else message += ` Use search_files with target "files" to look for it.`;
  return message;
}

function directoryContents(names: readonly string[]): string {
  if (names.length === 0) return "It is empty.";
  const shown = names.slice(0, 30);
  const more = names.length > shown.length ? `, … (${names.length >= 200 ? "200+" : names.length} entries)` : "";
  return `It contains ${shown.join(", ")}${more}.`;
}

function posixJoin(dir: string, name: string): string {
  return dir === "/" ? `/${name}` : `${dir}/${name}`;
}

/**
 * The error for a described path that is not a readable regular file, or
 * undefined when it is one. `listing` is the payload the read script sent
 * (entries of the directory, or of the missing path's nearest ancestor).
 */
export function notAFileError(d: Described, listing: string[] | undefined): FileToolError | undefined {
  const path = normalizeAbsolute(d.path);
  switch (d.kind) {
    case "file":
      return d.readable ? undefined : new FileToolError("io", `Permission denied: cannot read ${path}.`);
    case "missing":
      return new FileToolError("not_found", missingMessage(d, listing ?? []));
    case "directory": {
      // Without a listing (the caller did not ask for one) nothing is said about the contents.
      const entries = listing === undefined ? "" : ` ${directoryContents(listing)}`;
      return new FileToolError("not_a_file", `${path} is a directory, not a file.${entries} Give the path of a file inside it, or use search_files to find one.`);
    }
    case "broken-symlink":
      return new FileToolError("not_found", `${path} is a symbolic link to ${d.target ?? "?"}, which does not exist.`);
    default:
      return new FileToolError("not_a_file", `${path} is ${KIND_NAMES[d.kind] ?? "not a regular file"}; the file tools only work on regular files.`);
  }
}
