// Types of env-file.mjs beside it, for the tests that import it.

/**
 * Sets each KEY=VALUE of `file` in `env` (process.env unless given) that
 * `env` does not have yet; returns the keys it set. A missing file sets
 * nothing; an unreadable one or a line that is not KEY=VALUE throws an
 * OperatorError.
 */
export function loadEnvFile(file: string, env?: Record<string, string | undefined>): string[]
