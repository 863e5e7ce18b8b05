export function remove(api) {
  api.unlinkSync('/data/audit.db')
}
