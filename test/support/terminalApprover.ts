// The stack with its approver on a real terminal: a detached tmux session
// runs the approver (cli mode or the cli channel), the test reads the screen
// and presses keys as the operator at that terminal would.
import { execFileSync } from 'node:child_process'
import { freePort, waitFor } from './processes.js'
import { entries, type Stack } from './stack.js'

export interface TerminalApprover {
  /** The terminal as it shows now, with up to 300 rows of scrollback. */
  screen(): string
  /** tmux key names: 'y', 'Enter'. */
  press(...keys: string[]): void
  /** Ends the session, and the approver with it. */
  close(): void
}

/**
 * Starts the stack's signer, its approver on a terminal `width` columns wide
 * with `env` added to the stack's, and once the approver answers on its port,
 * the gateway. When one does not start, what did is stopped.
 */
export async function startWithTerminalApprover(stack: Stack, env: Record<string, string>, width = 200): Promise<TerminalApprover> {
  const session = `cs-${process.pid}-${Date.now()}`
  const terminal: TerminalApprover = {
    screen: () => execFileSync('tmux', ['capture-pane', '-p', '-t', session, '-S', '-300']).toString(),
    press: (...keys) => execFileSync('tmux', ['send-keys', '-t', session, ...keys]),
    // An approver that exited (a failed start, a crash mid-test) took its session with it: nothing left to end, and
    // tmux's "can't find session" must not hide the failure that ended it, nor skip stopping the rest of the stack.
    close: () => {
      try {
        execFileSync('tmux', ['kill-session', '-t', session], { stdio: 'ignore' })
      } catch {
        /* already gone */
      }
    },
  }
  await stack.startSigner()
  try {
    stack.approverPort = await freePort()
    const envArgs = Object.entries({ ...stack.env, SERVICE_APPROVER_PORT: String(stack.approverPort), SERVICE_LOG_LEVEL: 'warn', ...env }).flatMap(([k, v]) => ['-e', `${k}=${v}`])
    execFileSync('tmux', ['new-session', '-d', '-s', session, '-x', String(width), '-y', '50', ...envArgs, process.execPath, entries.approver])
    await waitFor(async () => (await fetch(`http://127.0.0.1:${stack.approverPort}/v1/approvals/pending`).catch(() => null))?.ok ?? null, { what: 'the approver in tmux' })
    await stack.startGateway()
  } catch (err) {
    try {
      terminal.close()
    } finally {
      await stack.stop()
    }
    throw err
  }
  return terminal
}
