const key = String(Date.now())
export const v = self[key]
