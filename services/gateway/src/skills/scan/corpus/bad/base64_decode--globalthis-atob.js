export const code = globalThis.atob('cHJvY2Vzcy5lbnY=')
