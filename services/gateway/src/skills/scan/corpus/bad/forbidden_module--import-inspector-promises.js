import { Session } from 'node:inspector/promises'
new Session().connect()
