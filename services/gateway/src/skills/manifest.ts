import { recoverMessageAddress, type Hex } from 'viem'
import { keccakCanonical, type Address } from '@countersign/shared'

export interface SkillManifest {
  version: '1'
  name: string
  publisher: { name: string; address: Address; contact: string }
  permissions: { actions: string[]; chains: number[]; network: boolean; filesystem: boolean }
  sandbox: { memoryMb: number; timeoutMs: number; allowSpawn: boolean }
  files: Array<{ path: string; sha256: string }>
  signature: Hex
}

export type UnsignedManifest = Omit<SkillManifest, 'signature'>

export function withoutSignature(m: SkillManifest): UnsignedManifest {
  const { signature: _signature, ...rest } = m
  return rest
}

/** keccak256(JCS(manifest without signature)): what the publisher signs and what the registry calls manifestHash. */
export function manifestHash(m: UnsignedManifest): Hex {
  return keccakCanonical(m)
}

/**
 * EIP-191 personal message over the 32 raw bytes of the manifest hash. Any
 * malformed signature is simply "does not verify", never an exception.
 */
export async function signatureMatchesPublisher(m: SkillManifest): Promise<boolean> {
  try {
    const signer = await recoverMessageAddress({ message: { raw: manifestHash(withoutSignature(m)) }, signature: m.signature })
    return signer.toLowerCase() === m.publisher.address.toLowerCase()
  } catch {
    return false
  }
}
