// The system-test harness itself, with real processes and real chains: two
// anvil instances side by side, the TestToken compiled (cold and cached) and
// deployed on both, spawnService's capture and kill paths, and the promise
// that nothing we start outlives the test process.
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import ts from 'typescript'
import { erc20Abi, getAddress, parseUnits, type Address } from 'viem'
import { mnemonicToAccount, privateKeyToAccount } from 'viem/accounts'
import { afterAll, describe, expect, it } from 'vitest'
import { ANVIL_MNEMONIC, anvilDevAccounts, fundAccount, rpc, startAnvil, type Anvil } from './support/anvil.js'
import { clientsFor, deployTestToken, erc20Allowance, erc20Balance, erc20Write, testTokenArtifact } from './support/contracts.js'
import { artifactsDir, freePort, repoRoot, spawnService, StopWaiting, tempDataDir, waitFor, type ServiceProcess } from './support/processes.js'

const timings: Record<string, string> = {}
const time = async <T>(label: string, fn: () => Promise<T> | T): Promise<T> => {
  const t0 = performance.now()
  const result = await fn()
  timings[label] = `${(performance.now() - t0).toFixed(0)} ms`
  return result
}
afterAll(() => {
  if (Object.keys(timings).length === 0) return
  console.log(`harness timings:\n${Object.entries(timings).map(([k, v]) => `  ${k.padEnd(44)} ${v}`).join('\n')}`)
})

/** Alive = exists and is not a zombie (a SIGKILLed orphan may linger as one until it is reaped). */
function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
    return state !== 'Z' && state !== 'X'
  } catch {
    return false
  }
}

const [deployer, alice, bob] = [anvilDevAccounts[0], anvilDevAccounts[1], anvilDevAccounts[2]]

