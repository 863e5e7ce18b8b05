export const unused = 4
