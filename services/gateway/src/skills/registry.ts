import type Database from 'better-sqlite3'
import type { UnsignedManifest } from './manifest.js'

export interface SkillRecord {
  name: string
  manifest: UnsignedManifest
  manifestHash: string
  publisherAddress: string
  registeredAt: number
}

/** Registered skills in gateway.db. A revoked row stays (history); its name may be registered again. */
export interface SkillRegistry {
  active(name: string): SkillRecord | undefined
  list(): SkillRecord[]
  /** false when an active skill already has this name. */
  add(record: SkillRecord): boolean
  /** false when no active skill has this name. */
  revoke(name: string, nowMs: number): boolean
  /** Whether an operator revoked a skill registered with exactly this manifest (its manifestHash). */
  wasRevoked(manifestHash: string): boolean
  /** Whether the newest registration of this name was revoked (and none came after it). */
  nameRevoked(name: string): boolean
}

interface Row {
  name: string
  manifest: string
  manifest_hash: string
  publisher_address: string
  registered_at: number
}

export function createSkillRegistry(db: Database.Database): SkillRegistry {
  db.exec(`
    CREATE TABLE IF NOT EXISTS skills (
      id                INTEGER PRIMARY KEY,
      name              TEXT    NOT NULL,
      manifest          TEXT    NOT NULL,
      manifest_hash     TEXT    NOT NULL,
      publisher_address TEXT    NOT NULL,
      registered_at     INTEGER NOT NULL,
      revoked_at        INTEGER
    );
    CREATE UNIQUE INDEX IF NOT EXISTS skills_active_name ON skills (name) WHERE revoked_at IS NULL;
    CREATE INDEX IF NOT EXISTS skills_manifest_hash ON skills (manifest_hash);
  `)
  const one = db.prepare<[string], Row>('SELECT * FROM skills WHERE name = ? AND revoked_at IS NULL')
  const all = db.prepare<[], Row>('SELECT * FROM skills WHERE revoked_at IS NULL ORDER BY name')
  const insert = db.prepare('INSERT INTO skills (name, manifest, manifest_hash, publisher_address, registered_at) VALUES (?, ?, ?, ?, ?)')
  const revoke = db.prepare('UPDATE skills SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL')
  // Revoked rows are kept, so a gateway.db from before this question existed already knows its revocations.
  const revokedHash = db.prepare<[string], { found: number }>('SELECT 1 AS found FROM skills WHERE manifest_hash = ? AND revoked_at IS NOT NULL LIMIT 1')
  const newestOfName = db.prepare<[string], { revoked_at: number | null }>('SELECT revoked_at FROM skills WHERE name = ? ORDER BY id DESC LIMIT 1')
  const toRecord = (r: Row): SkillRecord => ({
    name: r.name,
    manifest: JSON.parse(r.manifest) as UnsignedManifest,
    manifestHash: r.manifest_hash,
    publisherAddress: r.publisher_address,
    registeredAt: r.registered_at,
  })
  return {
    active: (name) => {
      const r = one.get(name)
      return r && toRecord(r)
    },
    list: () => all.all().map(toRecord),
    add(rec) {
      try {
        insert.run(rec.name, JSON.stringify(rec.manifest), rec.manifestHash, rec.publisherAddress, rec.registeredAt)
        return true
      } catch (err) {
        if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') return false
        throw err
      }
    },
    revoke: (name, nowMs) => revoke.run(nowMs, name).changes === 1,
    wasRevoked: (hash) => revokedHash.get(hash) !== undefined,
    nameRevoked: (name) => (newestOfName.get(name)?.revoked_at ?? null) !== null,
  }
}
