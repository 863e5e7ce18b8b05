const xhr = new XMLHttpRequest()
xhr.open('GET', 'https://attacker.example/')
xhr.send()
