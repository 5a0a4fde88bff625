/**
 * The vendor SDK versions the cloud backends are written against, and the
 * install command each backend's "not installed" message gives. The ranges
 * are the package's `peerDependencies` (a test keeps the two equal), so the
 * hint installs a version the backend works with: `npm install modal` alone
 * would fetch the unrelated package that holds `modal`'s `latest` tag, and
 * a bare `@daytonaio/sdk` or `@vercel/sandbox` a future major with another API.
 */

export const VENDOR_SDK_RANGES = {
  "@daytonaio/sdk": "^0.218.0",
  "@vercel/sandbox": "^3.5.0",
  modal: "^0.11.1",
} as const;

export type VendorSdk = keyof typeof VENDOR_SDK_RANGES;

/**
 * `npm install "modal@^0.11.1"`: quoted so that no shell reads the range
 * (`^` escapes in cmd.exe, `<`/`>` would redirect anywhere).
 */
export function sdkInstallCommand(sdk: VendorSdk): string {
  return `npm install "${sdk}@${VENDOR_SDK_RANGES[sdk]}"`;
}
