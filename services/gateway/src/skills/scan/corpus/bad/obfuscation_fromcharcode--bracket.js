export const s = String['fromCharCode'](101, 118, 97, 108)
