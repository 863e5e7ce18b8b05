// constructor key joined from an array.
const key = ['con', 'struc', 'tor'].join('')
const g = function* () {}
export const G = g[key]
