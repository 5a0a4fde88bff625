/**
 * An inter-process lock on a file (proper-lockfile: a `<file>.lock` directory
 * whose mtime the holder keeps fresh, taken over once it is `staleMs` old, so
 * a holder killed with SIGKILL does not block everyone for ever).
 */

export interface FileLockOptions {
  /** Age after which a lock whose holder stopped refreshing it is taken over. Default 10 s. */
  staleMs?: number;
}

const LOCK_RETRIES = { retries: 400, factor: 1.2, minTimeout: 5, maxTimeout: 25, randomize: true };

/**
 * Runs `fn` while holding the lock of `file` (which need not exist). If the
 * lock is lost meanwhile (compromised: another process took it over as
 * stale), `assertHeld` throws, and so does `withFileLock` after `fn`: call
 * `assertHeld()` right before writing, so a read-modify-write never lands
 * without the lock, and a caller never believes one went through when it may not have.
 */
export async function withFileLock<T>(file: string, fn: (assertHeld: () => void) => Promise<T>, options: FileLockOptions = {}): Promise<T> {
  const { default: lockfile } = await import("proper-lockfile");
  let compromised: Error | undefined;
  const release = await lockfile.lock(file, {
    realpath: false,
    stale: options.staleMs ?? 10_000,
    retries: LOCK_RETRIES,
    onCompromised: (err) => {
      compromised = err;
    },
  });
  const assertHeld = () => {
    if (compromised) throw new Error(`lost the lock of ${file} while using it: ${compromised.message}`, { cause: compromised });
  };
  try {
    const result = await fn(assertHeld);
    assertHeld();
    return result;
  } finally {
    await release().catch(() => undefined);
  }
}
