// Function.prototype.constructor is Function.
const F = Function.prototype.constructor
F('return 1')()
