export const make = (api) => api.mkdir('/tmp/x', { recursive: true })
