const { fromCharCode: d } = String
export const s = d(101, 118, 97, 108)
