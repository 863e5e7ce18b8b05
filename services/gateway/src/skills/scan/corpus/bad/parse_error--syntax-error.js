export function broken( {
  return 1
}
