// Compiles a small OpenZeppelin ERC-20 with solc-js (offline, bundled
// compiler) and deploys it to a test chain. The compiled artifact is cached
// under test/artifacts keyed by the source hash: solc takes seconds.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { createPublicClient, createWalletClient, defineChain, erc20Abi, http, type Abi, type Address, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { repoRoot } from './processes.js'

const require = createRequire(import.meta.url)

const TOKEN_SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
contract TestToken is ERC20 {
    uint8 private immutable _decimals;
    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply) ERC20(name_, symbol_) {
        _decimals = decimals_;
        _mint(msg.sender, supply);
    }
    function decimals() public view override returns (uint8) { return _decimals; }
}
`

export interface Artifact {
  abi: Abi
  bytecode: Hex
}

export function compileSolidity(sources: Record<string, string>, contract: { file: string; name: string }): Artifact {
  const key = createHash('sha256').update(JSON.stringify({ sources, contract })).digest('hex').slice(0, 16)
  const cacheDir = path.join(repoRoot, 'test/artifacts/solc')
  const cached = path.join(cacheDir, `${contract.name}-${key}.json`)
  if (existsSync(cached)) return JSON.parse(readFileSync(cached, 'utf8')) as Artifact
  const solc = require('solc') as { compile(input: string, opts: { import: (p: string) => unknown }): string }
  const ozDir = path.dirname(require.resolve('@openzeppelin/contracts/package.json'))
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(Object.entries(sources).map(([f, content]) => [f, { content }])),
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'cancun', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  }
  const findImports = (p: string) =>
    p.startsWith('@openzeppelin/contracts/')
      ? { contents: readFileSync(path.join(ozDir, p.slice('@openzeppelin/contracts/'.length)), 'utf8') }
      : { error: `not found: ${p}` }
  const out = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports })) as {
    errors?: Array<{ severity: string; formattedMessage: string }>
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>
  }
  const errors = (out.errors ?? []).filter((e) => e.severity === 'error')
  if (errors.length) throw new Error(errors.map((e) => e.formattedMessage).join('\n'))
  const c = out.contracts[contract.file]![contract.name]!
  const artifact: Artifact = { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` }
  mkdirSync(cacheDir, { recursive: true })
  writeFileSync(cached, JSON.stringify(artifact))
  return artifact
}

export function testTokenArtifact(): Artifact {
  return compileSolidity({ 'TestToken.sol': TOKEN_SOURCE }, { file: 'TestToken.sol', name: 'TestToken' })
}

export function clientsFor(rpcUrl: string, chainId: number, privateKey?: Hex) {
  const chain = defineChain({ id: chainId, name: `test ${chainId}`, nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [rpcUrl] } } })
  const transport = http(rpcUrl)
  const pub = createPublicClient({ chain, transport, pollingInterval: 50, cacheTime: 0 })
  const wallet = privateKey ? createWalletClient({ chain, transport, account: privateKeyToAccount(privateKey), pollingInterval: 50 }) : undefined
  return { chain, pub, wallet }
}

export async function deployTestToken(opts: { rpcUrl: string; chainId: number; deployerKey: Hex; name: string; symbol: string; decimals: number; supply: bigint }): Promise<Address> {
  const { abi, bytecode } = testTokenArtifact()
  const { pub, wallet } = clientsFor(opts.rpcUrl, opts.chainId, opts.deployerKey)
  const hash = await wallet!.deployContract({ abi, bytecode, args: [opts.name, opts.symbol, opts.decimals, opts.supply] })
  const receipt = await pub.waitForTransactionReceipt({ hash })
  if (receipt.status !== 'success' || !receipt.contractAddress) throw new Error(`token deploy failed: ${hash}`)
  return receipt.contractAddress
}

export async function erc20Balance(rpcUrl: string, chainId: number, token: Address, account: Address): Promise<bigint> {
  return clientsFor(rpcUrl, chainId).pub.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [account] })
}

export async function erc20Allowance(rpcUrl: string, chainId: number, token: Address, owner: Address, spender: Address): Promise<bigint> {
  return clientsFor(rpcUrl, chainId).pub.readContract({ address: token, abi: erc20Abi, functionName: 'allowance', args: [owner, spender] })
}
