/**
 * What the cloud backends share about their vendors' SDKs: whether one is
 * installed (checked without loading it, since availability checks are
 * synchronous and must not pull in a cloud client), and keeping credentials
 * out of the error messages those SDKs produce (some echo the request).
 */

import { createRequire } from "node:module";

import { REDACTED } from "../redaction/redact.js";

const installed = new Map<string, boolean>();

/** Whether `name` resolves from here (checked once per package). */
export function packageInstalled(name: string): boolean {
  let answer = installed.get(name);
  if (answer === undefined) {
    try {
      createRequire(import.meta.url).resolve(name);
      answer = true;
    } catch {
      answer = false;
    }
    installed.set(name, answer);
  }
  return answer;
}

/** `text` with every occurrence of the given credentials replaced (values shorter than 4 characters are left: they would match everywhere). */
export function scrubCredentials(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    if (typeof secret === "string" && secret.length >= 4) out = out.split(secret).join(REDACTED);
  }
  return out;
}
