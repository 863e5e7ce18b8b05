#!/usr/bin/env node
// npm run openapi: writes docs/openapi.json from the gateway's route schemas.
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildOpenApiDocument } from '../services/gateway/dist/openapi.js'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
writeFileSync(path.join(root, 'docs/openapi.json'), JSON.stringify(buildOpenApiDocument(), null, 2) + '\n')
console.log('wrote docs/openapi.json')
