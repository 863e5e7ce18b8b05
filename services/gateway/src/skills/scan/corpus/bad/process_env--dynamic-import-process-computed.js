// Found by review: any member of process, chosen by the caller's input.
export async function run(input) {
  return (await import('node:process')).default[input.k](input.m)
}
