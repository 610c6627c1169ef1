import { authCases } from './auth.cases.js'
import { refusesEach } from './refused.js'

refusesEach('badinput_auth', authCases)
