import {
  AbiDecodingDataSizeTooSmallError,
  AbiDecodingZeroDataError,
  BaseError,
  ContractFunctionRevertedError,
  ContractFunctionZeroDataError,
  erc20Abi,
  type Address,
} from 'viem'
import {
  NATIVE_TOKEN_ADDRESS,
  SUPPORTED_CHAIN_IDS,
  balanceParamsSchema,
  balanceQuerySchema,
  checksumProblem,
  toChecksumAddress,
  txHashParamsSchema,
  txReceiptQuerySchema,
  type Hex,
} from '@countersign/shared'
import type { ChainClient, ChainClients } from '../chain/chainClients.js'
import { rpcFailure } from '../chain/chainClients.js'
import { simpleErrorBody, simpleErrorSchema, validationErrorBody, validationErrorSchema } from '@countersign/shared/http/errorBodies'
import { closed, described, int, nullableStr, str } from '@countersign/shared/http/schemaParts'
import { HttpError } from '@countersign/shared/http/errors'
import type { TypedRoutes } from '@countersign/shared/http/typeProvider'

import { addressSchema, noRpcOrRpcError, txHashSchema } from './contractParts.js'

export const receiptRouteSchema = {
  operationId: 'receipt',
  params: txHashParamsSchema,
  querystring: txReceiptQuerySchema,
  response: {
    200: described(
      'Receipt',
      closed({
        txHash: txHashSchema,
        status: { enum: ['success', 'reverted'] },
        blockNumber: int,
        gasUsed: str,
        from: addressSchema,
        to: nullableStr,
        chainId: int,
        effectiveGasPrice: str,
        transactionHash: { ...txHashSchema, description: 'the same as txHash, under the JSON-RPC receipt name' },
        blockHash: txHashSchema,
        contractAddress: { ...nullableStr, description: 'the contract a deployment created; null otherwise' },
      }),
    ),
    400: described('Bad hash or chainId', validationErrorSchema),
    404: described('not_found: pending or unknown', simpleErrorSchema),
    502: noRpcOrRpcError,
  },
}

/** How a contract call the node carried out answered as no ERC-20's balanceOf does; null for any other failure (the node's). */
function answerNoErc20Gives(err: unknown): string | null {
  if (!(err instanceof BaseError)) return null
  const cause = err.walk((e) => [ContractFunctionZeroDataError, ContractFunctionRevertedError, AbiDecodingDataSizeTooSmallError, AbiDecodingZeroDataError].some((kind) => e instanceof kind))
  if (cause instanceof ContractFunctionRevertedError) return 'it reverted'
  if (cause instanceof ContractFunctionZeroDataError || cause instanceof AbiDecodingZeroDataError) return 'it returned no data'
  return cause === null ? null : 'it returned fewer bytes than a uint256'
}

export const balanceRouteSchema = {
  operationId: 'balance',
  params: balanceParamsSchema,
  querystring: balanceQuerySchema,
  response: {
    200: described('Balance (chainId echoes the chain used)', closed({ token: addressSchema, account: addressSchema, balance: str, chainId: int })),
    400: described('Bad parameters; also a missing chainId when several chains are configured and 8453 is not', validationErrorSchema),
    502: noRpcOrRpcError,
  },
}

const badRequest = (message: string) => new HttpError(400, validationErrorBody(message))

/** `?chainId=` must name a supported chain; the schema already checked it is numeric. */
function requestedChain(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined
  const id = Number(raw)
  if (!(SUPPORTED_CHAIN_IDS as readonly number[]).includes(id)) {
    throw badRequest(`querystring/chainId must be one of ${SUPPORTED_CHAIN_IDS.join(', ')}`)
  }
  return id
}

/**
 * The chain of a balance request that names none (DESIGN.md §6 "client
 * compatibility"): Base (8453) when it is configured, else the only configured
 * chain; with several and no Base, the client must choose.
 */
export function defaultBalanceChain(configured: readonly number[]): number {
  if (configured.length === 0) {
    throw new HttpError(502, simpleErrorBody('no_rpc_client', 'no RPC endpoint is configured for any chain; set SERVICE_RPC_URL_{chainId}'))
  }
  if (configured.includes(DEFAULT_BALANCE_CHAIN)) return DEFAULT_BALANCE_CHAIN
  if (configured.length > 1) {
    throw badRequest(`querystring/chainId is required: ${DEFAULT_BALANCE_CHAIN} is not configured and several chains are; one of ${configured.join(', ')}`)
  }
  return configured[0]!
}

const DEFAULT_BALANCE_CHAIN = 8453

