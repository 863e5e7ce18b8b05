// Types of prefixLines.mjs beside it, for the tests that import it.

/**
 * Copies `stream` to `out`, each line prefixed with `label | `; a line left
 * incomplete for `partialMs` (default 100) is written as far as it goes.
 */
export function prefixLines(label: string, stream: NodeJS.ReadableStream, out: { write(text: string): unknown }, partialMs?: number): void
