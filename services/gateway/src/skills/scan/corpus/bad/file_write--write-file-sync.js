export function save(store, data) {
  store.writeFileSync('out.bin', data)
}
