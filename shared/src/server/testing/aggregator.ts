// Calldata of the aggregator router's swap() for tests (unit tests and the
// local aggregator API server of the system tests).
import { encodeFunctionData, type Hex } from 'viem'
import { aggregatorRouterAbi } from '../../builders/aggregator.js'
import { USDC_BASE, WALLET, WETH_BASE } from './intents.js'

/** The executor of test quotes; the sold tokens go to it, as in the aggregator's own routes. */
export const TEST_EXECUTOR = '0x00000000000000000000000000000000000e8ec0'

export function aggregatorSwapCalldata(
  o: Partial<{ src: string; dst: string; receiver: string; amount: bigint; minReturn: bigint; executor: string; srcReceiver: string; flags: bigint; data: Hex }> = {},
): Hex {
  const executor = (o.executor ?? TEST_EXECUTOR) as Hex
  return encodeFunctionData({
    abi: aggregatorRouterAbi,
    functionName: 'swap',
    args: [
      executor,
      {
        srcToken: (o.src ?? USDC_BASE) as Hex,
        dstToken: (o.dst ?? WETH_BASE) as Hex,
        srcReceiver: (o.srcReceiver ?? executor) as Hex,
        dstReceiver: (o.receiver ?? WALLET) as Hex,
        amount: o.amount ?? 1_000_000n,
        minReturnAmount: o.minReturn ?? 5n,
        flags: o.flags ?? 0n,
      },
      o.data ?? '0x',
    ],
  })
}
