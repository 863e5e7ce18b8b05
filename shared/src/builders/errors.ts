/** A client mistake a schema cannot express; the gateway answers it with a 400. */
export class BuildError extends Error {
  override name = 'BuildError'
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}
