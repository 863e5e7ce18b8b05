export const home = globalThis.process.env.HOME
