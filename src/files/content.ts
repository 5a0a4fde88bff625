/**
 * What the bytes of a file are: UTF-8 text the tools can show and edit, or
 * something else (binary, UTF-16, Latin-1) that they refuse with a message
 * saying what it looks like, never by dumping the bytes.
 *
 * The MIME guess is a small magic-number table (the first bytes of the file,
 * as the read script reports them) with the extension as a fallback: it needs
 * no `file` command in the environment (BusyBox has none) and gives the same
 * answer on every backend.
 */

import { posix } from "node:path";

const MAGIC: ReadonlyArray<readonly [string, string]> = [
  ["89504e470d0a1a0a", "image/png"],
  ["ffd8ff", "image/jpeg"],
  ["474946383761", "image/gif"],
  ["474946383961", "image/gif"],
  ["25504446", "application/pdf"],
  ["504b0304", "application/zip"],
  ["504b0506", "application/zip"],
  ["1f8b", "application/gzip"],
  ["425a68", "application/x-bzip2"],
  ["fd377a585a00", "application/x-xz"],
  ["28b52ffd", "application/zstd"],
  ["377abcaf271c", "application/x-7z-compressed"],
  ["7f454c46", "application/x-executable (ELF)"],
  ["cafebabe", "application/java-vm"],
  ["feedfacf", "application/x-mach-binary"],
  ["cffaedfe", "application/x-mach-binary"],
  ["4d5a", "application/x-msdownload"],
  ["0061736d", "application/wasm"],
  ["53514c69746520666f726d6174203300", "application/vnd.sqlite3"],
  ["49492a00", "image/tiff"],
  ["4d4d002a", "image/tiff"],
  ["424d", "image/bmp"],
  ["00000100", "image/x-icon"],
  ["4f676753", "audio/ogg"],
  ["664c6143", "audio/flac"],
  ["494433", "audio/mpeg"],
  ["1a45dfa3", "video/webm"],
  ["d0cf11e0a1b11ae1", "application/x-ole-storage (old Microsoft Office)"],
];

const EXTENSIONS: Readonly<Record<string, string>> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".ico": "image/x-icon",
  ".pdf": "application/pdf",
  ".zip": "application/zip",
  ".jar": "application/java-archive",
  ".gz": "application/gzip",
  ".tgz": "application/gzip",
  ".tar": "application/x-tar",
  ".mp3": "audio/mpeg",
  ".mp4": "video/mp4",
  ".mov": "video/quicktime",
  ".wav": "audio/wav",
  ".woff": "font/woff",
  ".woff2": "font/woff2",
  ".ttf": "font/ttf",
  ".otf": "font/otf",
  ".so": "application/x-sharedlib",
  ".o": "application/x-object",
  ".a": "application/x-archive",
  ".class": "application/java-vm",
  ".pyc": "application/x-python-bytecode",
  ".wasm": "application/wasm",
  ".sqlite": "application/vnd.sqlite3",
  ".db": "application/octet-stream (database?)",
  ".bin": "application/octet-stream",
  ".exe": "application/x-msdownload",
  ".dll": "application/x-msdownload",
  ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
};

/** A MIME type guessed from the first bytes (hex, as `od -tx1` prints them) and the file name. */
export function guessMime(magicHex: string, path: string): string {
  const hex = magicHex.toLowerCase();
  if (hex.startsWith("fffe") || hex.startsWith("feff")) return "text/plain; charset=utf-16";
  for (const [prefix, mime] of MAGIC) if (hex.startsWith(prefix)) return mime;
  if (hex.startsWith("52494646") && hex.slice(16, 24) === "57454250") return "image/webp";
  if (hex.startsWith("52494646") && hex.slice(16, 24) === "57415645") return "audio/wav";
  if (hex.slice(8, 16) === "66747970") return "video/mp4";
  return EXTENSIONS[posix.extname(path).toLowerCase()] ?? "application/octet-stream";
}

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The text of `bytes`, or undefined when they are not valid UTF-8. A byte-order mark is kept (so writing back round-trips). */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** Whether `bytes` hold a NUL byte (the tools' test for binary content, like git's and grep's). */
export function hasNul(bytes: Uint8Array): boolean {
  return bytes.includes(0);
}

/**
 * Drops an incomplete UTF-8 sequence at the end of `bytes` (a window cut at a
 * byte limit may end inside a character), so the rest can be checked strictly.
 */
export function trimPartialUtf8(bytes: Uint8Array): Uint8Array {
  let i = bytes.length - 1;
  let continuation = 0;
  while (i >= 0 && continuation < 3 && (bytes[i]! & 0xc0) === 0x80) {
    i--;
    continuation++;
  }
  if (i < 0) return bytes;
  const lead = bytes[i]!;
  const needed = lead >= 0xf0 ? 3 : lead >= 0xe0 ? 2 : lead >= 0xc0 ? 1 : 0;
  return needed > continuation ? bytes.subarray(0, i) : bytes;
}

/** `"crlf"` when every line break is CRLF, `"mixed"` when some are, else `"lf"`. */
export function lineEndings(text: string): "lf" | "crlf" | "mixed" {
  const crlf = text.split("\r\n").length - 1;
  if (crlf === 0) return "lf";
  const lf = text.split("\n").length - 1;
  return crlf === lf ? "crlf" : "mixed";
}

/** `1234567` → `"1.2 MB"`; bytes below 1 kB as `"512 bytes"`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} bytes`;
  const units = ["kB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = -1;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** The message for a file the tools will not show or edit as text. */
export function notTextMessage(path: string, size: number | undefined, magicHex: string, reason: "nul" | "utf8"): string {
  const mime = guessMime(magicHex, path);
  const what = size !== undefined ? `${formatBytes(size)}, ` : "";
  if (mime.includes("utf-16")) {
    return `${path} is UTF-16 encoded text (${what}${mime}), which the file tools do not read or edit. Convert it with the terminal tool (iconv -f UTF-16 -t UTF-8) if you need to.`;
  }
  const why = reason === "nul" ? "it is a binary file" : "it is not valid UTF-8 text (binary, or another encoding such as Latin-1)";
  return `Cannot show ${path}: ${why} (${what}looks like ${mime}). Its bytes are not returned; use the terminal tool with a suitable program (file, xxd | head, unzip -l, iconv, ...) if you need to inspect it.`;
}