describe('anvil: two chains at once, TestToken on both', () => {
  let base: Anvil
  let op: Anvil
  const tokens: Record<number, Address> = {}
  const SUPPLY = parseUnits('1000000', 6)

  afterAll(async () => {
    await Promise.all([base?.stop(), op?.stop()])
  })

  it('starts chain 8453 and chain 10 side by side, each answering with its own chain id', async () => {
    ;[base, op] = await time('start two anvils in parallel', () => Promise.all([startAnvil({ chainId: 8453 }), startAnvil({ chainId: 10 })]))
    expect(base.port).not.toBe(op.port)
    expect(base.rpcUrl).toBe(`http://127.0.0.1:${base.port}`)
    expect(Number(await rpc<string>(base.rpcUrl, 'eth_chainId'))).toBe(8453)
    expect(Number(await rpc<string>(op.rpcUrl, 'eth_chainId'))).toBe(10)
    expect(await clientsFor(op.rpcUrl, 10).pub.getChainId()).toBe(10)
    expect(isAlive(base.pid) && isAlive(op.pid)).toBe(true)
    // automine: nothing mined until a transaction arrives
    expect(BigInt(await rpc<string>(base.rpcUrl, 'eth_blockNumber'))).toBe(0n)
  })

  it('the dev accounts are the mnemonic’s first accounts, funded with 10,000 ETH', async () => {
    const onChain = (await rpc<string[]>(base.rpcUrl, 'eth_accounts')).map((a) => getAddress(a))
    anvilDevAccounts.forEach((acct, i) => {
      expect(privateKeyToAccount(acct.privateKey).address).toBe(acct.address)
      expect(mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: i }).address).toBe(acct.address)
      expect(onChain[i]).toBe(acct.address)
    })
    expect(await clientsFor(op.rpcUrl, 10).pub.getBalance({ address: deployer.address })).toBe(parseUnits('10000', 18))
  })

  it('fundAccount sets a native balance on one chain only', async () => {
    const someone = '0x00000000000000000000000000000000000c0ffe' as Address
    await fundAccount(base.rpcUrl, someone, 123_456_789n)
    expect(await clientsFor(base.rpcUrl, 8453).pub.getBalance({ address: someone })).toBe(123_456_789n)
    expect(await clientsFor(op.rpcUrl, 10).pub.getBalance({ address: someone })).toBe(0n)
  })

  it('compiles TestToken once, then reads it from the cache', async () => {
    const cacheDir = tempDataDir('solc')
    try {
      const cold = await time('solc compile, cold (incl. loading solc-js)', () => testTokenArtifact({ cacheDir }))
      expect(cold.fromCache).toBe(false)
      expect(path.dirname(cold.cacheFile)).toBe(cacheDir)
      const warm = await time('solc compile, cached', () => testTokenArtifact({ cacheDir }))
      expect(warm.fromCache).toBe(true)
      expect(warm.bytecode).toBe(cold.bytecode)
      expect(warm.abi).toEqual(cold.abi)
      expect(cold.abi.some((item) => item.type === 'function' && item.name === 'decimals')).toBe(true)
      // The default cache (test/artifacts/solc) holds the same artifact after this.
      const shared = testTokenArtifact()
      expect(shared.cacheFile.startsWith(path.join(artifactsDir, 'solc'))).toBe(true)
      expect(shared.bytecode).toBe(cold.bytecode)
    } finally {
      rmSync(cacheDir, { recursive: true, force: true })
    }
  })

  it('deploys the token (6 decimals) on both chains; metadata, balances and allowances read back per chain', async () => {
    const deploy = (a: Anvil) =>
      deployTestToken({ rpcUrl: a.rpcUrl, chainId: a.chainId, deployerKey: deployer.privateKey, name: 'Test USD', symbol: 'TUSD', decimals: 6, supply: SUPPLY })
    tokens[8453] = await time('deploy TestToken (one chain)', () => deploy(base))
    tokens[10] = await time('deploy TestToken (second chain)', () => deploy(op))

    for (const a of [base, op]) {
      const token = tokens[a.chainId]!
      const { pub } = clientsFor(a.rpcUrl, a.chainId)
      expect((await pub.getCode({ address: token }))?.length).toBeGreaterThan(100)
      const read = <F extends 'name' | 'symbol' | 'decimals' | 'totalSupply'>(functionName: F) => pub.readContract({ address: token, abi: erc20Abi, functionName })
      expect(await read('name')).toBe('Test USD')
      expect(await read('symbol')).toBe('TUSD')
      expect(await read('decimals')).toBe(6)
      expect(await read('totalSupply')).toBe(SUPPLY)
      expect(await erc20Balance(a.rpcUrl, token, deployer.address)).toBe(SUPPLY)
      expect(await erc20Balance(a.rpcUrl, token, alice.address)).toBe(0n)
    }

    // Different amounts on each chain, to show the two chains' state is separate.
    await erc20Write({ rpcUrl: base.rpcUrl, chainId: 8453, fromKey: deployer.privateKey, token: tokens[8453]!, functionName: 'approve', args: [alice.address, 1_234_567n] })
    await erc20Write({ rpcUrl: op.rpcUrl, chainId: 10, fromKey: deployer.privateKey, token: tokens[10]!, functionName: 'approve', args: [alice.address, 7_654_321n] })
    await erc20Write({ rpcUrl: base.rpcUrl, chainId: 8453, fromKey: deployer.privateKey, token: tokens[8453]!, functionName: 'transfer', args: [bob.address, 2_500_000n] })

    expect(await erc20Allowance(base.rpcUrl, tokens[8453]!, deployer.address, alice.address)).toBe(1_234_567n)
    expect(await erc20Allowance(op.rpcUrl, tokens[10]!, deployer.address, alice.address)).toBe(7_654_321n)
    expect(await erc20Allowance(base.rpcUrl, tokens[8453]!, alice.address, deployer.address)).toBe(0n)
    expect(await erc20Balance(base.rpcUrl, tokens[8453]!, bob.address)).toBe(2_500_000n)
    expect(await erc20Balance(base.rpcUrl, tokens[8453]!, deployer.address)).toBe(SUPPLY - 2_500_000n)
    expect(await erc20Balance(op.rpcUrl, tokens[10]!, bob.address)).toBe(0n)
    // The older call form with a chain id still works.
    expect(await erc20Balance(base.rpcUrl, 8453, tokens[8453]!, bob.address)).toBe(2_500_000n)
    expect(await erc20Allowance(op.rpcUrl, 10, tokens[10]!, deployer.address, alice.address)).toBe(7_654_321n)
  })

  it('stop() ends both processes and their RPC endpoints; a second stop() is harmless', async () => {
    await time('stop two anvils', () => Promise.all([base.stop(), op.stop()]))
    expect(isAlive(base.pid)).toBe(false)
    expect(isAlive(op.pid)).toBe(false)
    expect(base.child.exitCode !== null || base.child.signalCode !== null).toBe(true)
    await expect(rpc(base.rpcUrl, 'eth_chainId')).rejects.toThrow()
    await expect(rpc(op.rpcUrl, 'eth_chainId')).rejects.toThrow()
    await base.stop()
  })
})

