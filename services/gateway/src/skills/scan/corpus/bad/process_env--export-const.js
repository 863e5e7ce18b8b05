export const proc = process
