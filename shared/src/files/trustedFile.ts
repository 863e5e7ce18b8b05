import { realpathSync, statSync } from 'node:fs'
import path from 'node:path'

/**
 * The real path of a file whose code this process will run (a PKCS#11
 * module, which the signer loads into itself with the keys and the PIN),
 * after checking that nobody but root and this process's user can change
 * what that path holds: the file and every directory above it must be owned
 * by root or this user and not writable by group or others. The one
 * exception is a directory with the sticky bit (/tmp): others may write
 * there but cannot rename or remove an entry they do not own, and the entry
 * below it is checked in turn. Links are resolved first and the checks made
 * on the real path, which is what the caller loads, so a link swapped after
 * the check changes nothing. Each refusal is one sentence from `refuse`,
 * naming the path at fault and what to do.
 */
export function trustedCodeFile(file: string, variable: string, refuse: (message: string) => Error): string {
  let real: string
  try {
    real = realpathSync(file)
  } catch (err) {
    throw refuse(`${variable} ${file} cannot be resolved (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`)
  }
  const uid = process.getuid?.()
  // No uid on this platform (Windows): nothing to compare owners with.
  if (uid === undefined) return real
  const fileStat = statSync(real)
  if (!fileStat.isFile()) throw refuse(`${variable} ${file} is not a regular file`)
  for (let current = real, child: string | null = null; ; child = current, current = path.dirname(current)) {
    const st = current === real ? fileStat : statSync(current)
    const what = current === real ? `the file ${real}` : `the directory ${current}`
    if (st.uid !== 0 && st.uid !== uid) {
      throw refuse(`${variable} ${file}: ${what} belongs to uid ${st.uid}, who could replace the module this process runs; it must belong to root or to uid ${uid}: install the module in a root-owned directory`)
    }
    const sticky = child !== null && (st.mode & 0o1000) !== 0
    if ((st.mode & 0o022) !== 0 && !sticky) {
      throw refuse(`${variable} ${file}: ${what} is writable by group or others (mode ${(st.mode & 0o7777).toString(8)}), who could replace the module this process runs: run chmod go-w ${current}`)
    }
    if (current === path.dirname(current)) return real
  }
}
