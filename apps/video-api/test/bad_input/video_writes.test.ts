import { describe, expect, it } from 'vitest'
import { ctx, good, post, refusesEach } from './refused.js'
import { videoWriteCases } from './video_writes.cases.js'

refusesEach('badinput_video_writes', videoWriteCases)

describe('good input near the refused edges', () => {
  it('accepts a title of 100 emoji (surrogate pairs) and returns it unchanged', async () => {
    const title = '😀'.repeat(100)
    const res = await ctx.t.app.inject(post({ ...good(), title }))
    expect(res.statusCode, res.body).toBe(201)
    expect(res.json<{ title: string }>().title).toBe(title)
  })
})