describe('startAnvil failure and port handling', () => {
  it('an explicit port that is taken fails fast, quoting anvil’s own error', async () => {
    const blocker = net.createServer((socket) => socket.destroy()) // holds the port, answers nothing
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()))
    const port = (blocker.address() as net.AddressInfo).port
    try {
      const t0 = Date.now()
      await expect(startAnvil({ chainId: 8453, port })).rejects.toThrow(/Address already in use/i)
      expect(Date.now() - t0).toBeLessThan(5_000)
    } finally {
      await new Promise((r) => blocker.close(r))
    }
  })

  it('an explicit free port is used as given', async () => {
    const port = await freePort()
    const a = await time('start one anvil (explicit port)', () => startAnvil({ chainId: 31337, port }))
    try {
      expect(a.port).toBe(port)
      expect(Number(await rpc<string>(a.rpcUrl, 'eth_chainId'))).toBe(31337)
    } finally {
      await a.stop()
    }
    expect(isAlive(a.pid)).toBe(false)
  })
})

// A small program standing in for a service.
const FAKE_SERVICE = `
const mode = process.argv[2] ?? 'normal'
console.log('hello from ' + process.env.GREETING)
console.error('a warning on stderr')
console.log('cwd=' + process.cwd())
console.log('env-keys=' + Object.keys(process.env).sort().join(','))
process.stdout.write('a line written ')
if (mode === 'exit-early') { console.log('in two parts'); console.log('oops, giving up'); process.exit(2) }
process.on('SIGTERM', () => {
  if (mode === 'stubborn') { console.log('ignoring SIGTERM'); return }
  console.log('bye'); process.exit(0)
})
setTimeout(() => { console.log('in two parts'); console.log('ready port=4242') }, 50)
setTimeout(() => console.log('tick'), 300)
setInterval(() => {}, 1000)
`

