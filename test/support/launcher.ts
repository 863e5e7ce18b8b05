// npm start's launcher (scripts/start.mjs) run to its exit with only the
// given settings, PATH and HOME: for tests of what it refuses before anything
// starts.
import { spawn } from 'node:child_process'
import path from 'node:path'
import { killOnExit, repoRoot } from './processes.js'

/** The launcher's exit code and everything it wrote (stdout and stderr, interleaved). */
export async function launcherRefusal(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, [path.join(repoRoot, 'scripts/start.mjs')], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    cwd: repoRoot,
  })
  killOnExit(child)
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (out += d))
  const code = await new Promise<number | null>((r) => child.once('exit', r))
  return { code, out }
}
