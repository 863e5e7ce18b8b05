const dgram = require('dgram')
dgram.createSocket('udp4').send('x', 53, '8.8.8.8')
