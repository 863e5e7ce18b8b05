export function openForWrite(api, path) {
  return api.openSync(path, 'w+')
}
