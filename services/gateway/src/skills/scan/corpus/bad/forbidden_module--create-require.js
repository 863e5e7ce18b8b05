import { createRequire } from 'node:module'
const req = createRequire(import.meta.url)
export const cp = req('child_process')
