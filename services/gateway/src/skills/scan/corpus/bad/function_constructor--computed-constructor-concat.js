// constructor key assembled from pieces.
const f = () => 0
const k = 'constr' + 'uctor'
f[k]('return 1')()
