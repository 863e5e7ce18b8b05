// eval passed as a value to Reflect.apply.
Reflect.apply(eval, undefined, ['1 + 1'])
