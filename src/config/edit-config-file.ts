/**
 * Editing `config.yaml` safely: under an inter-process lock (proper-lockfile), the file is
 * re-read, edited through the `yaml` Document API (comments, blank lines and key order
 * survive) and replaced atomically (temporary file in the same directory, fsync, rename,
 * fsync of the directory). A symlinked config is edited at its target.
 */

import { mkdir, readFile, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { isDeepStrictEqual } from "node:util";

import type { Document } from "yaml";

import { ConfigError } from "./config-error.js";
import { writeFileAtomic } from "../util/atomic-file.js";
import { withFileLock } from "../util/file-lock.js";

export type YamlModule = typeof import("yaml");

/** What an edit returns: whether the document changed, and a value for the caller. */
export interface ConfigEdit<T> {
  changed: boolean;
  value: T;
  /**
   * The new file text made by splicing the original source (byte-for-byte preservation of
   * everything else). Used only when it parses to the same data as the edited document;
   * otherwise the edited document is printed instead.
   */
  spliced?: string;
}

/** Facts about the source an edit may use to splice. */
export interface SourceStyle {
  /** The source text (BOM removed, line ends as in the file). */
  source: string;
  /** `\r\n` or `\n`. */
  newline: string;
  /** Indentation width of nested mappings. */
  indent: number;
  /** Whether block sequences are indented below their key. */
  indentSeq: boolean;
}

/**
 * Runs `edit` on the parsed `file` while holding its lock, and writes the result back
 * atomically when `changed`. A missing file (and its directory) is created. Malformed YAML
 * throws `ConfigError` and leaves the file alone.
 */
export async function editConfigFile<T>(
  file: string,
  edit: (doc: Document, Y: YamlModule, style: SourceStyle) => ConfigEdit<T>,
): Promise<T> {
  // The profile home holds commands, receipts and the allowlist: private like processes/ and logs/.
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const target = await realpath(file).catch(() => file);
  const Y = await import("yaml");
  return withFileLock(target, async (assertHeld) => {
    let source = "";
    let mode = 0o600;
    try {
      source = await readFile(target, "utf8");
      mode = (await stat(target)).mode & 0o7777;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
    const bom = source.charCodeAt(0) === 0xfeff;
    if (bom) source = source.slice(1);
    const crlf = source.includes("\r\n");

    const doc = Y.parseDocument(source, { uniqueKeys: false });
    const syntax = doc.errors[0];
    if (syntax) {
      const at = syntax.linePos?.[0];
      throw new ConfigError(`cannot update the configuration: invalid YAML: ${syntax.message}`, {
        kind: "syntax",
        file: target,
        line: at?.line,
        column: at?.col,
        cause: syntax,
      });
    }
    const style: SourceStyle = { source, newline: crlf ? "\r\n" : "\n", indent: detectIndent(source), indentSeq: detectIndentSeq(source) };
    const result = edit(doc, Y, style);
    if (result.changed) {
      assertHeld();
      const expected = doc.toJS() as unknown;
      let text: string | undefined;
      if (result.spliced !== undefined) {
        const check = Y.parseDocument(result.spliced, { uniqueKeys: false });
        if (check.errors.length === 0 && isDeepStrictEqual(check.toJS(), expected)) text = result.spliced;
      }
      if (text === undefined) {
        text = doc.toString({ lineWidth: 0, indent: style.indent, indentSeq: style.indentSeq });
        if (crlf) text = text.replace(/\r?\n/g, "\r\n");
      }
      const reparsed = Y.parseDocument(text, { uniqueKeys: false });
      if (reparsed.errors.length > 0 || !isDeepStrictEqual(reparsed.toJS(), expected)) {
        throw new Error("internal error: the edited configuration does not read back as written");
      }
      await writeFileAtomic(target, (bom ? "\ufeff" : "") + text, mode);
    }
    return result.value;
  });
}

/** The indentation width the file already uses (2 when unknown). */
function detectIndent(source: string): number {
  const m = /^[^\s#-][^\n]*:[ \t]*(?:#[^\n]*)?\r?\n( +)[^\s-]/m.exec(source);
  const width = m?.[1]?.length ?? 2;
  return width >= 1 && width <= 8 ? width : 2;
}

/** False when the file writes block sequences flush with their key (`key:\n- a`). */
function detectIndentSeq(source: string): boolean {
  return !/^( *)[^\s#-][^\n]*:[ \t]*(?:#[^\n]*)?\r?\n\1- /m.test(source);
}
