module.exports = Reflect.get(process, 'env')
