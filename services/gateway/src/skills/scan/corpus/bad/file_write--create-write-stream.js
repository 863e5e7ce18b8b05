export const open = (x) => x.createWriteStream('/tmp/x')
