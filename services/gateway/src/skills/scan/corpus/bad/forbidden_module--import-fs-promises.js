import { readFile } from 'node:fs/promises'
export default await readFile('/etc/hostname', 'utf8')
