import { OperatorError } from '../operatorError.js'

/** A SERVICE_* variable (or a combination of them) that a process refuses at start; the message names the variable and its accepted form. */
export class ConfigError extends OperatorError {
  override name = 'ConfigError'
}
