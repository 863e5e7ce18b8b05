export const y = 1
