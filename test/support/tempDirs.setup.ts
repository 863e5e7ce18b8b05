// Every test file: the data directories tempDataDir made are removed once
// all of the file's tests passed (a full run made ~1,500 of them, ~150 MB,
// and left them in /tmp), and kept when one failed, so that its logs and
// databases can be read. COUNTERSIGN_KEEP_TEST_DIRS=1 keeps them all.
import { afterAll } from 'vitest'
import { removeTempDataDirs } from './processes.js'

interface TaskLike {
  result?: { state?: string }
  tasks?: TaskLike[]
}

const failedWithin = (task: TaskLike): boolean => task.result?.state === 'fail' || (task.tasks ?? []).some(failedWithin)

// Registered before the file's own hooks, so it runs after them (after-hooks run in reverse order): its services are stopped by then.
afterAll(({}, file) => {
  if (process.env.COUNTERSIGN_KEEP_TEST_DIRS === '1' || failedWithin(file as TaskLike)) return
  removeTempDataDirs()
})
