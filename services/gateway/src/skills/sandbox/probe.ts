// Does the sandbox work on this machine? Checked once at start by really
// making one: bubblewrap with the same namespaces and binds as a skill run,
// running node inside, which must find itself as PID 1 or 2 of a new PID
// namespace with no network interface but loopback. A binary that exists
// but cannot create namespaces (user namespaces disabled, a systemd unit's
// RestrictNamespaces=, a seccomp filter) fails here, not at the first run.
import { spawn } from 'node:child_process'
import { sandboxBaseArgs } from './runSkill.js'

export type SandboxStatus = { available: true } | { available: false; message: string }

const PROBE_TIMEOUT_MS = 10_000

// Inside: our PID, and the network interfaces the kernel shows (new netns: only lo).
const PROBE_SCRIPT = "const fs=require('fs');const ifs=fs.readFileSync('/proc/net/dev','utf8').split('\\n').slice(2).map(l=>l.split(':')[0].trim()).filter(Boolean);process.stdout.write(JSON.stringify({pid:process.pid,ifs}))"

export function sandboxUnavailableMessage(reason: string): string {
  return `skills are disabled: the sandbox does not work on this machine (${reason}). Skills run under bubblewrap: install the Debian package \`bubblewrap\` (apt install bubblewrap), allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 where that exists), and under systemd use the settings in deploy/systemd/countersign-gateway.service; then restart the gateway`
}

export function probeSandbox(opts: { bwrap?: string; node?: string } = {}): Promise<SandboxStatus> {
  const bwrap = opts.bwrap ?? 'bwrap'
  const node = opts.node ?? process.execPath
  return new Promise((resolve) => {
    let child
    try {
      child = spawn(bwrap, [...sandboxBaseArgs(), node, '-e', PROBE_SCRIPT], { stdio: ['ignore', 'pipe', 'pipe'] })
    } catch (err) {
      resolve({ available: false, message: sandboxUnavailableMessage(`cannot start ${bwrap}: ${(err as Error).message}`) })
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
      let seen: { pid?: unknown; ifs?: unknown }
      try {
        seen = JSON.parse(out) as { pid?: unknown; ifs?: unknown }
      } catch {
        resolve({ available: false, message: sandboxUnavailableMessage(`${bwrap} ran, but the test inside printed nothing usable`) })
        return
      }
      if (typeof seen.pid !== 'number' || seen.pid > 2) {
        resolve({ available: false, message: sandboxUnavailableMessage(`${bwrap} ran without a new PID namespace (pid ${String(seen.pid)})`) })
        return
      }
      const ifs = Array.isArray(seen.ifs) ? seen.ifs : []
      if (ifs.some((i) => i !== 'lo')) {
        resolve({ available: false, message: sandboxUnavailableMessage(`${bwrap} ran without a new network namespace (interfaces ${ifs.join(', ')})`) })
        return
      }
      resolve({ available: true })
    })
  })
}
