import * as fs from 'node:fs'
export const list = fs.readdirSync('/')
