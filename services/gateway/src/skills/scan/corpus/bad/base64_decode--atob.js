export const code = atob('cHJvY2Vzcy5lbnY=')
