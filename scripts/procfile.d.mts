// Types of procfile.mjs beside it, for the tests that import it.

export interface ProcfileEntry {
  name: string
  command: string
}

/** The Procfile's "name: command" lines in order; throws naming the line that is neither that, blank nor a # comment. */
export function readProcfile(file: string): ProcfileEntry[]
