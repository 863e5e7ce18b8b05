// countersign-mcp: the MCP server over stdio. stdout carries the protocol;
// everything for people goes to stderr.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { CountersignClient } from '@countersign/client'
import { ConfigError, configFromEnv } from './config.js'
import { createMcpServer } from './server.js'

const USAGE = `usage: countersign-mcp   (an MCP server over stdio, started by an MCP host; not interactive)

Environment:
  COUNTERSIGN_URL                gateway URL (default http://127.0.0.1:3100)
  COUNTERSIGN_WALLET             default wallet address for the tools
  COUNTERSIGN_CHAIN_ID           default chain: 1, 10, 42161 or 8453 (default 8453)
  COUNTERSIGN_V3_ROUTER_<id>     swap router of a chain (a local deployment)
  COUNTERSIGN_MAX_GAS_WEI        gas cap of every intent in wei (default 0.01 ETH)
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
  const server = createMcpServer({ client: new CountersignClient({ url: config.url }), config })
  await server.connect(new StdioServerTransport())
  process.stderr.write(`countersign-mcp: serving ${config.url} (chain ${config.chainId}${config.wallet ? `, wallet ${config.wallet}` : ''})\n`)
  return -1
}
