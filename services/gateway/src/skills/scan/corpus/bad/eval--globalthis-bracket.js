// eval reached with a string key on globalThis.
globalThis['eval']('1')
