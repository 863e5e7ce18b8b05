export const home = process?.env?.HOME
