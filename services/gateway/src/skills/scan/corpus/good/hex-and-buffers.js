// Byte handling common in EVM skills: hex encoding and decoding, TextEncoder, typed arrays.
export function hexToBytes(hex) {
  const clean = hex.startsWith('0x') ? hex.slice(2) : hex
  return Uint8Array.from(Buffer.from(clean, 'hex'))
}

export function bytesToHex(bytes) {
  return '0x' + Buffer.from(bytes).toString('hex')
}

export function utf8(text) {
  return new TextEncoder().encode(text)
}

export function encodeBase64(text) {
  return Buffer.from(text, 'utf8').toString('base64')
}

export const selector = bytesToHex(hexToBytes('0xa9059cbb'))
export const label = '\u2713 transfer ready'
