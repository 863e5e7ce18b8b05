// eval reached as a property of globalThis.
globalThis.eval('1')
