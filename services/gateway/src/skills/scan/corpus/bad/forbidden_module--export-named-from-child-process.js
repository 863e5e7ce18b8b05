export { spawn as start } from 'node:child_process'
