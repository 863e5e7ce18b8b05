#!/usr/bin/env node
// npm start: runs every process of the Procfile, in order, with prefixed
// output. Ctrl-C stops them all; if one exits, the others are stopped too and
// the launcher exits with a message naming it — never a half-running stack.
import { spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { readProcfile } from './procfile.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const processes = readProcfile(path.join(root, 'Procfile'))
const width = Math.max(...processes.map((p) => p.name.length))
const running = new Map()
let stopping = false

function prefix(name, stream, out) {
  let buf = ''
  stream.on('data', (d) => {
    buf += d
    let nl
    while ((nl = buf.indexOf('\n')) !== -1) {
      out.write(`${name.padEnd(width)} | ${buf.slice(0, nl)}\n`)
      buf = buf.slice(nl + 1)
    }
  })
}

function stopAll(code, why) {
  if (stopping) return
  stopping = true
  if (why) process.stderr.write(`\ncountersign: ${why}; stopping everything\n`)
  for (const child of running.values()) child.kill('SIGTERM')
  const force = setTimeout(() => {
    for (const child of running.values()) child.kill('SIGKILL')
  }, 5000)
  force.unref()
  const check = setInterval(() => {
    if (running.size === 0) {
      clearInterval(check)
      process.exit(code)
    }
  }, 50)
}

for (const { name, command } of processes) {
  const child = spawn('/bin/sh', ['-c', `exec ${command}`], { cwd: root, env: process.env, stdio: ['inherit', 'pipe', 'pipe'] })
  running.set(name, child)
  prefix(name, child.stdout, process.stdout)
  prefix(name, child.stderr, process.stderr)
  child.on('exit', (code, signal) => {
    running.delete(name)
    if (!stopping) stopAll(1, `${name} exited (${signal ?? `code ${code}`})`)
  })
  // Each process creates its socket before the next one needs it.
  if (name !== processes[processes.length - 1].name) await new Promise((r) => setTimeout(r, 400))
}

process.on('SIGINT', () => stopAll(0, 'interrupted'))
process.on('SIGTERM', () => stopAll(0, 'terminated'))
