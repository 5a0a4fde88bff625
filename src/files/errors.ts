/**
 * The one error type of the file layer. Its message is written for the model
 * (what went wrong and what to do instead); the file tools return it as
 * `{"error": message}` rather than throwing. Anything else that escapes the
 * layer is a bug and is reported as such by the tool.
 */

export type FileToolErrorKind =
  /** The arguments are malformed (type, range, forbidden characters). */
  | "invalid_args"
  /** The path does not exist, is a directory, is not a regular file, ... */
  | "not_found"
  | "not_a_file"
  /** Binary, not UTF-8, too large to read or patch. */
  | "unsupported_content"
  /** Permission denied, read-only file, no space left, ... */
  | "io"
  /** `old_string` matched zero or several times. */
  | "no_match"
  | "ambiguous_match"
  /** The file changed between reading it and writing the patched version. */
  | "conflict"
  /** The approval gate refused the write. */
  | "blocked"
  /** The environment could not run the script (timeout, cancellation, missing tools). */
  | "environment";

export class FileToolError extends Error {
  constructor(
    readonly kind: FileToolErrorKind,
    message: string,
  ) {
    super(message);
    this.name = "FileToolError";
  }
}
