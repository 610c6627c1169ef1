import { listCases } from './lists.cases.js'
import { refusesEach } from './refused.js'

refusesEach('badinput_lists', listCases)
