// Types of uniswap-fixture.mjs beside it (the same as its JSDoc, which no
// compiler reads), for the tests that import it. Change both together.
import type { Address, Hex } from 'viem'

export interface UniswapFixtureOptions {
  rpcUrl: string
  chainId: number
  /** Funded account that deploys everything and holds the LP position. */
  deployerKey: Hex
  /** Each receives fundAmount TKA and fundAmount TUSD (no router approval). */
  fundWallets?: string[]
  /** Whole tokens per token and wallet, scaled to each token's decimals (default 1,000). */
  fundAmount?: bigint | number
  /** Where to write the result as JSON (parent folders are created). */
  outFile?: string
}

/** Every address is checksummed. */
export interface UniswapFixture {
  chainId: number
  weth: Address
  /** "Token A" (TKA), 18 decimals. */
  tokenA: Address
  /** "Test USD" (TUSD), 6 decimals. */
  tokenB: Address
  factory: Address
  positionManager: Address
  swapRouter02: Address
  quoterV2: Address
  /** The TKA/TUSD pool at fee 3000. */
  pool: Address
  fee: 3000
  tokenDecimals: { tokenA: 18; tokenB: 6 }
}

/**
 * Deploys WETH9, the two test tokens, UniswapV3Factory,
 * NonfungiblePositionManager, SwapRouter02 and QuoterV2; creates the TKA/TUSD
 * pool at 1 TKA = 2 TUSD with deep full-range liquidity; funds fundWallets.
 */
export function deployUniswapFixture(opts: UniswapFixtureOptions): Promise<UniswapFixture>
