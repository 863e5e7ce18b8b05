const m = { exports: {} }
process.dlopen(m, './evil.node')
