import { readFileSync } from 'fs'
export const secret = readFileSync('/etc/passwd', 'utf8')
