/**
 * The frameworks the adapters are written against, as optional peer dependencies: the ranges
 * equal `peerDependencies` in package.json (a test keeps them equal), and an adapter imported
 * without its framework fails with the package and range to install, not Node's bare
 * "Cannot find package".
 */

export const INTEGRATION_PEER_RANGES = {
  ai: "^6.0.0",
  "@openai/agents-core": "^0.20.0",
  "@langchain/core": "^1.0.0",
} as const;

export type IntegrationPeer = keyof typeof INTEGRATION_PEER_RANGES;

/** `install ai@^6 to use mibyan-tools/ai-sdk (npm install "ai@^6.0.0")`; the range quoted for shells. */
export function peerMissingMessage(peer: IntegrationPeer, subpath: string): string {
  const range = INTEGRATION_PEER_RANGES[peer];
  // `ai@^6`; a 0.x range is its minor (`^0.20.0`), so it is named in full.
  const major = /^\^([1-9]\d*)\./.exec(range)?.[1];
  return `install ${peer}@${major === undefined ? range : `^${major}`} to use ${subpath} (npm install "${peer}@${range}")`;
}

function isMissingPackage(err: unknown, peer: string): boolean {
  // Node's own error, or the same wrapped (as `cause`) by a loader or test runner in between.
  for (let e = err as { code?: unknown; message?: unknown; cause?: unknown } | null | undefined, depth = 0; depth < 4; e = e.cause as typeof e, depth++) {
    if (e === null || typeof e !== "object") return false;
    if (e.code !== "ERR_MODULE_NOT_FOUND" && e.code !== "MODULE_NOT_FOUND") continue;
    // The framework itself, not a package it failed to find in turn.
    return typeof e.message === "string" && (e.message.includes(`'${peer}'`) || e.message.includes(`"${peer}"`));
  }
  return false;
}

/** Imports a framework, turning "not installed" into `peerMissingMessage`; any other failure is rethrown as it is. */
export async function importPeer<T>(peer: IntegrationPeer, subpath: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    if (isMissingPackage(err, peer)) throw new Error(peerMissingMessage(peer, subpath), { cause: err });
    throw err;
  }
}
