import 'node:child_process'
