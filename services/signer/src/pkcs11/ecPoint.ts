import { getAddress, keccak256, toHex } from 'viem'

/** DER of the secp256k1 curve's OID (1.3.132.0.10), the CKA_EC_PARAMS of every key this backend uses. */
export const SECP256K1_EC_PARAMS = Uint8Array.from([0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x0a])

export const isSecp256k1Params = (params: Uint8Array): boolean =>
  params.length === SECP256K1_EC_PARAMS.length && params.every((b, i) => b === SECP256K1_EC_PARAMS[i])

/** The uncompressed point (04 x y) of a CKA_EC_POINT: the standard DER OCTET STRING around it (04 41 04 x y), or the bare point some modules give. */
export function uncompressedPoint(ecPoint: Uint8Array): Uint8Array {
  const point = ecPoint.length === 67 && ecPoint[0] === 0x04 && ecPoint[1] === 0x41 ? ecPoint.subarray(2) : ecPoint
  if (point.length !== 65 || point[0] !== 0x04) throw new Error(`CKA_EC_POINT is not an uncompressed secp256k1 point (${ecPoint.length} bytes)`)
  return point
}

/**
 * The Ethereum address of a public key given as CKA_EC_POINT: the standard
 * says a DER OCTET STRING around the uncompressed point (04 41 04 x y), some
 * modules give the bare point (04 x y). Anything else is refused.
 */
export function addressOfEcPoint(ecPoint: Uint8Array): string {
  const hash = keccak256(toHex(uncompressedPoint(ecPoint).subarray(1)))
  return getAddress(`0x${hash.slice(-40)}`)
}
