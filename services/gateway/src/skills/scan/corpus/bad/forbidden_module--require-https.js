const https = require('node:https')
https.request('https://example.com').end()
