// countersign-mcp: the MCP server over stdio. stdout carries the protocol;
// everything for people goes to stderr.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { CountersignClient } from '@countersign/client'
import { ConfigError, configFromEnv } from './config.js'
import { RecentSends } from './recentSends.js'
import { createMcpServer } from './server.js'

const USAGE = `usage: countersign-mcp   (an MCP server over stdio, started by an MCP host; not interactive)

Environment:
  COUNTERSIGN_URL                gateway URL (default http://127.0.0.1:3100)
  COUNTERSIGN_WALLET             default wallet address for the tools
  COUNTERSIGN_CHAIN_ID           default chain: 1, 10, 42161 or 8453 (default 8453)
  COUNTERSIGN_V3_ROUTER_<id>     swap router of a chain (a local deployment)
  COUNTERSIGN_MAX_GAS_WEI        gas cap of every intent in wei (default 0.01 ETH)
  COUNTERSIGN_SEND_TIMEOUT_MS    how long one sign-and-send call waits (default 120000)
Host entry: command "npx", args ["--no-install", "countersign-mcp"], env as above.`

export async function main(argv: string[], env: Record<string, string | undefined>): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(USAGE + '\n')
    return 0
  }
  let config
  try {
    config = configFromEnv(env)
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`countersign-mcp: ${err.message}\n`)
      return 2
    }
    throw err
  }
  const client = new CountersignClient({ url: config.url, ...(config.sendTimeoutMs !== undefined ? { sendTimeoutMs: config.sendTimeoutMs } : {}) })
  const server = createMcpServer({ client, config, recentSends: new RecentSends() })
  // The host closed our stdout (it went away): nothing can be answered any more, so leave quietly,
  // not with an unhandled EPIPE and a stack trace.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') process.exit(0)
    process.stderr.write(`countersign-mcp: stdout: ${err.message}\n`)
    process.exit(1)
  })
  // What the SDK drops (a line that is not JSON-RPC, a message over its size limit) is said on stderr,
  // where the host's log shows it.
  server.server.onerror = (err) => process.stderr.write(`countersign-mcp: ${err.message}\n`)
  server.server.onclose = () => process.stderr.write('countersign-mcp: the stdio connection closed\n')
  // The host closing our stdin is MCP's stdio shutdown: no request can come and no answer will be
  // read, so leave now rather than when the last tool call ends (an approval can wait 300 s). A call
  // cut short while waiting for an operator sends nothing (only that call would have sent); one
  // already in sign-and-send finishes in the gateway, which does not stop on a closed connection.
  process.stdin.once('end', () => {
    process.stderr.write('countersign-mcp: the host closed stdin; leaving\n')
    process.exit(0)
  })
  await server.connect(new StdioServerTransport())
  process.stderr.write(`countersign-mcp: serving ${config.url} (chain ${config.chainId}${config.wallet ? `, wallet ${config.wallet}` : ''})\n`)
  return -1
}
