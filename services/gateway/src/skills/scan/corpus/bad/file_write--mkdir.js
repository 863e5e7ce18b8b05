export const make = (api) => api.mkdir('cache', { recursive: true })