describe('spawnService', () => {
  const dir = tempDataDir('svc')
  const entry = path.join(dir, 'fake-service.mjs')
  writeFileSync(entry, FAKE_SERVICE)
  const started: ServiceProcess[] = []
  const start = (mode: string, extra: Record<string, string> = {}) => {
    const s = spawnService({ name: `fake-${mode}`, entry, args: [mode], env: { GREETING: 'the tests', ...extra }, cwd: dir })
    started.push(s)
    return s
  }
  afterAll(async () => {
    await Promise.all(started.map((s) => s.stop('SIGKILL')))
    rmSync(dir, { recursive: true, force: true })
  })

  it('captures stdout and stderr line by line, with the given env and cwd only', async () => {
    const s = await time('spawnService until a line is seen', async () => {
      const svc = start('normal')
      await svc.waitForLine(/^ready port=\d+$/, 5_000)
      return svc
    })
    expect(s.pid).toBeGreaterThan(0)
    expect(s.lines).toContain('hello from the tests')
    expect(s.lines).toContain('a line written in two parts') // a line arriving in two writes is one line
    expect(s.stderrLines).toEqual(['a warning on stderr'])
    expect(s.stdoutLines).not.toContain('a warning on stderr')
    expect(s.lines).toContain(`cwd=${realpathSync(dir)}`)
    expect(s.lines.find((l) => l.startsWith('env-keys='))).toBe('env-keys=GREETING,HOME,PATH')
    const port = (await s.waitForLine(/ready port=(\d+)/)).match(/port=(\d+)/)![1]
    expect(port).toBe('4242')
    // `from` skips what was already printed
    const from = s.lines.length
    expect(await s.waitForLine(/tick|ready/, 5_000, { from })).toBe('tick')
    expect(s.output()).toContain('hello from the tests\n')
  })

  it('stop() sends SIGTERM and resolves with the exit code; output is in the log file', async () => {
    const s = start('normal')
    await s.waitForLine(/ready/, 5_000)
    expect(await s.stop()).toBe(0)
    expect(await s.waitForExit()).toEqual({ code: 0, signal: null })
    expect(s.lines.at(-1)).toBe('bye')
    expect(isAlive(s.pid)).toBe(false)
    expect(s.logFile).toBe(path.join(repoRoot, 'test/artifacts/logs', `fake-normal-${s.pid}.log`))
    const log = readFileSync(s.logFile, 'utf8')
    // stdout and stderr are separate pipes: lines from the two may interleave either way
    expect(log).toContain('hello from the tests\n')
    expect(log).toContain('a warning on stderr\n')
    expect(log).toContain('bye\n[harness] fake-normal exited (code 0, signal null)')
    expect(s.kill()).toBe(false) // already gone
  })

  it('kill(signal) delivers the signal; waitForExit reports it', async () => {
    const s = start('normal')
    await s.waitForLine(/ready/, 5_000)
    expect(s.kill('SIGKILL')).toBe(true)
    expect(await s.waitForExit()).toEqual({ code: null, signal: 'SIGKILL' })
    expect(await s.exited()).toBe(null)
    expect(isAlive(s.pid)).toBe(false)
  })

  it('stop() escalates to SIGKILL when SIGTERM is ignored', async () => {
    const s = start('stubborn')
    await s.waitForLine(/ready/, 5_000)
    const t0 = Date.now()
    expect(await s.stop('SIGTERM', 300)).toBe(null)
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250)
    expect((await s.waitForExit()).signal).toBe('SIGKILL')
    expect(s.lines).toContain('ignoring SIGTERM')
  })

  it('waitForLine rejects when the process exits first, or on timeout, with the last output', async () => {
    const early = start('exit-early')
    await expect(early.waitForLine(/never printed/, 5_000)).rejects.toThrow(/exited with code 2 before printing a line matching \/never printed\/[\s\S]*oops, giving up/)
    // after the exit, waiting again fails at once; a line already printed is still found
    await expect(early.waitForLine(/never printed/, 5_000)).rejects.toThrow(/exited with code 2/)
    expect(await early.waitForLine(/oops/)).toBe('oops, giving up')
    expect(await early.exited()).toBe(2)

    const slow = start('normal')
    await slow.waitForLine(/hello/, 5_000)
    await expect(slow.waitForLine(/never printed/, 200)).rejects.toThrow(/timed out after 200 ms waiting for fake-normal .* to print a line matching \/never printed\/[\s\S]*hello from the tests/)
  })

  it('dumpLogs() prints and returns the captured output', async () => {
    const s = start('normal')
    await s.waitForLine(/ready/, 5_000)
    const text = s.dumpLogs()
    expect(text).toContain(`fake-normal (pid ${s.pid}, running`)
    expect(text).toContain('hello from the tests')
    expect(s.dumpLogs({ lastLines: 1 })).toContain('ready port=4242\n----- end of fake-normal')
  })

  it('the positional form spawnService(name, entry, env, opts) still works; a missing entry is a clear error', async () => {
    const s = spawnService('fake-positional', entry, { GREETING: 'positional' }, { args: ['exit-early'] })
    started.push(s)
    expect(await s.waitForLine(/hello/)).toBe('hello from positional')
    expect(await s.exited()).toBe(2)
    expect(() => spawnService({ name: 'missing', entry: path.join(dir, 'nope.js') })).toThrow(/nope\.js does not exist .*tsc -b/)
    expect(() => spawnService({ name: 'relative', entry: 'dist/main.js' })).toThrow(/must be an absolute path/)
  })
})

