const S = String
export const s = S.fromCharCode(101)
