// eval destructured from an alias of the global object.
const root = global
const { eval: run } = root
run('1')
