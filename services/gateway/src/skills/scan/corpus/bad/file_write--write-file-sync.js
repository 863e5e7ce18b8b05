export function save(store, data) {
  store.writeFileSync('/tmp/out', data)
}
