export function get(name) {
  return globalThis[name]
}
