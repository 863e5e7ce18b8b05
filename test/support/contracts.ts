// Contracts for system tests: a small OpenZeppelin ERC-20 compiled with solc-js
// (its bundled compiler, offline) and deployed with viem. Compiling takes
// seconds, so the artifact (abi + bytecode) is cached as JSON under
// test/artifacts/solc/, keyed by a hash of the sources, the compiler and the
// settings; a later run reads the file and never loads solc at all.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  encodeDeployData,
  erc20Abi,
  http,
  type Abi,
  type Address,
  type Hex,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { artifactsDir } from './processes.js'

const require = createRequire(import.meta.url)

/** Default location of cached compiler output. */
export const solcCacheDir = path.join(artifactsDir, 'solc')

const TEST_TOKEN_SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// An ERC-20 for tests: name, symbol and decimals chosen at deployment, the
/// whole supply minted to the deployer.
contract TestToken is ERC20 {
    uint8 private immutable _tokenDecimals;

    constructor(string memory tokenName, string memory tokenSymbol, uint8 tokenDecimals, uint256 initialSupply)
        ERC20(tokenName, tokenSymbol)
    {
        _tokenDecimals = tokenDecimals;
        _mint(msg.sender, initialSupply);
    }

    function decimals() public view override returns (uint8) {
        return _tokenDecimals;
    }
}
`

const SOLC_SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'cancun',
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
} as const

export interface Artifact {
  abi: Abi
  bytecode: Hex
}

export interface CompileResult extends Artifact {
  /** True when read from the cache file, false when solc ran. */
  fromCache: boolean
  cacheFile: string
}

interface SolcOutput {
  errors?: Array<{ severity: string; formattedMessage: string }>
  contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>
}

function packageVersion(name: string): string {
  return (JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version: string }).version
}

function readCached(file: string): Artifact | null {
  if (!existsSync(file)) return null
  try {
    const a = JSON.parse(readFileSync(file, 'utf8')) as Partial<Artifact>
    if (Array.isArray(a.abi) && typeof a.bytecode === 'string' && /^0x[0-9a-f]+$/i.test(a.bytecode)) return { abi: a.abi, bytecode: a.bytecode as Hex }
  } catch {
    // a damaged cache file: compile again and overwrite it
  }
  return null
}

/**
 * Compiles `sources` (file name -> Solidity text; @openzeppelin/contracts
 * imports are resolved from node_modules) and returns one contract's abi and
 * creation bytecode, from the cache when the same input was compiled before.
 */
export function compileSolidity(
  sources: Record<string, string>,
  contract: { file: string; name: string },
  opts: { cacheDir?: string } = {},
): CompileResult {
  const cacheDir = opts.cacheDir ?? solcCacheDir
  const key = createHash('sha256')
    .update(
      JSON.stringify({
        sources,
        contract,
        settings: SOLC_SETTINGS,
        solc: packageVersion('solc'),
        openzeppelin: packageVersion('@openzeppelin/contracts'),
      }),
    )
    .digest('hex')
    .slice(0, 16)
  const cacheFile = path.join(cacheDir, `${contract.name}-${key}.json`)
  const cached = readCached(cacheFile)
  if (cached) return { ...cached, fromCache: true, cacheFile }

  // Loading solc-js (a large emscripten module) alone takes a while: only on a cache miss.
  const solc = require('solc') as typeof import('solc')
  const ozDir = path.dirname(require.resolve('@openzeppelin/contracts/package.json'))
  const findImports = (importPath: string) => {
    const prefix = '@openzeppelin/contracts/'
    if (!importPath.startsWith(prefix)) return { error: `import not found: ${importPath}` }
    const file = path.join(ozDir, importPath.slice(prefix.length))
    return existsSync(file) ? { contents: readFileSync(file, 'utf8') } : { error: `import not found: ${importPath}` }
  }
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(Object.entries(sources).map(([file, content]) => [file, { content }])),
    settings: SOLC_SETTINGS,
  }
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports })) as SolcOutput
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error')
  if (errors.length > 0) throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`)
  const compiled = output.contracts?.[contract.file]?.[contract.name]
  if (!compiled?.evm.bytecode.object) throw new Error(`solc produced no bytecode for ${contract.file}:${contract.name}`)
  const artifact: Artifact = { abi: compiled.abi, bytecode: `0x${compiled.evm.bytecode.object}` }

  // Write then rename: test files run in parallel processes and may race here.
  mkdirSync(cacheDir, { recursive: true })
  const tmp = `${cacheFile}.${process.pid}.tmp`
  writeFileSync(tmp, JSON.stringify(artifact))
  renameSync(tmp, cacheFile)
  return { ...artifact, fromCache: false, cacheFile }
}

