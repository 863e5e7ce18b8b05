// Does the sandbox work on this machine? Checked once at start by really
// making one: bubblewrap with the same namespaces and binds as a skill run,
// running node inside, which must find itself as PID 1 or 2 of a new PID
// namespace, in a network namespace with no route out (connecting to a
// TEST-NET-1 address fails at once with ENETUNREACH). A binary that exists
// but cannot create namespaces (user namespaces disabled, a systemd unit's
// RestrictNamespaces=, a seccomp filter) fails here, not at the first run.
import { nodeBind, PROBE_TMP, ProgramNotFoundError, sandboxArgs, spawnSandbox } from './runSkill.js'
import { NoSyscallFilterError } from './syscallFilter.js'

export type SandboxStatus = { available: true } | { available: false; message: string }

const PROBE_TIMEOUT_MS = 10_000

// Inside: our PID, and what a TCP connection to 192.0.2.1 (documentation-only
// address) does: ENETUNREACH where there is no route, anything else otherwise.
const PROBE_SCRIPT =
  "const done=(net)=>{process.stdout.write(JSON.stringify({pid:process.pid,net}));process.exit(0)};" +
  "const s=require('net').connect({host:'192.0.2.1',port:9});s.on('error',(e)=>done(e.code));s.on('connect',()=>done('connected'));setTimeout(()=>done('pending'),2000)"

export function sandboxUnavailableMessage(reason: string): string {
  return `skills are disabled: the sandbox does not work on this machine (${reason}). Skills run under bubblewrap: install the Debian package \`bubblewrap\` (apt install bubblewrap), allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 where that exists), and under systemd use the settings in deploy/systemd/countersign-gateway.service; then restart the gateway`
}

export function probeSandbox(opts: { bwrap?: string; node?: string } = {}): Promise<SandboxStatus> {
  const bwrap = opts.bwrap ?? 'bwrap'
  const node = opts.node ?? process.execPath
  return new Promise((resolve) => {
    let child
    try {
      child = spawnSandbox(bwrap, [...sandboxArgs(PROBE_TMP, nodeBind(node)), node, '-e', PROBE_SCRIPT])
    } catch (err) {
      const reason = err instanceof NoSyscallFilterError || err instanceof ProgramNotFoundError ? err.message : `cannot start ${bwrap}: ${(err as Error).message}`
      resolve({ available: false, message: sandboxUnavailableMessage(reason) })
      return
    }
    let out = ''
    let errText = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (errText += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), PROBE_TIMEOUT_MS)
    child.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      const reason = err.code === 'ENOENT' ? `${bwrap} not found on PATH` : `cannot start ${bwrap}: ${err.message}`
      resolve({ available: false, message: sandboxUnavailableMessage(reason) })
    })
    child.once('close', (code, signal) => {
      clearTimeout(timer)
      if (code !== 0) {
        const detail = errText.trim().split('\n').pop()?.slice(0, 300) || (signal ? `killed by ${signal}` : `exit code ${code}`)
        resolve({ available: false, message: sandboxUnavailableMessage(`${bwrap} failed to create the sandbox: ${detail}`) })
        return
      }
      let seen: { pid?: unknown; net?: unknown }
      try {
        seen = JSON.parse(out) as { pid?: unknown; net?: unknown }
      } catch {
        resolve({ available: false, message: sandboxUnavailableMessage(`${bwrap} ran, but the test inside printed nothing usable`) })
        return
      }
      if (typeof seen.pid !== 'number' || seen.pid > 2) {
        resolve({ available: false, message: sandboxUnavailableMessage(`${bwrap} ran without a new PID namespace (pid ${String(seen.pid)})`) })
        return
      }
      // EAFNOSUPPORT: the system-call filter refused the TCP socket itself (it allows AF_UNIX only).
      if (seen.net !== 'ENETUNREACH' && seen.net !== 'EAFNOSUPPORT') {
        resolve({ available: false, message: sandboxUnavailableMessage(`${bwrap} ran without an isolated network namespace (a connection out gave ${String(seen.net)})`) })
        return
      }
      resolve({ available: true })
    })
  })
}
