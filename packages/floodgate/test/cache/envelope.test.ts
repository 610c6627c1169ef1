import { describe, expect, it } from 'vitest'
import { CorruptEntryError, decodeEnvelope, encodeNegative, encodeValue } from '../../src/cache/envelope.js'
import { jsonCodec } from '../../src/index.js'

describe('envelope', () => {
  it('round-trips a value with its logical expiry (ms epoch) and version', () => {
    const bytes = encodeValue(jsonCodec, { a: [1, 'x|y'] }, 1_700_000_000_123, '7')
    expect(decodeEnvelope(jsonCodec, bytes)).toEqual({
      kind: 'value',
      value: { a: [1, 'x|y'] },
      expiresAtMs: 1_700_000_000_123,
      version: '7',
      bytes: bytes.length,
    })
  })

  it('no codec output can be read back as the negative sentinel', () => {
    const sneaky = 'fg1|n|1|0|'
    const identity = { encode: (v: unknown) => String(v), decode: (raw: Buffer) => raw.toString() }
    const decoded = decodeEnvelope(identity, encodeValue(identity, sneaky, 5, '0'))
    expect(decoded.kind).toBe('value')
    expect(decodeEnvelope(jsonCodec, encodeNegative(5, '3'))).toMatchObject({
      kind: 'negative',
      version: '3',
    })
  })

  it('carries binary payloads from a Buffer codec', () => {
    const binary = { encode: (v: Buffer) => v, decode: (raw: Buffer) => Buffer.from(raw) }
    const payload = Buffer.from([0, 0x7c, 255, 10, 0x7c])
    const decoded = decodeEnvelope(binary, encodeValue(binary, payload, 9, '1'))
    expect(decoded.kind === 'value' && decoded.value.equals(payload)).toBe(true)
  })

  it.each([
    ['garbage', Buffer.from('hello')],
    ['bad json', Buffer.from('fg1|v|1|0|{nope')],
    ['bad expiry', Buffer.from('fg1|v|x|0|1')],
    ['unknown kind', Buffer.from('fg1|q|1|0|1')],
    ['negative with payload', Buffer.from('fg1|n|1|0|1')],
  ])('rejects %s with CorruptEntryError', (_, raw) => {
    expect(() => decodeEnvelope(jsonCodec, raw)).toThrow(CorruptEntryError)
  })
})
