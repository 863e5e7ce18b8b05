import { encodeFunctionData } from 'viem'
import type { ApproveAction, Hex, TransferAction } from '../types.js'
import { erc20CallsAbi } from './abis.js'
import { uint256 } from './amounts.js'

export function erc20TransferData(action: TransferAction): Hex {
  return encodeFunctionData({ abi: erc20CallsAbi, functionName: 'transfer', args: [action.to, uint256(action.amount, 'action.amount')] })
}

export function erc20ApproveData(action: ApproveAction): Hex {
  return encodeFunctionData({ abi: erc20CallsAbi, functionName: 'approve', args: [action.spender, uint256(action.amount, 'action.amount')] })
}
