// constructor taken by destructuring a function.
const { constructor: F } = () => {}
F('return 1')()
