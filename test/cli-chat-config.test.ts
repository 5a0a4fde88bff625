// The `model:` section of config.yaml and how `mibyan chat` resolves its endpoint (flags > config >
// OPENAI_* environment). A key pasted into config.yaml is refused without being echoed.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

import { afterEach, describe, expect, it } from "vitest";

import { ConfigError, loadConfig } from "../src/config/index.js";
import { ModelSettingsError, resolveModel } from "../src/agent/model-endpoint.js";

const homes: string[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

function load(yaml: string) {
  const home = mkdtempSync(path.join(process.env.TMPDIR ?? os.tmpdir(), "chat-config-"));
  homes.push(home);
  writeFileSync(path.join(home, "config.yaml"), yaml);
  return loadConfig({ home });
}

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a throw");
}

describe("config.yaml model section", () => {
  it("reads base_url, name and api_key_env", () => {
    const { config } = load("model:\n  base_url: http://127.0.0.1:9/v1\n  name: m1\n  api_key_env: MY_KEY\n");
    expect(config.model).toEqual({ baseUrl: "http://127.0.0.1:9/v1", name: "m1", apiKeyEnv: "MY_KEY" });
  });

  it("refuses an api_key in config.yaml with a located error that does not show it", () => {
    const error = thrown(() => load("model:\n  name: m1\n  api_key: sk-pasted-secret-123456\n"));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toMatch(/config\.yaml:3:\d+: model\.api_key must be left out/);
    expect(error.message).toContain("model.api_key_env");
    expect(error.message).not.toContain("sk-pasted-secret");
  });

  it("is strict: a misspelt key is an error with the close match", () => {
    const error = thrown(() => load("model:\n  base_ur: http://127.0.0.1:9/v1\n"));
    expect(error.message).toMatch(/config\.yaml:2:3: unknown key model\.base_ur; did you mean model\.base_url\?/);
  });

  it("checks the types with located errors", () => {
    expect(thrown(() => load("model:\n  base_url: ftp://x\n")).message).toMatch(/config\.yaml:2:13: model\.base_url must be an http\(s\) URL/);
    expect(thrown(() => load("model:\n  api_key_env: 'not a name'\n")).message).toMatch(/config\.yaml:2:16: model\.api_key_env must be an environment variable name/);
  });
});

describe("resolveModel", () => {
  const config = { baseUrl: "http://config.example/v1", name: "config-model", apiKeyEnv: "CONFIG_KEY" };
  const env = { OPENAI_BASE_URL: "http://env.example/v1", OPENAI_API_KEY: "env-key", CONFIG_KEY: "config-key", FLAG_KEY: "flag-key" };

  it("flags win over config.yaml, which wins over the environment", () => {
    expect(resolveModel({ model: "flag-model", baseUrl: "http://flag.example/v1", apiKeyEnv: "FLAG_KEY" }, config, env)).toEqual({ model: "flag-model", baseURL: "http://flag.example/v1", apiKey: "flag-key", apiKeyEnv: "FLAG_KEY" });
    expect(resolveModel({}, config, env)).toEqual({ model: "config-model", baseURL: "http://config.example/v1", apiKey: "config-key", apiKeyEnv: "CONFIG_KEY" });
    expect(resolveModel({ model: "m" }, {}, env)).toEqual({ model: "m", baseURL: "http://env.example/v1", apiKey: "env-key", apiKeyEnv: "OPENAI_API_KEY" });
    expect(resolveModel({ model: "m", baseUrl: "http://local/v1" }, {}, {})).toEqual({ model: "m", baseURL: "http://local/v1", apiKey: undefined, apiKeyEnv: undefined });
  });

  it("says what to set when the model, the endpoint or a named key is missing, without any key in the message", () => {
    expect(() => resolveModel({}, {}, env)).toThrow(/no model configured: pass --model NAME or set model\.name/);
    expect(() => resolveModel({ model: "m" }, {}, {})).toThrow(/no endpoint configured: pass --base-url URL, set model\.base_url in config\.yaml, or set OPENAI_BASE_URL/);
    const missing = thrown(() => resolveModel({ model: "m", apiKeyEnv: "NOT_SET_HERE" }, config, env));
    expect(missing).toBeInstanceOf(ModelSettingsError);
    expect(missing.message).toBe("--api-key-env names NOT_SET_HERE, which is not set: export NOT_SET_HERE=<your API key>");
    expect(() => resolveModel({ model: "m", baseUrl: "http://user:pw@host/v1" }, {}, {})).toThrow(/must not carry credentials/);
    expect(() => resolveModel({ model: "m", baseUrl: "file:///etc" }, {}, {})).toThrow(/http\(s\) URL/);
  });
});
