const net = await import('node:net')
export const socket = net.connect(80, 'example.com')
