#!/usr/bin/env node
// Deploys the real Uniswap v3 contracts from their npm artifacts onto a local
// chain (anvil): WETH9 (a Solidity 0.8 port, compiled with solc-js), two
// ERC-20 test tokens, UniswapV3Factory, NonfungiblePositionManager,
// SwapRouter02 and QuoterV2; creates the TKA/TUSD pool at fee 3000 priced at
// 1 TKA = 2 TUSD with deep full-range liquidity, and funds wallets with both
// tokens. Shared by the dev stack (npm start), the demo, system tests and
// benchmarks.
//
//   node scripts/uniswap-fixture.mjs --rpc URL --chain-id N --deployer-key-env VAR [--fund 0x..,0x..] [--out file.json]
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { createPublicClient, createWalletClient, defineChain, encodeAbiParameters, encodeDeployData, erc20Abi, getAddress, getCreate2Address, http, keccak256, maxUint256, zeroAddress } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'

const require = createRequire(import.meta.url)
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const FEE = 3000
const TICK_SPACING = 60
const POOL_INIT_CODE_HASH = '0xe34f199b19b2b4f47f68442619d555527d244f78a3297ea89325f843f87b8b54'

/**
 * A contract as deployed here: its ABI and creation code (solc's output, or a
 * Hardhat artifact's abi and bytecode fields).
 * @typedef {{ abi: import('viem').Abi, bytecode: import('viem').Hex }} Artifact
 */

const SOURCES = {
  'WETH9.sol': `// SPDX-License-Identifier: GPL-3.0
pragma solidity ^0.8.20;
// WETH9's interface and behaviour, written for Solidity 0.8 (the original is 0.4 source).
contract WETH9 {
    string public name = "Wrapped Ether";
    string public symbol = "WETH";
    uint8 public decimals = 18;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);
    event Deposit(address indexed to, uint256 value);
    event Withdrawal(address indexed from, uint256 value);
    receive() external payable { deposit(); }
    function deposit() public payable { balanceOf[msg.sender] += msg.value; emit Deposit(msg.sender, msg.value); }
    function withdraw(uint256 amount) external {
        require(balanceOf[msg.sender] >= amount, "WETH: balance");
        balanceOf[msg.sender] -= amount;
        emit Withdrawal(msg.sender, amount);
        (bool ok, ) = msg.sender.call{value: amount}("");
        require(ok, "WETH: send");
    }
    function totalSupply() external view returns (uint256) { return address(this).balance; }
    function approve(address spender, uint256 amount) external returns (bool) {
        allowance[msg.sender][spender] = amount;
        emit Approval(msg.sender, spender, amount);
        return true;
    }
    function transfer(address to, uint256 amount) external returns (bool) { return transferFrom(msg.sender, to, amount); }
    function transferFrom(address from, address to, uint256 amount) public returns (bool) {
        require(balanceOf[from] >= amount, "WETH: balance");
        if (from != msg.sender && allowance[from][msg.sender] != type(uint256).max) {
            require(allowance[from][msg.sender] >= amount, "WETH: allowance");
            allowance[from][msg.sender] -= amount;
        }
        balanceOf[from] -= amount;
        balanceOf[to] += amount;
        emit Transfer(from, to, amount);
        return true;
    }
}
`,
  'FixtureToken.sol': `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
contract FixtureToken is ERC20 {
    uint8 private immutable _decimals;
    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 supply) ERC20(name_, symbol_) {
        _decimals = decimals_;
        _mint(msg.sender, supply);
    }
    function decimals() public view override returns (uint8) { return _decimals; }
}
`,
}

/**
 * solc-js output, cached under test/artifacts/solc by a hash of the sources (compiling takes seconds).
 * @returns {{ weth: Artifact, token: Artifact }}
 */
