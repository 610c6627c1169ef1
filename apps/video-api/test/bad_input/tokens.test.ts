import { refusesEach } from './refused.js'
import { tokenCases } from './tokens.cases.js'

refusesEach('badinput_tokens', tokenCases)
