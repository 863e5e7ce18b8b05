/**
 * An error an operator should read: a wrong setting, a missing or unsafe
 * file, a key that does not unlock. Every entry point (each service's main,
 * each CLI) prints such an error's message alone, without a stack: the
 * message says what is wrong and how to fix it. Anything else is a bug and is
 * printed with its stack. Subclasses keep their own `name` for tests and logs;
 * entry points test `instanceof OperatorError`, never names.
 */
export class OperatorError extends Error {
  override name = 'OperatorError'
}

/**
 * What an entry point prints for a failure: the message of an OperatorError
 * or of a system call's error (ENOENT, EACCES: they name the path), the stack
 * of anything else.
 */
export function describeFailure(err: unknown): string {
  if (err instanceof OperatorError) return err.message
  if (err instanceof Error && typeof (err as NodeJS.ErrnoException).code === 'string' && /^E[A-Z0-9]+$/.test((err as NodeJS.ErrnoException).code!) && 'syscall' in err) return err.message
  if (err instanceof Error) return err.stack ?? `${err.name}: ${err.message}`
  return String(err)
}
