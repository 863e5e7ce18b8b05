// Inline code through a data: URL import.
const m = await import('data:text/javascript,export default globalThis')
export default m
