import { connect } from 'tls'
connect(443, 'example.com')
