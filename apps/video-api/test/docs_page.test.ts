import { existsSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { type Browser, chromium } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './support/app.js'

// /docs in a real browser: Debian's chromium package, driven headless by playwright-core (no
// browser download). .ci/run installs the package; without it locally this file is skipped.
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
]
const haveChromium = existsSync(CHROMIUM)
if (!haveChromium)
  console.warn(
    `docs_page.test.ts skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`,
  )

let t: TestApp
let browser: Browser
let base = ''

describe.skipIf(!haveChromium)('/docs in headless Chromium', () => {
  beforeAll(async () => {
    t = await createTestApp('docspage')
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS, timeout: 60_000 })
  }, 90_000)
  afterAll(async () => {
    await browser?.close()
    await t?.close()
  })

  it('loads and lists every route of the OpenAPI document', async () => {
    const document = (await (await fetch(`${base}/docs/json`)).json()) as {
      paths: Record<string, Record<string, unknown>>
    }
    const expected = Object.entries(document.paths)
      .flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`))
      .sort()
    const page = await browser.newPage()
    const failed: string[] = []
    page.on('requestfailed', (request) => failed.push(request.url()))
    page.on('pageerror', (error) => failed.push(error.message))
    const response = await page.goto(`${base}/docs`, { waitUntil: 'load', timeout: 30_000 })
    expect(response?.ok()).toBe(true)
    await page.locator('.opblock').first().waitFor({ timeout: 30_000 })
    const listed = await page.$$eval('.opblock .opblock-summary', (summaries) =>
      summaries.map((s) => {
        const method = s.querySelector('.opblock-summary-method')?.textContent ?? ''
        const path = s.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? ''
        return `${method.trim().toUpperCase()} ${path}`
      }),
    )
    expect([...new Set(listed)].sort()).toEqual(expected)
    expect(await page.title()).toMatch(/Swagger UI/)
    expect(failed).toEqual([])
    await page.close()
  }, 90_000)
})
