import http2 from 'http2'
export const session = http2.connect('https://example.com')
