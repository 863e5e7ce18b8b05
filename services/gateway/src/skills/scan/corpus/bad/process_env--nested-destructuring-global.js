const { process: { env: e } } = globalThis
export default e
