// The settings more than one process reads, parsed one way for all of them.
import path from 'node:path'
import { SUPPORTED_CHAIN_IDS, type ChainId } from '../types.js'
import { ConfigError } from './configError.js'
import { readVariable, type Env } from './read.js'
import type { LogLevel } from './variables.js'

export const DEFAULT_GATEWAY_PORT = 3100
export const DEFAULT_APPROVER_PORT = 3101
export const LOOPBACK_HOST = '127.0.0.1'

/** SERVICE_DATA_DIR, absolute (default ./data). */
export function readDataDir(env: Env): string {
  return readVariable(env, 'SERVICE_DATA_DIR') ?? path.resolve('data')
}

/**
 * A command's --data-dir value, absolute. An empty value is refused: path.resolve
 * would make it the working directory, and a CLI would then read or create
 * keys, tokens or logs wherever it happened to be started.
 */
export function dataDirOption(value: string): string {
  if (value.trim() === '') throw new ConfigError('--data-dir needs a directory (it was given empty)')
  return path.resolve(value)
}

export function readLogLevel(env: Env): LogLevel {
  return readVariable(env, 'SERVICE_LOG_LEVEL') ?? 'info'
}

export interface ListenAddress {
  host: string
  port: number
}

/** The gateway's public HTTP address: SERVICE_HOST (default 127.0.0.1) and SERVICE_PORT (default 3100). */
export function readGatewayListen(env: Env): ListenAddress {
  return { host: readVariable(env, 'SERVICE_HOST') ?? LOOPBACK_HOST, port: readVariable(env, 'SERVICE_PORT') ?? DEFAULT_GATEWAY_PORT }
}

/**
 * The approver's own HTTP address: SERVICE_APPROVER_HOST (default 127.0.0.1,
 * whatever SERVICE_HOST says: exposing the gateway never exposes the
 * approver) and SERVICE_APPROVER_PORT (default 3101).
 */
export function readApproverListen(env: Env): ListenAddress {
  return { host: readVariable(env, 'SERVICE_APPROVER_HOST') ?? LOOPBACK_HOST, port: readVariable(env, 'SERVICE_APPROVER_PORT') ?? DEFAULT_APPROVER_PORT }
}

/** Where another process on this machine reaches a listener: a wildcard address is reached on loopback. */
export function localUrlOf(listen: ListenAddress): string {
  const host = listen.host === '0.0.0.0' || listen.host === '::' ? LOOPBACK_HOST : listen.host
  return `http://${host.includes(':') ? `[${host}]` : host}:${listen.port}`
}

export interface RpcUrl {
  chainId: ChainId
  url: string
  /** The variable it came from, so errors can name it. */
  variable: string
}

/** Legacy variable that serves chain 8453 when SERVICE_RPC_URL_8453 is unset (DESIGN.md §3). */
export const LEGACY_BASE_RPC_VAR = 'BASE_RPC_URL'

/**
 * SERVICE_RPC_URL_{chainId} for each supported chain, BASE_RPC_URL standing
 * in for 8453; only configured chains appear. One for a chain countersign
 * does not support is refused, naming it: found by review, a
 * SERVICE_RPC_URL_137 was ignored by the services while the launcher took it
 * for a configured chain, and the stack ran with no chain at all.
 */
export function readRpcUrls(env: Env): RpcUrl[] {
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith('SERVICE_RPC_URL_') || !value?.trim() || SUPPORTED_CHAIN_IDS.some((id) => name === `SERVICE_RPC_URL_${id}`)) continue
    // Exactly the names read below: "SERVICE_RPC_URL_08453" was taken for chain 8453 here and read by nothing.
    throw new ConfigError(
      `${name} names no chain countersign supports (it reads SERVICE_RPC_URL_${SUPPORTED_CHAIN_IDS.join(', SERVICE_RPC_URL_')}); rename or unset it`,
    )
  }
  const legacy = readVariable(env, LEGACY_BASE_RPC_VAR)
  const urls: RpcUrl[] = []
  for (const chainId of SUPPORTED_CHAIN_IDS) {
    const variable = `SERVICE_RPC_URL_${chainId}`
    const url = readVariable(env, 'SERVICE_RPC_URL_{chainId}', variable)
    if (url) urls.push({ chainId, url, variable })
    else if (chainId === 8453 && legacy) urls.push({ chainId, url: legacy, variable: LEGACY_BASE_RPC_VAR })
  }
  return urls
}
