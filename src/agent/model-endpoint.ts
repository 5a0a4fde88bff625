/**
 * Which endpoint, model and API key `mibyan chat` uses: flags, then config.yaml's `model:` section,
 * then `OPENAI_BASE_URL` / `OPENAI_API_KEY`. The key is only ever read from an environment variable
 * (config.yaml names the variable, never holds the key), and nothing here puts the key in a
 * message: errors name the variable to set, not its value.
 */

import type { ModelConfig } from "../config/config-types.js";

/** A model or endpoint setting is missing or wrong; nothing was sent. The CLI exits 2 with the message. */
export class ModelSettingsError extends Error {
  override readonly name = "ModelSettingsError";
}

export interface ModelFlags {
  model?: string | undefined;
  baseUrl?: string | undefined;
  apiKeyEnv?: string | undefined;
}

export interface ResolvedModel {
  model: string;
  baseURL: string;
  /** Undefined when no variable is named and OPENAI_API_KEY is unset (a local server needs none). */
  apiKey: string | undefined;
  /** The variable the key came from (to say which one to fix, and to take it out of the tools' environment). */
  apiKeyEnv: string | undefined;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const nonBlank = (value: string | undefined): string | undefined => (value !== undefined && value.trim() !== "" ? value.trim() : undefined);

function checkURL(value: string, from: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ModelSettingsError(`${from} is not a URL (expected an http(s) URL such as https://api.openai.com/v1)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new ModelSettingsError(`${from} must be an http(s) URL (got ${url.protocol})`);
  // Credentials in the URL would be printed with it in every endpoint error: keep keys in the environment.
  if (url.username !== "" || url.password !== "") throw new ModelSettingsError(`${from} must not carry credentials; put the key in an environment variable (--api-key-env)`);
  return value;
}

/** Resolves the chat's model settings; throws `ModelSettingsError` naming what to set. */
export function resolveModel(flags: ModelFlags, config: Partial<ModelConfig>, env: Readonly<Record<string, string | undefined>> = process.env): ResolvedModel {
  const model = nonBlank(flags.model) ?? nonBlank(config.name);
  if (model === undefined) throw new ModelSettingsError("no model configured: pass --model NAME or set model.name in config.yaml");

  const flagURL = nonBlank(flags.baseUrl);
  const baseURL =
    flagURL !== undefined
      ? checkURL(flagURL, "--base-url")
      : config.baseUrl !== undefined
        ? checkURL(config.baseUrl, "model.base_url in config.yaml")
        : nonBlank(env.OPENAI_BASE_URL) !== undefined
          ? checkURL(nonBlank(env.OPENAI_BASE_URL)!, "OPENAI_BASE_URL")
          : undefined;
  if (baseURL === undefined) {
    throw new ModelSettingsError("no endpoint configured: pass --base-url URL, set model.base_url in config.yaml, or set OPENAI_BASE_URL");
  }

  const named = flags.apiKeyEnv !== undefined ? { name: flags.apiKeyEnv, from: "--api-key-env" } : config.apiKeyEnv !== undefined ? { name: config.apiKeyEnv, from: "model.api_key_env in config.yaml" } : undefined;
  if (named !== undefined) {
    if (!ENV_NAME.test(named.name)) throw new ModelSettingsError(`${named.from}: ${JSON.stringify(named.name)} is not an environment variable name`);
    const apiKey = nonBlank(env[named.name]);
    if (apiKey === undefined) throw new ModelSettingsError(`${named.from} names ${named.name}, which is not set: export ${named.name}=<your API key>`);
    return { model, baseURL, apiKey, apiKeyEnv: named.name };
  }
  const fallback = nonBlank(env.OPENAI_API_KEY);
  return { model, baseURL, apiKey: fallback, apiKeyEnv: fallback === undefined ? undefined : "OPENAI_API_KEY" };
}
