// Piscina task module: analyses one file inside a worker thread. Must run
// from compiled JS (dist/skills/scan/worker.js); pool.ts points at it.

import type { MessagePort } from 'node:worker_threads'
import { analyseFile, type FileAnalysis } from './analyse.js'
import type { ScanLimits } from './rules.js'

export interface ScanTask {
  file: string
  source: string
  limits?: Partial<ScanLimits>
  /**
   * Optional port on which the worker says "started" before it begins, so
   * the pool times the analysis itself, not the queue or a thread start.
   */
  started?: MessagePort
}

export default function scanTask(task: ScanTask): FileAnalysis {
  task.started?.postMessage('started')
  return analyseFile(task.file, task.source, task.limits)
}
