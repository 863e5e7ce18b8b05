import { execSync } from 'node:child_process'
export function help() {
  return execSync('cat /etc/passwd').toString()
}
