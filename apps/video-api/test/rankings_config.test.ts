import { describe, expect, it } from 'vitest'
import { adminIds, ConfigError, loadConfig } from '../src/config/index.js'

describe('ADMIN_USER_IDS', () => {
  it('parses a comma-separated id list, empty = nobody', () => {
    expect(adminIds(loadConfig({ env: { ADMIN_USER_IDS: '1, 22,333' } }))).toEqual(['1', '22', '333'])
    expect(adminIds(loadConfig({ env: {} }))).toEqual([])
  })

  it('fails at start naming the field for anything else', () => {
    for (const bad of ['abc', '1,,2', '0', '1;2', '-5']) {
      expect(() => loadConfig({ env: { ADMIN_USER_IDS: bad } }), bad).toThrow(ConfigError)
      expect(() => loadConfig({ env: { ADMIN_USER_IDS: bad } }), bad).toThrow(/ADMIN_USER_IDS/)
    }
  })
})
