#!/usr/bin/env node
// The signer process: keys, approval tokens, signatures. It listens on two
// Unix sockets and nothing else; it opens no TCP/UDP socket and makes no
// outbound connection (a system test checks /proc for it).
import path from 'node:path'
import {
  CheckpointRefusedError,
  createRpcServer,
  defaultPolicyConfig,
  describeFailure,
  loadPolicyFile,
  holdInstanceLock,
  makePrivateDir,
  AUDIT_PUBLIC_KEY_FILE,
  routerTableFromEnv,
  socketConfigFromEnv,
  startWalCheckpoints,
  systemClock,
  WAL_CHECKPOINT_FAILED_MESSAGE,
  warnUnknownVariables,
} from '@countersign/shared'
import { openSignerAudit } from './audit/signerAudit.js'
import { startCheckpointTimer } from './audit/checkpointer.js'
import { backfillCheckpointHistory } from './audit/historyBackfill.js'
import { startTokenSweep } from './store/tokenSweep.js'
import { loadSignerConfig } from './config.js'
import { Keystore } from './keystore/keystore.js'
import { resolvePassphrase } from './keystore/passphrase.js'
import { keystoreBackend } from './keystore/keystoreBackend.js'
import type { KeyBackend } from './signing/keyBackend.js'
import { keyRingOfBackends } from './signing/keyRing.js'
import { gatewayMethods, grantMethods } from './signing/rpcMethods.js'
import { createSignerCore } from './signing/signerCore.js'
import { createApprovalTokens } from './store/approvalTokens.js'
import { createRowTimes } from './store/rowTimes.js'
import { openSignerDb } from './store/signerDb.js'
import { createSignatures } from './store/signatures.js'

const TOKEN_SWEEP_MS = 60_000

const log = (msg: string, fields: Record<string, unknown> = {}) =>
  process.stderr.write(JSON.stringify({ time: Date.now(), service: 'signer', msg, ...fields }) + '\n')

