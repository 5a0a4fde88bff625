/**
 * OAuth for HTTP MCP servers (`auth: oauth`): the storage half of the SDK's `OAuthClientProvider`.
 *
 * The SDK does the protocol (metadata discovery, dynamic client registration, PKCE, code exchange,
 * refresh) and asks the provider to keep what it learns. Here that is one JSON file per server,
 * `$MIBYAN_HOME/mcp-tokens/<server>.json`, mode 0600 in a 0700 directory, replaced atomically:
 * `{ tokens, client_information, code_verifier, authorization_url }`.
 *
 * What this does not do: open a browser. When the SDK needs the user (no tokens, or a refresh token
 * that no longer works), `redirectToAuthorization` records the URL in the file and reports it through
 * `onAuthorizationUrl` (default: a logged warning); the connection fails with the SDK's
 * `UnauthorizedError` and the server is parked. Completing the flow means visiting the URL and handing
 * the `code` from the redirect to `McpHandle.finishAuth(name, code)`, or writing the token file with
 * tokens obtained elsewhere (docs/mcp.md, "OAuth"). Tokens are never logged.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";

import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";

import { writeFileAtomic } from "../../util/atomic-file.js";
import { readRegularFileSync } from "../../util/read-regular-file.js";

/** A token file is a few KiB; anything larger is not ours. */
const MAX_TOKEN_FILE_BYTES = 262_144;

/** Where the SDK sends the browser after consent. Nothing listens there unless the application does. */
export const DEFAULT_OAUTH_REDIRECT_URL = "http://127.0.0.1:8976/mcp/oauth/callback";

interface TokenFile {
  tokens?: OAuthTokens;
  client_information?: OAuthClientInformationMixed;
  code_verifier?: string;
  authorization_url?: string;
}

export interface FileOAuthProviderOptions {
  /** The profile home (`$MIBYAN_HOME`). */
  home: string;
  server: string;
  redirectUrl?: string | undefined;
  /** Told the URL a person must open to authorise this client. */
  onAuthorizationUrl?: ((server: string, url: URL) => void) | undefined;
}

/** `<home>/mcp-tokens/<server>.json`; the server name is reduced to `[A-Za-z0-9_.-]` so it cannot leave the folder. */
export function tokenFilePath(home: string, server: string): string {
  const safe = server.replace(/[^A-Za-z0-9_.-]/gu, "_").replace(/^\.+/u, "_") || "_";
  return path.join(home, "mcp-tokens", `${safe}.json`);
}

export class FileOAuthProvider implements OAuthClientProvider {
  readonly file: string;
  private readonly redirect: string;

  constructor(private readonly options: FileOAuthProviderOptions) {
    this.file = tokenFilePath(options.home, options.server);
    this.redirect = options.redirectUrl ?? DEFAULT_OAUTH_REDIRECT_URL;
  }

  get redirectUrl(): string {
    return this.redirect;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "mibyan-tools",
      redirect_uris: [this.redirect],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }

  private read(): TokenFile {
    try {
      const { text } = readRegularFileSync(this.file, MAX_TOKEN_FILE_BYTES);
      const parsed = JSON.parse(text) as unknown;
      return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as TokenFile) : {};
    } catch {
      return {}; // missing or unreadable: no tokens (the SDK then asks for authorisation)
    }
  }

  private async update(change: (file: TokenFile) => void): Promise<void> {
    const current = this.read();
    change(current);
    mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    await writeFileAtomic(this.file, `${JSON.stringify(current, null, 2)}\n`, 0o600);
  }

  tokens(): OAuthTokens | undefined {
    return this.read().tokens;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    await this.update((file) => {
      file.tokens = tokens;
      delete file.authorization_url;
    });
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.read().client_information;
  }

  async saveClientInformation(info: OAuthClientInformationMixed): Promise<void> {
    await this.update((file) => {
      file.client_information = info;
    });
  }

  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    await this.update((file) => {
      file.code_verifier = codeVerifier;
    });
  }

  codeVerifier(): string {
    const verifier = this.read().code_verifier;
    if (verifier === undefined) throw new Error(`no PKCE code verifier saved in ${this.file}; start the authorisation again`);
    return verifier;
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    await this.update((file) => {
      file.authorization_url = url.toString();
    });
    this.options.onAuthorizationUrl?.(this.options.server, url);
  }

  async invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void> {
    await this.update((file) => {
      if (scope === "all" || scope === "tokens") delete file.tokens;
      if (scope === "all" || scope === "client") delete file.client_information;
      if (scope === "all" || scope === "verifier") delete file.code_verifier;
    });
  }
}
