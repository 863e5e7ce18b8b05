module.exports = Object.getOwnPropertyDescriptor(process, 'env').value
