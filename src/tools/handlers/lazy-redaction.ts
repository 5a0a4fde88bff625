/**
 * The redaction switch of a tool's handler options (`redactionSwitch` in
 * src/redaction/tool-output.ts), with the redaction module loaded on the
 * tool's first call: listing tools never loads the secret patterns.
 */

import type { RedactOutputOption } from "../../redaction/tool-output.js";

/** Whether this call's output is redacted (the option, else config `terminal.redact_output`, read at each call). */
export function redactionSource(option: RedactOutputOption | undefined): () => Promise<boolean> {
  let decide: (() => boolean) | undefined;
  return async () => {
    decide ??= (await import("../../redaction/tool-output.js")).redactionSwitch(option);
    return decide();
  };
}

/** `redactText` of src/redaction/tool-output.ts, loaded on first use. */
export async function redactTextLazily(text: string): Promise<string> {
  return (await import("../../redaction/tool-output.js")).redactText(text);
}
