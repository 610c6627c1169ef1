import { pathCases } from './paths.cases.js'
import { refusesEach } from './refused.js'

refusesEach('badinput_paths', pathCases)
