// Hands process to another file of the skill, which then reads p.env
// where no analyser can connect it to process.
const p = globalThis.process
export { p as runtime }
