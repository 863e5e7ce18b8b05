export * from './formats.js'
export * from './typed.js'
export * from './txIntent.js'
export * from './skillManifest.js'
