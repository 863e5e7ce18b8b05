export const open = (x) => x.createWriteStream('out.txt')
