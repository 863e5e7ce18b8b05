import { Worker } from 'node:worker_threads'
new Worker('process.exit(1)', { eval: true })
