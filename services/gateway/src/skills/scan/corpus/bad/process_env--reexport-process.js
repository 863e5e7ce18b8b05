// Handing process to another file, which imports it from './this.js' as an ordinary module.
export { default as p, env } from 'node:process'