/** The TestToken artifact: constructor(string name, string symbol, uint8 decimals, uint256 supply). */
export function testTokenArtifact(opts: { cacheDir?: string } = {}): CompileResult {
  return compileSolidity({ 'TestToken.sol': TEST_TOKEN_SOURCE }, { file: 'TestToken.sol', name: 'TestToken' }, opts)
}

/** viem clients for a local chain; the wallet client only when a private key is given. */
export function clientsFor(rpcUrl: string, chainId: number, privateKey?: Hex) {
  const chain = defineChain({
    id: chainId,
    name: `local ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  })
  const transport = http(rpcUrl)
  const pub = createPublicClient({ chain, transport, pollingInterval: 50, cacheTime: 0 })
  const wallet = privateKey ? createWalletClient({ chain, transport, account: privateKeyToAccount(privateKey), pollingInterval: 50 }) : undefined
  return { chain, pub, wallet }
}

/**
 * Gas for a write, estimated then raised by 30%: anvil mines several blocks
 * with one timestamp, and an estimate made in one second can fall short in
 * the next (see DEPENDENCIES.md).
 */
export function withGasHeadroom(estimate: bigint): bigint {
  return (estimate * 13n) / 10n
}

export interface DeployTestTokenOptions {
  rpcUrl: string
  chainId: number
  deployerKey: Hex
  name: string
  symbol: string
  decimals: number
  /** Minted to the deployer, in the token's smallest unit. */
  supply: bigint
}

/** Deploys a TestToken, waits for the receipt and returns the token's address. */
export async function deployTestToken(opts: DeployTestTokenOptions): Promise<Address> {
  const { abi, bytecode } = testTokenArtifact()
  const { pub, wallet } = clientsFor(opts.rpcUrl, opts.chainId, opts.deployerKey)
  const args = [opts.name, opts.symbol, opts.decimals, opts.supply] as const
  const gas = withGasHeadroom(await pub.estimateGas({ account: wallet!.account, data: encodeDeployData({ abi, bytecode, args }) }))
  const hash = await wallet!.deployContract({ abi, bytecode, args, gas })
  const receipt = await pub.waitForTransactionReceipt({ hash, pollingInterval: 50 })
  if (receipt.status !== 'success' || !receipt.contractAddress) throw new Error(`TestToken deployment reverted (tx ${hash}, chain ${opts.chainId})`)
  return receipt.contractAddress
}

/** Sends approve/transfer from `fromKey` with gas headroom and waits for a successful receipt. */
export async function erc20Write(opts: {
  rpcUrl: string
  chainId: number
  fromKey: Hex
  token: Address
  functionName: 'approve' | 'transfer'
  args: readonly [Address, bigint]
}): Promise<Hex> {
  const { pub, wallet } = clientsFor(opts.rpcUrl, opts.chainId, opts.fromKey)
  const call = { address: opts.token, abi: erc20Abi, functionName: opts.functionName, args: opts.args } as const
  const gas = withGasHeadroom(await pub.estimateContractGas({ ...call, account: wallet!.account }))
  const hash = await wallet!.writeContract({ ...call, gas })
  const receipt = await pub.waitForTransactionReceipt({ hash, pollingInterval: 50 })
  if (receipt.status !== 'success') throw new Error(`${opts.functionName} reverted (tx ${hash})`)
  return hash
}

function reader(rpcUrl: string) {
  return createPublicClient({ transport: http(rpcUrl), cacheTime: 0 })
}

/** balanceOf(account). The chain id argument is optional (reads do not need it). */
export function erc20Balance(rpcUrl: string, token: Address, account: Address): Promise<bigint>
export function erc20Balance(rpcUrl: string, chainId: number, token: Address, account: Address): Promise<bigint>
export function erc20Balance(rpcUrl: string, ...rest: [Address, Address] | [number, Address, Address]): Promise<bigint> {
  const [token, account] = (typeof rest[0] === 'number' ? rest.slice(1) : rest) as [Address, Address]
  return reader(rpcUrl).readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [account] })
}

/** allowance(owner, spender). The chain id argument is optional (reads do not need it). */
export function erc20Allowance(rpcUrl: string, token: Address, owner: Address, spender: Address): Promise<bigint>
export function erc20Allowance(rpcUrl: string, chainId: number, token: Address, owner: Address, spender: Address): Promise<bigint>
export function erc20Allowance(rpcUrl: string, ...rest: [Address, Address, Address] | [number, Address, Address, Address]): Promise<bigint> {
  const [token, owner, spender] = (typeof rest[0] === 'number' ? rest.slice(1) : rest) as [Address, Address, Address]
  return reader(rpcUrl).readContract({ address: token, abi: erc20Abi, functionName: 'allowance', args: [owner, spender] })
}
