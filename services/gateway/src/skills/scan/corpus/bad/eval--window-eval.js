// eval reached through the browser-style global alias.
window.eval('globalThis.x = 1')