export const chainReadRoutes: TypedRoutes<{ chains: ChainClients }> = async (app, { chains }) => {
  app.get(
    '/v1/tx/:hash',
    { schema: receiptRouteSchema },
    async (req) => {
      const { hash } = req.params
      const chainId = requestedChain(req.query.chainId)
      const candidates: ChainClient[] = chainId !== undefined ? [chains.get(chainId)] : chains.configured().map((c) => chains.get(c))
      if (candidates.length === 0) {
        throw new HttpError(502, simpleErrorBody('no_rpc_client', 'no RPC endpoint is configured for any chain; set SERVICE_RPC_URL_{chainId}'))
      }
      const lookups = await Promise.all(
        candidates.map(async (c) => {
          try {
            return { chain: c, receipt: await c.client.getTransactionReceipt({ hash }) }
          } catch (err) {
            const name = (err as { name?: string }).name
            if (name === 'TransactionReceiptNotFoundError') return { chain: c, receipt: null }
            return { chain: c, error: err }
          }
        }),
      )
      const found = lookups.find((l) => 'receipt' in l && l.receipt)
      if (found && 'receipt' in found && found.receipt) {
        const r = found.receipt
        // A node may answer a receipt without fields every receipt has: its failure, not a 500 here.
        const missing = (['transactionHash', 'blockHash', 'blockNumber', 'gasUsed', 'effectiveGasPrice', 'from', 'status'] as const).filter((f) => r[f] === undefined || r[f] === null)
        if (missing.length > 0) {
          throw new HttpError(502, simpleErrorBody('rpc_error', `chain ${found.chain.chainId}: the node's receipt for ${hash} lacks ${missing.join(', ')}`))
        }
        return {
          txHash: r.transactionHash,
          status: r.status === 'success' ? 'success' : 'reverted',
          blockNumber: Number(r.blockNumber),
          gasUsed: r.gasUsed.toString(),
          from: r.from,
          to: r.to,
          chainId: found.chain.chainId,
          effectiveGasPrice: r.effectiveGasPrice.toString(),
          // The JSON-RPC receipt's own names, which clients written against
          // eth_getTransactionReceipt read (DESIGN.md §6 "client compatibility").
          transactionHash: r.transactionHash,
          blockHash: r.blockHash,
          contractAddress: r.contractAddress ?? null,
        }
      }
      const failed = lookups.filter((l) => 'error' in l)
      if (failed.length === lookups.length) {
        const first = failed[0] as { chain: ChainClient; error: unknown }
        throw rpcFailure(first.error, first.chain.chainId)
      }
      throw new HttpError(404, simpleErrorBody('not_found', `no receipt for ${hash} (pending or unknown)`))
    },
  )

  app.get(
    '/v1/balance/:token/:account',
    { schema: balanceRouteSchema },
    async (req) => {
      const { token, account } = req.params
      // viem would refuse such an address deep in the call, which would read as an RPC failure.
      for (const [name, address] of [['token', token], ['account', account]] as const) {
        const problem = checksumProblem(`params/${name}`, address)
        if (problem) throw badRequest(problem)
      }
      const chainId = requestedChain(req.query.chainId) ?? defaultBalanceChain(chains.configured())
      const chain = chains.get(chainId)
      const native = token.toLowerCase() === NATIVE_TOKEN_ADDRESS.toLowerCase()
      let balance: bigint
      try {
        // viem takes the EIP-55 form (it refuses all-upper-case addresses); the answer echoes them as given.
        const holder = toChecksumAddress(account)
        if (native) {
          balance = await chain.client.getBalance({ address: holder })
        } else {
          const contract = toChecksumAddress(token)
          const code = await chain.client.getCode({ address: contract })
          if (!code || code === '0x') throw badRequest(`token ${token} has no contract code on chain ${chainId}; it is not an ERC-20`)
          try {
            balance = await chain.client.readContract({ address: contract, abi: erc20Abi, functionName: 'balanceOf', args: [holder] })
          } catch (err) {
            // The node answered: the contract has no balanceOf that answers as an ERC-20's does (found by review: a 502 rpc_error, which clients read as an outage).
            const answer = answerNoErc20Gives(err)
            if (answer !== null) throw badRequest(`token ${token} did not answer balanceOf as an ERC-20 does on chain ${chainId} (${answer}); it is not an ERC-20`)
            throw err
          }
        }
      } catch (err) {
        if (err instanceof HttpError) throw err
        throw rpcFailure(err, chainId)
      }
      return { token, account, balance: balance.toString(), chainId }
    },
  )
}
