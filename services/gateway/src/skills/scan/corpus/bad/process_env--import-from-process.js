import { env } from 'node:process'
export const token = env.TOKEN
