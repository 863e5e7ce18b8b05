import { specOf, type TokenFact, type TxIntent } from '@countersign/shared'
import { applyTokenFacts } from '@countersign/shared/server'
import type { ChainFacts } from '../preflight/chainFacts.js'
import type { ChainClients } from './chainClients.js'

export interface TokenFactsReader {
  /** The intent's tokens as the chain describes them; null when the chain has no RPC. */
  read(intent: TxIntent): Promise<TokenFact[] | null>
  /** The intent with the chain's symbols and decimals, for descriptions; a token whose facts could not be read in raw units (unchanged without an RPC). */
  shown(intent: TxIntent): Promise<TxIntent>
}

/**
 * symbol() and decimals() of an intent's tokens, through the preflight's
 * cache (a token's are constants). A token whose lookup fails or that has no
 * code is left out: the text then shows it by address in raw units (the
 * preflight warns about a token without code), and nothing is invented for it.
 */
export function createTokenFactsReader(chains: ChainClients, facts: ChainFacts, timeoutMs = 5000): TokenFactsReader {
  const read = async (intent: TxIntent): Promise<TokenFact[] | null> => {
    const { chainId } = intent.chain
    if (!chains.has(chainId)) return null
    const { client } = chains.get(chainId)
    const tokens = specOf(intent.action).tokens(intent.action)
    const found = await Promise.all(
      tokens.map((t) =>
        Promise.race([facts.token(client, chainId, t.address), new Promise<null>((r) => setTimeout(() => r(null), timeoutMs).unref())]).then(
          (f): TokenFact | null => (f && f.hasCode ? { address: t.address, symbol: f.symbol, decimals: f.decimals } : null),
          () => null,
        ),
      ),
    )
    return found.filter((f): f is TokenFact => f !== null)
  }
  return {
    read,
    async shown(intent) {
      const facts = await read(intent)
      // With an RPC, a token it gave no facts for shows in raw units (applyTokenFacts), never as the client declared it.
      return facts ? applyTokenFacts(intent, facts).shown : intent
    },
  }
}
