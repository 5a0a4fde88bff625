/** The typed errors of the process registry; `code` is what the `process` tool reports. */

/** Thrown for an id that does not exist or is not the caller's: the two are not told apart. */
export class ProcessNotFoundError extends Error {
  readonly code = "not_found";
  constructor(readonly processId: string) {
    super(`No background process with id ${JSON.stringify(processId).slice(0, 60)} in this session.`);
    this.name = "ProcessNotFoundError";
  }
}

/** A request that the process's state does not allow (writing to one that ended). */
export class ProcessStateError extends Error {
  readonly code = "invalid_state";
  constructor(message: string) {
    super(message);
    this.name = "ProcessStateError";
  }
}
