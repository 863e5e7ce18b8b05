import cluster from 'node:cluster'
if (cluster.isPrimary) cluster.fork()
