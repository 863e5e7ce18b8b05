export async function log(handle, line) {
  await handle.appendFile('activity.log', line)
}
