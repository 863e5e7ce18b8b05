import config from './config.json' with { type: 'json' }
export function run() {
  return config.fee
}
