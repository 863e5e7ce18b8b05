// The first ten minutes: `npm start` with no configuration brings up the whole
// stack on a local chain, `npm run demo` completes against it, and the
// dashboard shows the demo's approval request (driven in real Chromium with
// --manual). Ctrl-C stops everything.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { chromium } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, killOnExit, repoRoot, tempDataDir, waitFor } from './support/processes.js'
import { launcherRefusal } from './support/launcher.js'

const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

let dataDir: string
let env: Record<string, string>
let launcher: ChildProcess
let output = ''

function run(script: string, args: string[] = []) {
  const child = spawn(process.execPath, [path.join(repoRoot, script), ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, cwd: repoRoot })
  killOnExit(child)
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (out += d))
  const done = new Promise<number | null>((r) => child.once('exit', (code) => r(code)))
  return { child, done, out: () => out }
}

beforeAll(async () => {
  dataDir = tempDataDir()
  env = {
    SERVICE_DATA_DIR: dataDir,
    SERVICE_PORT: String(await freePort()),
    SERVICE_APPROVER_PORT: String(await freePort()),
    SERVICE_DEV_CHAIN_PORT: String(await freePort()),
    // A secret of the gateway's: the dev chain must not get it (below).
    AGGREGATOR_API_KEY: 'quickstart-secret-key',
  }
  const started = run('scripts/start.mjs')
  launcher = started.child
  launcher.stdout!.on('data', (d) => (output += d))
  launcher.stderr!.on('data', (d) => (output += d))
  // The launcher says "running" only once the signer answers (its keys unlocked), up to two minutes.
  await waitFor(() => (output.includes('Ctrl-C stops everything') ? true : null), { timeoutMs: 130_000, what: `the stack to start:\n${output}` })
}, 150_000)

afterAll(async () => {
  if (launcher && launcher.exitCode === null) {
    launcher.kill('SIGINT')
    await new Promise((r) => launcher.once('exit', r))
  }
})

describe('zero-config start and the demo', () => {
  it('prints what to do next: the dashboard with the operator token, a curl line, where the data lives', async () => {
    const token = readFileSync(path.join(dataDir, 'operator-token'), 'utf8').trim()
    expect(output).toContain(`dashboard:      http://127.0.0.1:${env.SERVICE_PORT}/approval-ui   (operator token: ${token})`)
    expect(output).toContain(`data:           ${dataDir}`)
    expect(output).toMatch(/curl -s -X POST http:\/\/127\.0\.0\.1:\d+\/v1\/tx\/approve-request/)
    // The gateway logs the signer's accounts once both are up; a dev key is called out.
    await waitFor(() => (output.includes('DEV KEY in use') ? true : null), { what: 'the dev key warning' })
    const dev = JSON.parse(readFileSync(path.join(dataDir, 'dev-chain.json'), 'utf8'))
    expect(dev.contracts.swapRouter02).toMatch(/^0x[0-9a-fA-F]{40}$/)
    // The dev key lives apart from the real keystore and is marked dev.
    expect(existsSync(path.join(dataDir, 'keystore'))).toBe(false)
    // anvil runs with PATH and HOME only, none of the launcher's secrets.
    const anvilPid = Number(/dev chain: anvil on \S+ \(chain id 8453\), pid (\d+)/.exec(output)![1])
    const anvilEnv = readFileSync(`/proc/${anvilPid}/environ`, 'utf8').split('\0').filter(Boolean).map((kv) => kv.split('=')[0])
    expect(anvilEnv.sort()).toEqual(['HOME', 'PATH'])
  })

  it('npm run demo completes: approval, ERC-20 transfer, swap, receipts, audit trail', async () => {
    const demo = run('scripts/demo.mjs')
    expect(await demo.done, demo.out()).toBe(0)
    const out = demo.out()
    for (const text of ['1. Health and balances', 'approving with the operator token', '3. An ERC-20 transfer', '4. A swap on the local Uniswap v3 pool', '5. Receipts', '6. The audit trail', 'signature_created']) {
      expect(out, out).toContain(text)
    }
    expect(out).not.toContain('reverted')
  }, 120_000)

  it('with --manual, the dashboard shows the demo’s request and a click approves it', async () => {
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_FLAGS })
    try {
      const page = await browser.newPage()
      const token = readFileSync(path.join(dataDir, 'operator-token'), 'utf8').trim()
      await page.addInitScript((t) => sessionStorage.setItem('countersign.operatorToken', t), token)
      await page.goto(`http://127.0.0.1:${env.SERVICE_PORT}/approval-ui`)
      const demo = run('scripts/demo.mjs', ['--manual'])
      const card = page.locator('[data-request-id]').filter({ hasText: 'Transfer 0.05 ETH (native)' })
      await card.waitFor({ timeout: 20_000 })
      // The demo is a client: its metadata.source is shown as what the client says, never as a skill label.
      expect(await card.textContent()).toContain('client says: countersign-demo')
      await card.getByRole('button', { name: 'Approve' }).click()
      expect(await demo.done, `${demo.out()}\n--- the stack's output, last 8000 characters ---\n${output.slice(-8000)}`).toBe(0)
    } finally {
      await browser.close()
    }
  }, 120_000)

  it('Ctrl-C stops every process cleanly', async () => {
    launcher.kill('SIGINT')
    const code = await new Promise((r) => launcher.once('exit', r))
    expect(code).toBe(0)
    expect(output).toContain('interrupted; stopping everything')
    await waitFor(async () => (await fetch(`http://127.0.0.1:${env.SERVICE_PORT}/v1/health`).then(() => false, () => true)) || null, { what: 'the gateway to be gone' })
  })
})

