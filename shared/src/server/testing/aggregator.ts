// Calldata of the aggregator router's swap() for tests (unit tests and the
// local aggregator API server of the system tests).
import { encodeFunctionData, type Hex } from 'viem'
import { aggregatorRouterAbi } from '../../builders/aggregator.js'
import { USDC_BASE, WALLET, WETH_BASE } from './intents.js'

export function aggregatorSwapCalldata(o: Partial<{ src: string; dst: string; receiver: string; amount: bigint; minReturn: bigint }> = {}): Hex {
  return encodeFunctionData({
    abi: aggregatorRouterAbi,
    functionName: 'swap',
    args: [
      '0x00000000000000000000000000000000000e8ec0',
      {
        srcToken: (o.src ?? USDC_BASE) as Hex,
        dstToken: (o.dst ?? WETH_BASE) as Hex,
        srcReceiver: '0x00000000000000000000000000000000000e8ec0',
        dstReceiver: (o.receiver ?? WALLET) as Hex,
        amount: o.amount ?? 1_000_000n,
        minReturnAmount: o.minReturn ?? 5n,
        flags: 0n,
      },
      '0x',
    ],
  })
}
