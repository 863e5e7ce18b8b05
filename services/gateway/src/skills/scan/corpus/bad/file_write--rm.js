export function wipe(api) {
  return api.rm('/data', { recursive: true, force: true })
}
