const mod = 'child_' + 'process'
export default await import(`node:${mod}`)
