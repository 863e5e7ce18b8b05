import { realpathSync } from 'node:fs'
import { pathToFileURL } from 'node:url'

/**
 * Whether the module at `moduleUrl` (its import.meta.url) is the program node
 * was started with, through any link to it (npm's bin links): a CLI module
 * then runs itself, and tests import it without running anything.
 */
export function isMainModule(moduleUrl: string): boolean {
  try {
    return process.argv[1] !== undefined && moduleUrl === pathToFileURL(realpathSync(process.argv[1])).href
  } catch {
    return false
  }
}
