#!/usr/bin/env node
// countersign-skill: for skill publishers. Hashes a skill folder into the
// manifest's `files`, and signs the manifest with a key read from stdin.
import { createHash } from 'node:crypto'
import { lstatSync, readdirSync, readFileSync, realpathSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { privateKeyToAccount } from 'viem/accounts'
import { describeFailure, OperatorError } from '@countersign/shared'
import { manifestHash, type SkillManifest, type UnsignedManifest } from '../skills/manifest.js'

const USAGE = `usage: countersign-skill files <dir>                     print the files array for every file under <dir>
       countersign-skill sign <manifest.json> --dir <dir>    fill "files" from <dir>, sign with the 0x private key
                                                             read from stdin, print the signed manifest
The key must be the publisher.address key; it is read from stdin, never from the command line.`

export interface SkillCliIo {
  stdin: AsyncIterable<string | Buffer>
  out: (s: string) => void
  err: (s: string) => void
}

/**
 * Every regular file under `dir` (no dotfiles), as manifest `files` entries,
 * sorted. A symlink anywhere is an error: the gateway refuses a skill folder
 * that holds one, so it is better found here.
 */
export function hashSkillFolder(dir: string): Array<{ path: string; sha256: string }> {
  const out: Array<{ path: string; sha256: string }> = []
  const walk = (rel: string) => {
    for (const name of readdirSync(path.join(dir, rel)).sort()) {
      if (name.startsWith('.')) continue
      const relPath = rel ? `${rel}/${name}` : name
      const st = lstatSync(path.join(dir, relPath), { throwIfNoEntry: false })
      if (!st) continue
      if (st.isSymbolicLink()) throw new OperatorError(`${relPath} is a symlink; a skill folder may not contain any (copy the file instead)`)
      if (st.isDirectory()) walk(relPath)
      else if (st.isFile()) out.push({ path: relPath, sha256: createHash('sha256').update(readFileSync(path.join(dir, relPath))).digest('hex') })
    }
  }
  walk('')
  return out
}

export async function signManifest(manifest: UnsignedManifest, privateKey: `0x${string}`): Promise<SkillManifest> {
  let account: ReturnType<typeof privateKeyToAccount>
  try {
    account = privateKeyToAccount(privateKey)
  } catch {
    // viem's own message quotes the key: never repeated here.
    throw new OperatorError('the key on stdin is not a valid secp256k1 private key (zero, or not below the curve order)')
  }
  const publisher = (manifest as { publisher?: { address?: unknown } } | null)?.publisher?.address
  if (typeof publisher !== 'string') throw new OperatorError('the manifest has no publisher.address to check the key against')
  if (account.address.toLowerCase() !== publisher.toLowerCase()) {
    throw new OperatorError(`the key is for ${account.address}, but publisher.address is ${publisher}`)
  }
  const { signature: _old, ...unsigned } = manifest as SkillManifest
  const signature = await account.signMessage({ message: { raw: manifestHash(unsigned) } })
  return { ...unsigned, signature }
}

export async function runSkillCli(argv: string[], io: SkillCliIo): Promise<number> {
  const [command, target] = argv
  const dirFlag = argv.indexOf('--dir')
  if (command === '--help' || command === '-h' || command === 'help') {
    io.out(USAGE)
    return 0
  }
  try {
    if (command === 'files' && target) {
      io.out(JSON.stringify(hashSkillFolder(target), null, 2))
      return 0
    }
    if (command === 'sign' && target && dirFlag !== -1 && argv[dirFlag + 1]) {
      let key = ''
      for await (const chunk of io.stdin) key += chunk.toString()
      key = key.trim()
      if (!/^0x[0-9a-fA-F]{64}$/.test(key)) throw new OperatorError('stdin must hold the publisher key: 0x followed by 64 hex characters')
      const manifest = parseManifestFile(target)
      const signed = await signManifest({ ...manifest, files: hashSkillFolder(argv[dirFlag + 1]!) }, key as `0x${string}`)
      io.out(JSON.stringify(signed, null, 2))
      return 0
    }
    io.err(USAGE)
    return 2
  } catch (err) {
    io.err(`countersign-skill: ${describeFailure(err)}`)
    return 1
  }
}

function parseManifestFile(file: string): UnsignedManifest {
  const text = readFileSync(file, 'utf8')
  try {
    const manifest = JSON.parse(text) as unknown
    if (typeof manifest !== 'object' || manifest === null || Array.isArray(manifest)) throw new Error('not a JSON object')
    return manifest as UnsignedManifest
  } catch (err) {
    throw new OperatorError(`${file} is not a JSON object: ${(err as Error).message}`)
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  runSkillCli(process.argv.slice(2), { stdin: process.stdin, out: (s) => process.stdout.write(s + '\n'), err: (s) => process.stderr.write(s + '\n') }).then((c) => process.exit(c))
}