describe('a crashed process', () => {
  it('stops the whole stack with a message naming it', async () => {
    const dir = tempDataDir()
    const ports = { SERVICE_PORT: String(await freePort()), SERVICE_APPROVER_PORT: String(await freePort()), SERVICE_DEV_CHAIN_PORT: String(await freePort()) }
    const child = spawn(process.execPath, [path.join(repoRoot, 'scripts/start.mjs')], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SERVICE_DATA_DIR: dir, ...ports }, cwd: repoRoot })
    killOnExit(child)
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (out += d))
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)))
    await waitFor(() => (out.includes('Ctrl-C stops everything') ? true : null), { timeoutMs: 60_000, what: 'the stack' })
    const kids = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/).map(Number)
    const signerPid = kids.find((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('signer/dist/main.js')
      } catch {
        return false
      }
    })
    expect(signerPid).toBeDefined()
    process.kill(signerPid!, 'SIGKILL')
    expect(await exited).toBe(1)
    expect(out).toContain('countersign: signer exited (SIGKILL); stopping everything')
    await waitFor(async () => (await fetch(`http://127.0.0.1:${ports.SERVICE_PORT}/v1/health`).then(() => false, () => true)) || null, { what: 'the gateway to stop too' })
  }, 90_000)
})

describe('a bad setting', () => {
  it.each([
    [{ SERVICE_PORT: 'abc' }, 'SERVICE_PORT must be a port number from 1 to 65535; got "abc"'],
    // Read by the approver only: before, the dev chain and Uniswap were deployed first (found by review).
    [{ SERVICE_APPROVER_PORT: 'abc' }, 'SERVICE_APPROVER_PORT must be a port number from 1 to 65535; got "abc"'],
    // 0 bound a random port while the launcher waited on :0 and dev-chain.json named it (found by review).
    [{ SERVICE_PORT: '0' }, 'SERVICE_PORT must be a port number from 1 to 65535; got "0"'],
  ])('%j stops the launcher before anything starts, naming the variable and the accepted form', async (bad, said) => {
    const dir = tempDataDir()
    const { code, out } = await launcherRefusal({ SERVICE_DATA_DIR: dir, ...bad })
    expect(code).toBe(1)
    expect(out).toContain(said)
    expect(out).not.toContain('development stack')
    expect(out).not.toMatch(/\n\s+at /) // no stack trace
    expect(existsSync(path.join(dir, 'dev-chain.json'))).toBe(false)
  })

  it('SERVICE_DEV_CHAIN_PORT=0 is refused before the dev chain starts (anvil was left running on a port nobody knew)', async () => {
    const dir = tempDataDir()
    const { code, out } = await launcherRefusal({ SERVICE_DATA_DIR: dir, SERVICE_PORT: String(await freePort()), SERVICE_APPROVER_PORT: String(await freePort()), SERVICE_DEV_CHAIN_PORT: '0' })
    expect(code).toBe(1)
    expect(out).toContain('SERVICE_DEV_CHAIN_PORT must be a port number from 1 to 65535; got "0"')
    expect(out).not.toContain('dev chain: anvil on')
  })
})

/** One secret of each process's own. */
const SECRETS = {
  SERVICE_DEMO_PASSPHRASE: 'quickstart signer passphrase',
  SERVICE_OPERATOR_TOKEN: 'quickstart-operator-token-0123456789abcdef',
  AGGREGATOR_API_KEY: 'quickstart-aggregator-key',
}

describe('with an RPC URL configured', () => {
  it('runs the three services only: no dev chain, no dev key', async () => {
    const { startAnvil } = await import('./support/anvil.js')
    const chain = await startAnvil({ chainId: 8453 })
    const dir = tempDataDir()
    const ports = { SERVICE_PORT: String(await freePort()), SERVICE_APPROVER_PORT: String(await freePort()) }
    const child = spawn(process.execPath, [path.join(repoRoot, 'scripts/start.mjs')], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SERVICE_DATA_DIR: dir, SERVICE_RPC_URL_8453: chain.rpcUrl, ...ports, ...SECRETS },
      cwd: repoRoot,
    })
    killOnExit(child)
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (out += d))
    try {
      await waitFor(() => (out.includes('Ctrl-C stops everything') ? true : null), { timeoutMs: 60_000, what: 'the services' })
      expect(out).not.toContain('development stack')
      expect(out).not.toContain('dev wallet')
      expect(existsSync(path.join(dir, 'dev-keystore'))).toBe(false)
      expect(existsSync(path.join(dir, 'dev-chain.json'))).toBe(false)
      expect(out).toContain('keystore is empty')
      // Each process holds only its own secrets: before, all three got the launcher's whole environment.
      const kids = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/).map(Number)
      const environOf = (service: string) => {
        const pid = kids.find((k) => readFileSync(`/proc/${k}/cmdline`, 'utf8').includes(`services/${service}/dist/main.js`))
        expect(pid, `the ${service}'s pid among ${kids.join(', ')}`).toBeDefined()
        return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter((kv) => Object.keys(SECRETS).includes(kv.split('=')[0]!))
      }
      expect(environOf('signer')).toEqual([`SERVICE_DEMO_PASSPHRASE=${SECRETS.SERVICE_DEMO_PASSPHRASE}`])
      expect(environOf('approver')).toEqual([`SERVICE_OPERATOR_TOKEN=${SECRETS.SERVICE_OPERATOR_TOKEN}`])
      expect(environOf('gateway')).toEqual([`AGGREGATOR_API_KEY=${SECRETS.AGGREGATOR_API_KEY}`])
    } finally {
      child.kill('SIGINT')
      await new Promise((r) => child.once('exit', r))
      await chain.stop()
    }
  }, 90_000)
})