async function main(): Promise<void> {
  // First: a misspelt name may be why the configuration below is refused.
  warnUnknownVariables(process.env, 'signer')
  const config = loadSignerConfig(process.env)
  const sockets = socketConfigFromEnv(process.env, config.dataDir)
  const clock = systemClock
  const policy = config.policyFile ? loadPolicyFile(config.policyFile) : defaultPolicyConfig()
  const routers = routerTableFromEnv(process.env)
  makePrivateDir(config.dataDir)
  // Before anything is read or bound: a second signer on this data directory stops here, in one sentence.
  // Held for the process's life (the exit listener also keeps it from being collected, which would drop it).
  const instanceLock = holdInstanceLock(config.dataDir, 'signer')
  process.once('exit', () => instanceLock.release())

  const keystore = new Keystore(config.keystoreDir)
  keystore.ensureDir()
  const entries = keystore.list()
  let keys: Awaited<ReturnType<Keystore['unlockAll']>> = []
  if (entries.length > 0) {
    // Before the passphrase is asked: a version 1 file's dev flag is not sealed with its key.
    keystore.requireResealed(entries)
    const passphrase = await resolvePassphrase({ env: process.env, stdin: process.stdin, stderr: process.stderr })
    const started = performance.now()
    keys = await keystore.unlockAll(passphrase)
    log('keystore unlocked', { keys: keys.map((k) => ({ address: k.address, dev: k.dev })), ms: Math.round(performance.now() - started) })
  } else {
    log(config.pkcs11 ? 'keystore is empty: only PKCS#11 token keys will sign' : 'keystore is empty: every sign request will be refused with key_locked', { keystore: config.keystoreDir })
  }

  const backends: KeyBackend[] = [keystoreBackend(keys)]
  if (config.pkcs11) {
    // Loaded only here: a signer without SERVICE_PKCS11_MODULE never loads pkcs11js.
    const { openConfiguredPkcs11 } = await import('./pkcs11/openFromConfig.js')
    const hsm = await openConfiguredPkcs11(config.pkcs11, process.env, log)
    backends.push(hsm)
    log('PKCS#11 token opened', { token: config.pkcs11.tokenLabel, sessions: config.pkcs11.sessions, keys: hsm.keys().map((k) => ({ address: k.address, label: k.label })) })
  }
  const signerDbFile = path.join(config.dataDir, 'signer.db')
  const { db, wal } = openSignerDb(signerDbFile)
  const walCheckpointFailed = (err: Error) => log(WAL_CHECKPOINT_FAILED_MESSAGE, { level: 'warn', error: err.message })
  // SQLite's checkpoints of signer.db off the event loop, which commits every signature (files/walCheckpoints.ts).
  const signerDbCheckpoints = startWalCheckpoints(db, signerDbFile, { onError: walCheckpointFailed })
  // Two kinds of trouble, told apart (found by review: a rewritten log was reported as a storage glitch).
  const { audit, key: auditKey, checkpoints } = openSignerAudit(
    config.dataDir,
    db,
    clock,
    (err) =>
      err instanceof CheckpointRefusedError
        ? log('AUDIT LOG TAMPERED: audit.db was changed outside countersign; no checkpoint is signed over it', { error: err.message })
        : log('audit checkpoint written but not recorded in signer.db', { error: err.message }),
    walCheckpointFailed,
  )
  try {
    const backfilled = backfillCheckpointHistory(path.join(config.dataDir, 'audit.db'), auditKey, checkpoints)
    if (backfilled > 0) log('audit checkpoint history filled from the checkpoints in audit.db (first start since signer.db keeps it)', { checkpoints: backfilled })
  } catch (err) {
    // Only a re-anchor reads the history: the signer signs without it, and the next start tries again.
    log('audit checkpoint history not filled from audit.db; retried at the next start', { level: 'warn', error: (err as Error).message })
  }
  log(auditKey.created ? 'audit key generated' : 'audit key loaded', {
    fingerprint: auditKey.fingerprint,
    publicKeyFile: path.join(config.dataDir, AUDIT_PUBLIC_KEY_FILE),
    publicKey: auditKey.publicPem.trim(),
  })
  // A clock stepped back while the signer was down must not lengthen the tokens it had minted: their
  // remaining life counts from the latest time signer.db holds, when that is ahead of the wall clock.
  const tokens = createApprovalTokens(db, undefined, createRowTimes(db, clock)())
  const core = createSignerCore({ db, wal, tokens, signatures: createSignatures(db), keys: keyRingOfBackends(backends), policy, routers, audit, clock, devChainId: config.devChainId })
  if (keys.some((k) => k.dev)) {
    log(config.devChainId === null ? 'dev keys loaded but SERVICE_SIGNER_DEV_CHAIN_ID is not set: they will not sign' : 'dev keys sign only for the dev chain', { devChainId: config.devChainId })
  }
  // The servers' own reports (connections dropped at the limit or for a
  // stalled frame, handler failures with their stack) go to the signer's log;
  // without a logger they were lost.
  const rpcLogger = {
    warn: (msg: string, fields: Record<string, unknown> = {}) => log(msg, { level: 'warn', ...fields }),
    error: (msg: string, fields: Record<string, unknown> = {}) => log(msg, { level: 'error', ...fields }),
  }
  const signerServer = createRpcServer({
    socketPath: sockets.signer,
    socketMode: sockets.mode,
    methods: gatewayMethods(core, clock(), clock),
    logger: rpcLogger,
  })
  const grantServer = createRpcServer({ socketPath: sockets.grant, socketMode: sockets.mode, methods: grantMethods(core), logger: rpcLogger })
  const missed = await core.auditMissed()
  if (missed.late + missed.logged > 0) {
    log('signatures a crash left without their audited flag', { auditedLate: missed.late, alreadyInLog: missed.logged })
  }
  // Seal whatever the log holds now (events other processes appended while
  // the signer was down), then keep sealing it as it grows. Serving does not
  // wait for it: a signature brings its own checkpoint.
  // A log that no longer continues from signer.db's checkpoint (restored from a backup, or changed by
  // another writer of audit.db) gets no seal, and the signer starts all the same, as it signs on when a
  // seal is refused later: refusing to start made any writer of audit.db able to stop the signer, and a
  // restored log ended it for good (found by review). The checkpointer has logged AUDIT LOG TAMPERED.
  // Handled from the start: a refusal that settled while the sockets were still opening was an
  // unhandled rejection, and ended the process (found by review).
  const startCheckpoint = audit.checkpoint().then(
    (sealed) => log('audit checkpoint', { seq: sealed.seq, sealed: sealed.sealed.seq }),
    (err: unknown) => {
      if (!(err instanceof CheckpointRefusedError)) throw err
      log('audit log not sealed at start: signing goes on; stop every service, run countersign-audit verify, put audit.db back from a backup if rows were cut or rewritten (again if anything appended to it since), and run countersign-signer audit-reanchor before starting them (docs/operations.md, "Audit re-anchoring")', {
        level: 'error',
        error: err.message,
      })
    },
  )
  // Any other failure still ends the start, after the sockets, as before.
  startCheckpoint.catch(() => undefined)
  await signerServer.listen()
  await grantServer.listen()
  await startCheckpoint
  const stopCheckpoints = startCheckpointTimer(audit, checkpoints, clock, (err) => log('audit checkpoint failed; retrying', { error: err.message }))
  const stopSweep = startTokenSweep(() => tokens.sweep(clock()), TOKEN_SWEEP_MS, (err) => log('approval token sweep failed; retrying', { error: err.message }))

  let closing = false
  const shutdown = async (signal: string) => {
    if (closing) return
    closing = true
    log('shutting down', { signal })
    stopSweep()
    stopCheckpoints()
    await Promise.all([signerServer.close(), grantServer.close()])
    await audit.close()
    await Promise.all(backends.map((b) => b.close()))
    await wal.close()
    await signerDbCheckpoints.close()
    db.close()
    process.exit(0)
  }
  process.once('SIGINT', () => void shutdown('SIGINT'))
  process.once('SIGTERM', () => void shutdown('SIGTERM'))
  log('countersign signer ready', { sockets: [sockets.signer, sockets.grant], mode: sockets.mode.toString(8), pid: process.pid })
}

main().catch((err: unknown) => {
  process.stderr.write(`countersign signer: ${describeFailure(err)}\n`)
  process.exit(1)
})
