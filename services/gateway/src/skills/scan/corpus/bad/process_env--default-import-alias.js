import proc from 'process'
export const env = proc.env