function compile() {
  const key = createHash('sha256').update(JSON.stringify(SOURCES)).digest('hex').slice(0, 16)
  const cacheDir = path.join(root, 'test/artifacts/solc')
  const cached = path.join(cacheDir, `uniswap-fixture-${key}.json`)
  if (existsSync(cached)) return JSON.parse(readFileSync(cached, 'utf8'))
  // solc's own declarations type compile as any: what this file relies on.
  /** @type {{ compile(input: string, callbacks: { import(path: string): { contents: string } | { error: string } }): string }} */
  const solc = require('solc')
  const ozDir = path.dirname(require.resolve('@openzeppelin/contracts/package.json'))
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(Object.entries(SOURCES).map(([f, content]) => [f, { content }])),
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'cancun', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  }
  const findImports = (/** @type {string} */ p) =>
    p.startsWith('@openzeppelin/contracts/') ? { contents: readFileSync(path.join(ozDir, p.slice('@openzeppelin/contracts/'.length)), 'utf8') } : { error: `not found: ${p}` }
  // solc's standard JSON output, as far as it is read here.
  /** @type {{ errors?: { severity: string, formattedMessage: string }[], contracts?: Record<string, Record<string, { abi: import('viem').Abi, evm: { bytecode: { object: string } } }>> }} */
  const out = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }))
  const errors = (out.errors ?? []).filter((e) => e.severity === 'error')
  if (errors.length) throw new Error(errors.map((e) => e.formattedMessage).join('\n'))
  /**
   * @param {string} file
   * @param {string} name
   * @returns {Artifact}
   */
  const pick = (file, name) => {
    const contract = out.contracts?.[file]?.[name]
    if (!contract) throw new Error(`solc did not output ${file}:${name}`)
    return { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` }
  }
  const artifacts = { weth: pick('WETH9.sol', 'WETH9'), token: pick('FixtureToken.sol', 'FixtureToken') }
  mkdirSync(cacheDir, { recursive: true })
  writeFileSync(cached, JSON.stringify(artifacts))
  return artifacts
}

/**
 * Integer square root (Newton), for sqrtPriceX96.
 * @param {bigint} n
 * @returns {bigint}
 */
function isqrt(n) {
  if (n < 2n) return n
  let x = n
  let y = (x + 1n) / 2n
  while (y < x) {
    x = y
    y = (x + n / x) / 2n
  }
  return x
}

/**
 * @typedef {import('viem').Address} Address
 * @typedef {object} UniswapFixtureOptions
 * @property {string} rpcUrl
 * @property {number} chainId
 * @property {import('viem').Hex} deployerKey funded account that deploys everything and holds the LP position
 * @property {string[]} [fundWallets] each receives fundAmount TKA and fundAmount TUSD (no router approval)
 * @property {bigint | number} [fundAmount] whole tokens per token and wallet, scaled to each token's decimals (default 1,000)
 * @property {string} [outFile] where to write the result as JSON (parent folders are created)
 * @typedef {object} UniswapFixture
 * @property {number} chainId
 * @property {Address} weth
 * @property {Address} tokenA "Token A" (TKA), 18 decimals
 * @property {Address} tokenB "Test USD" (TUSD), 6 decimals
 * @property {Address} factory
 * @property {Address} positionManager
 * @property {Address} swapRouter02
 * @property {Address} quoterV2
 * @property {Address} pool the TKA/TUSD pool at fee 3000
 * @property {3000} fee
 * @property {{ tokenA: 18, tokenB: 6 }} tokenDecimals
 */

/**
 * Deploys WETH9, the two test tokens, UniswapV3Factory,
 * NonfungiblePositionManager, SwapRouter02 and QuoterV2; creates the TKA/TUSD
 * pool at 1 TKA = 2 TUSD with deep full-range liquidity; funds fundWallets.
 * Every address in the result is checksummed.
 * @param {UniswapFixtureOptions} opts
 * @returns {Promise<UniswapFixture>}
 */
export async function deployUniswapFixture({ rpcUrl, chainId, deployerKey, fundWallets = [], fundAmount = 1000n, outFile }) {
  const chain = defineChain({ id: chainId, name: 'local', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [rpcUrl] } } })
  const transport = http(rpcUrl)
  const account = privateKeyToAccount(deployerKey)
  const pub = createPublicClient({ chain, transport, pollingInterval: 25, cacheTime: 0 })
  const wallet = createWalletClient({ chain, transport, account, pollingInterval: 25 })
  const { weth: WETH, token: TOKEN } = compile()
  // Hardhat artifacts: JSON with (among others) the abi and bytecode fields.
  const A = (/** @type {string} */ p) => /** @type {Artifact} */ (require(p))
  const Factory = A('@uniswap/v3-core/artifacts/contracts/UniswapV3Factory.sol/UniswapV3Factory.json')
  const Pool = A('@uniswap/v3-core/artifacts/contracts/UniswapV3Pool.sol/UniswapV3Pool.json')
  const NPM = A('@uniswap/v3-periphery/artifacts/contracts/NonfungiblePositionManager.sol/NonfungiblePositionManager.json')
  const Router02 = A('@uniswap/swap-router-contracts/artifacts/contracts/SwapRouter02.sol/SwapRouter02.json')
  const QuoterV2 = A('@uniswap/swap-router-contracts/artifacts/contracts/lens/QuoterV2.sol/QuoterV2.json')
  if (keccak256(Pool.bytecode) !== POOL_INIT_CODE_HASH) throw new Error('the pool bytecode does not match the periphery init code hash')

  /**
   * @param {import('viem').Hash} hash
   * @param {string} what
   */
  const mined = async (hash, what) => {
    const r = await pub.waitForTransactionReceipt({ hash })
    if (r.status !== 'success') throw new Error(`${what} reverted (${hash})`)
    return r
  }
  // anvil mines several blocks per timestamp; a pool's oracle write then costs more than estimated.
  // Every transaction here, deployments included, gets 30% over the estimate.
  const headroom = (/** @type {bigint} */ gas) => (gas * 13n) / 10n
  /**
   * @param {string} name
   * @param {Artifact} artifact
   * @param {readonly unknown[]} [args] the constructor's
   * @returns {Promise<Address>}
   */
  const deploy = async (name, { abi, bytecode }, args = []) => {
    const gas = headroom(await pub.estimateGas({ account, data: encodeDeployData({ abi, bytecode, args }) }))
    const receipt = await mined(await wallet.deployContract({ abi, bytecode, args, gas }), `deploy ${name}`)
    if (!receipt.contractAddress) throw new Error(`deploy ${name}: no contract address in the receipt`)
    return getAddress(receipt.contractAddress)
  }
  /**
   * @param {Address} address
   * @param {import('viem').Abi} abi
   * @param {string} functionName
   * @param {readonly unknown[]} [args]
   * @param {bigint} [value]
   */
  const write = async (address, abi, functionName, args = [], value) => {
    const gas = headroom(await pub.estimateContractGas({ address, abi, functionName, args, value, account }))
    return mined(await wallet.writeContract({ address, abi, functionName, args, value, gas }), functionName)
  }

  const weth = await deploy('WETH9', WETH)
  const tokenA = await deploy('Token A', TOKEN, ['Token A', 'TKA', 18, 10n ** 9n * 10n ** 18n])
  const tokenB = await deploy('Test USD', TOKEN, ['Test USD', 'TUSD', 6, 10n ** 9n * 10n ** 6n])
  const factory = await deploy('UniswapV3Factory', Factory)
  const positionManager = await deploy('NonfungiblePositionManager', NPM, [factory, weth, zeroAddress])
  const swapRouter02 = await deploy('SwapRouter02', Router02, [zeroAddress, factory, positionManager, weth])
  const quoterV2 = await deploy('QuoterV2', QuoterV2, [factory, weth])

  // Price: 1 TKA (1e18 units) = 2 TUSD (2e6 units). Uniswap prices token1 in
  // token0 units: price = amount1 / amount0 in raw units, and
  // sqrtPriceX96 = sqrt(price) * 2^96 = sqrt(amount1 * 2^192 / amount0).
  // The 12-decimal gap lives in the raw amounts: with TKA as token0 the price
  // is 2e6 / 1e18 = 2e-12 TUSD units per TKA unit (sqrtPriceX96 ≈ 1.12e23);
  // with TUSD as token0 it is 1e18 / 2e6 = 5e11 (sqrtPriceX96 ≈ 5.6e34).
  const aFirst = BigInt(tokenA) < BigInt(tokenB)
  const [token0, token1] = aFirst ? [tokenA, tokenB] : [tokenB, tokenA]
  /**
   * Amounts of TKA and of TUSD, in token0 / token1 order.
   * @param {bigint} a
   * @param {bigint} b
   * @returns {[bigint, bigint]}
   */
  const ordered = (a, b) => (aFirst ? [a, b] : [b, a])
  const [raw0, raw1] = ordered(10n ** 18n, 2n * 10n ** 6n)
  const sqrtPriceX96 = isqrt((raw1 << 192n) / raw0)
  await write(positionManager, NPM.abi, 'createAndInitializePoolIfNecessary', [token0, token1, FEE, sqrtPriceX96])
  const pool = await pub.readContract({ address: factory, abi: Factory.abi, functionName: 'getPool', args: [token0, token1, FEE] })
  if (typeof pool !== 'string') throw new Error(`getPool answered ${String(pool)}, not an address`)
  const expected = getCreate2Address({
    from: factory,
    bytecodeHash: POOL_INIT_CODE_HASH,
    salt: keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'address' }, { type: 'uint24' }], [token0, token1, FEE])),
  })
  if (getAddress(pool) !== getAddress(expected)) throw new Error('the pool address does not match CREATE2')

  // Deep full-range liquidity: 1,000,000 TKA against 2,000,000 TUSD.
  for (const t of [tokenA, tokenB]) await write(t, erc20Abi, 'approve', [positionManager, maxUint256])
  const [depth0, depth1] = ordered(10n ** 6n * 10n ** 18n, 2n * 10n ** 6n * 10n ** 6n)
  const minTick = Math.ceil(-887272 / TICK_SPACING) * TICK_SPACING
  const maxTick = Math.floor(887272 / TICK_SPACING) * TICK_SPACING
  await write(positionManager, NPM.abi, 'mint', [
    {
      token0,
      token1,
      fee: FEE,
      tickLower: minTick,
      tickUpper: maxTick,
      amount0Desired: depth0,
      amount1Desired: depth1,
      amount0Min: 0n,
      amount1Min: 0n,
      recipient: account.address,
      deadline: BigInt(Math.floor(Date.now() / 1000) + 3600),
    },
  ])

  const whole = BigInt(fundAmount)
  for (const w of fundWallets) {
    await write(tokenA, erc20Abi, 'transfer', [getAddress(w), whole * 10n ** 18n])
    await write(tokenB, erc20Abi, 'transfer', [getAddress(w), whole * 10n ** 6n])
  }

  /** @type {UniswapFixture} */
  const result = { chainId, weth, tokenA, tokenB, factory, positionManager, swapRouter02, quoterV2, pool: getAddress(pool), fee: FEE, tokenDecimals: { tokenA: 18, tokenB: 6 } }
  if (outFile) {
    mkdirSync(path.dirname(outFile), { recursive: true })
    writeFileSync(outFile, JSON.stringify(result, null, 2) + '\n')
  }
  return result
}

/**
 * @param {string} s
 * @returns {s is import('viem').Hex}
 */
function isPrivateKey(s) {
  return /^0x[0-9a-fA-F]{64}$/.test(s)
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const arg = (/** @type {string} */ name) => {
    const i = process.argv.indexOf(name)
    return i === -1 ? undefined : process.argv[i + 1]
  }
  const keyVar = arg('--deployer-key-env')
  const deployerKey = keyVar ? process.env[keyVar] : undefined
  const rpcUrl = arg('--rpc')
  const chainId = arg('--chain-id')
  if (!rpcUrl || !chainId || !deployerKey) {
    console.error('usage: node scripts/uniswap-fixture.mjs --rpc URL --chain-id N --deployer-key-env VAR [--fund 0x..,0x..] [--out file.json]\n(the deployer key is read from the named environment variable, never from argv)')
    process.exit(2)
  }
  if (!isPrivateKey(deployerKey)) {
    console.error(`${keyVar} must hold the deployer's private key as 0x followed by 64 hex digits`)
    process.exit(2)
  }
  const result = await deployUniswapFixture({
    rpcUrl,
    chainId: Number(chainId),
    deployerKey,
    fundWallets: (arg('--fund') ?? '').split(',').filter(Boolean),
    outFile: arg('--out'),
  })
  console.log(JSON.stringify(result, null, 2))
}
