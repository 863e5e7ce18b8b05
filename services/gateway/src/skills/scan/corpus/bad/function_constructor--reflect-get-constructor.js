// Reading constructor with Reflect.get and a string.
const F = Reflect.get(function () {}, 'constructor')
F('return 1')()
