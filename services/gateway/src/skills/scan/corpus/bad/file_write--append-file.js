export async function log(handle, line) {
  await handle.appendFile('/tmp/log', line)
}
