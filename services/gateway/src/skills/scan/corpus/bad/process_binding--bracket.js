module.exports = process['binding']('spawn_sync')
