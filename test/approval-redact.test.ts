/** `redactSecrets`: the credentials it hides, and the ordinary text it leaves alone. */

import { describe, expect, it } from "vitest";

import { containsSecret, redactSecrets } from "../src/redaction/redact.js";

describe("redactSecrets", () => {
  it("hides vendor keys", () => {
    const secrets = [
      "sk-abcdefghijklmnopqrstuvwx",
      "sk-proj-abcdefghijklmnopqrstuvwxyz012345",
      "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
      "sk_live_abcdefghijklmnop",
      "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
      "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
      "glpat-abcdefghijklmnopqrst",
      "xoxb-123456789012-abcdefghijkl",
      "xoxp-1234-5678-abcdefghij",
      "AKIAIOSFODNN7EXAMPLE",
      "AIzaSyA-abcdefghijklmnopqrstuvwxyz012345",
      "hf_abcdefghijklmnopqrstuvwxyz",
      "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ];
    for (const secret of secrets) {
      const out = redactSecrets(`echo ${secret} done`);
      expect(out, secret).toBe("echo [REDACTED] done");
    }
  });

  it("hides KEY=value, --password x, -pSECRET, auth headers and URL passwords", () => {
    const cases: [string, string][] = [
      ["OPENAI_API_KEY=abc123 npm start", "OPENAI_API_KEY=[REDACTED] npm start"],
      ["export GITHUB_TOKEN='abc def'", "export GITHUB_TOKEN=[REDACTED]"],
      ['DB_PASSWORD="p@ss word" ./run', "DB_PASSWORD=[REDACTED] ./run"],
      ["MY_KEY=v1 AWS_SECRET_ACCESS_KEY=v2", "MY_KEY=[REDACTED] AWS_SECRET_ACCESS_KEY=[REDACTED]"],
      ["psql --password hunter2 -h db", "psql --password [REDACTED] -h db"],
      ["tool --api-key=abc --token xyz", "tool --api-key=[REDACTED] --token [REDACTED]"],
      ["mysql -u root -phunter2 db", "mysql -u root -p[REDACTED] db"],
      ["curl -H 'Authorization: Bearer abc.def.ghi' x", "curl -H 'Authorization: Bearer [REDACTED]' x"],
      ["curl -H \"Authorization: Basic dXNlcjpwYXNz\" x", 'curl -H "Authorization: Basic [REDACTED]" x'],
      ["curl -H 'X-Api-Key: abcdef' x", "curl -H 'X-Api-Key: [REDACTED]' x"],
      ["curl -u admin:hunter2 https://x", "curl -u admin:[REDACTED] https://x"],
      ["git clone https://user:hunter2@github.com/o/r", "git clone https://user:[REDACTED]@github.com/o/r"],
      ["psql postgres://app:s3cret@db:5432/app", "psql postgres://app:[REDACTED]@db:5432/app"],
      ['{"password": "hunter2", "user": "ada"}', '{"password": [REDACTED], "user": "ada"}'],
      ["-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", "[REDACTED]"],
    ];
    for (const [input, output] of cases) expect(redactSecrets(input), input).toBe(output);
  });

  it("leaves ordinary commands alone", () => {
    for (const text of [
      "rm -rf node_modules",
      "mkdir -p build/out",
      "git commit -m 'fix auth' --author 'Ada <ada@example.com>'",
      "ls -la ~/src && cat /etc/hosts",
      "ssh git@github.com",
      "git clone https://github.com/o/r",
      "kubectl get secrets",
      "Basic usage: run it",
    ]) {
      expect(redactSecrets(text), text).toBe(text);
      expect(containsSecret(text)).toBe(false);
    }
    expect(containsSecret("TOKEN=x")).toBe(true);
  });

  it("is idempotent", () => {
    const once = redactSecrets("A_TOKEN=abc curl -H 'Authorization: Bearer abcdefghij' https://u:p@h");
    expect(redactSecrets(once)).toBe(once);
  });
});
