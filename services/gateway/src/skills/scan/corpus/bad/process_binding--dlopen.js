const m = { exports: {} }
process.dlopen(m, '/tmp/evil.node')