describe('tempDataDir and waitFor', () => {
  it('tempDataDir gives a fresh, short, private directory that can hold Unix sockets', async () => {
    const a = tempDataDir()
    const b = tempDataDir('signer')
    try {
      expect(a).not.toBe(b)
      expect(path.basename(a)).toMatch(/^cs-[A-Za-z0-9]{6}$/)
      expect(path.basename(b)).toMatch(/^cs-signer-[A-Za-z0-9]{6}$/)
      expect(Buffer.byteLength(b)).toBeLessThanOrEqual(60)
      expect(statSync(a).mode & 0o777).toBe(0o700)
      mkdirSync(path.join(b, 'run'))
      const sock = path.join(b, 'run', 'approver-grant.sock')
      const server = net.createServer()
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(sock, () => resolve())
      })
      await new Promise((r) => server.close(r))
    } finally {
      rmSync(a, { recursive: true, force: true })
      rmSync(b, { recursive: true, force: true })
    }
  })

  it('waitFor polls until a value, gives up at once on StopWaiting, and names what timed out', async () => {
    let n = 0
    expect(await waitFor(() => (++n >= 3 ? `after ${n}` : null), { intervalMs: 10 })).toBe('after 3')
    expect(await waitFor(() => 0)).toBe(0) // 0 is a value, not "not yet"
    const t0 = Date.now()
    await expect(
      waitFor(
        () => {
          throw new StopWaiting('the process died')
        },
        { timeoutMs: 5_000 },
      ),
    ).rejects.toThrow('the process died')
    expect(Date.now() - t0).toBeLessThan(1_000)
    await expect(
      waitFor(
        () => {
          throw new Error('connection refused')
        },
        { timeoutMs: 150, intervalMs: 20, what: 'the gateway' },
      ),
    ).rejects.toThrow('timed out after 150 ms waiting for the gateway (last error: connection refused)')
  })
})

describe('nothing outlives the test process', () => {
  // The support modules, transpiled to plain JS inside the repo (so that
  // node_modules and the repo root resolve as they do here), run by a driver
  // that starts anvil and a service, prints their pids and then ends in the
  // way under test.
  let dir: string
  const sleeper = path.join(os.tmpdir(), `cs-sleeper-${process.pid}.mjs`)

  const prepare = () => {
    if (dir) return
    dir = mkdtempSync(path.join(artifactsDir, 'exit-hook-'))
    for (const name of ['anvil', 'processes']) {
      const source = readFileSync(path.join(repoRoot, 'test/support', `${name}.ts`), 'utf8')
      const { outputText } = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } })
      writeFileSync(path.join(dir, `${name}.js`), outputText)
    }
    writeFileSync(sleeper, `console.log('sleeping'); setInterval(() => {}, 1000)\n`)
    writeFileSync(
      path.join(dir, 'driver.mjs'),
      `import { startAnvil } from './anvil.js'
import { spawnService } from './processes.js'
const mode = process.argv[2]
const anvil = await startAnvil({ chainId: 31337 })
const svc = spawnService({ name: 'exit-hook-sleeper', entry: ${JSON.stringify(sleeper)} })
await svc.waitForLine(/sleeping/)
console.log('pids ' + JSON.stringify({ anvil: anvil.pid, service: svc.pid }))
// End on the test's cue (a line on stdin), or by the signal it sends.
process.stdin.once('data', () => {
  if (mode === 'exit') process.exit(3)
  if (mode === 'throw') throw new Error('uncaught in the driver')
})
`,
    )
  }
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true })
    rmSync(sleeper, { force: true })
  })

  it.each([
    ['process.exit()', 'exit', undefined],
    ['an uncaught exception', 'throw', undefined],
    ['SIGTERM', 'wait', 'SIGTERM'],
    ['SIGINT', 'wait', 'SIGINT'],
  ] as const)('anvil and services die with the test process on %s', async (_label, mode, signal) => {
    prepare()
    const driver = spawnService({ name: `exit-hook-driver-${mode}`, entry: path.join(dir, 'driver.mjs'), args: [mode] })
    const line = await driver.waitForLine(/^pids /, 15_000)
    const pids = JSON.parse(line.slice('pids '.length)) as { anvil: number; service: number }
    expect(isAlive(pids.anvil)).toBe(true)
    expect(isAlive(pids.service)).toBe(true)
    if (signal) driver.kill(signal)
    else driver.child.stdin!.write('go\n')
    const status = await driver.waitForExit()
    if (mode === 'exit') expect(status.code).toBe(3)
    if (mode === 'throw') expect(status.code).toBe(1)
    if (signal) expect(status.signal).toBe(signal) // re-raised: the default action still ends the process
    await waitFor(() => !isAlive(pids.anvil) && !isAlive(pids.service), { timeoutMs: 3_000, what: `anvil ${pids.anvil} and service ${pids.service} to be gone` })
  })
})
