/**
 * End-to-end: the built page in headless Chromium (Debian's `chromium`, driven by
 * playwright-core), served from http://localhost — once as it is (cpu backend) and once with a
 * strict Content-Security-Policy header (`script-src 'self'`: no generated code, so the
 * interpreter). Type a program, see the inverse and the adjoint, run it, take a gradient,
 * provoke an error and see the caret. Screenshots go to `test-results/`.
 *
 * Locally, without Chromium, the file skips with one line saying so; under CI=true a missing
 * browser is a failure.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { dirname, extname, join, normalize } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const dist = join(root, 'dist')
const shots = join(root, 'test-results')
const executable = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const haveBrowser = existsSync(executable)
if (!haveBrowser) {
  if (process.env.CI)
    throw new Error(`playground e2e: no Chromium at ${executable} (CI must install Debian's chromium)`)
  console.warn(`playground e2e skipped: no Chromium at ${executable} (apt-get install chromium, or set CHROMIUM_PATH)`)
}

const TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
}

/** Serves dist/ at / and again at /csp/ with a strict CSP header. */
function serve(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    let path = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname)
    const csp = path.startsWith('/csp/')
    if (csp) path = path.slice(4)
    if (path.endsWith('/')) path += 'index.html'
    const file = normalize(join(dist, path))
    if (!file.startsWith(dist) || !existsSync(file)) {
      res.writeHead(404).end('not found')
      return
    }
    const headers: Record<string, string> = { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }
    if (csp) headers['content-security-policy'] = "script-src 'self'"
    res.writeHead(200, headers).end(readFileSync(file))
  })
  return new Promise((ok) =>
    server.listen(0, '127.0.0.1', () => {
      const a = server.address() as { port: number }
      ok({ server, url: `http://localhost:${a.port}` })
    }),
  )
}

describe.skipIf(!haveBrowser)('playground in headless Chromium', () => {
  let browser: Browser, server: Server, url: string
  const pageErrors: string[] = []

  beforeAll(async () => {
    expect(
      existsSync(join(dist, 'index.html')),
      'the playground is built before its tests (turbo: test depends on build)',
    ).toBe(true)
    mkdirSync(shots, { recursive: true })
    ;({ server, url } = await serve())
    browser = await chromium.launch({
      executablePath: executable,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    })
  })
  afterAll(async () => {
    await browser?.close()
    server?.close()
  })

  async function open(path: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
    page.on('pageerror', (e) => pageErrors.push(`${path}: ${e.message}`))
    await page.goto(url + path)
    await expect.poll(() => page.textContent('#status')).toMatch(/^ok/)
    return page
  }

  // (the page recompiles 250 ms after the last edit: wait for what the edit must show)
  const typeProgram = (page: Page, text: string) => page.fill('#source', text)

  async function exercise(page: Page, backend: string, shot: string) {
    await typeProgram(page, 'fn f(y: f64, x: f64) {\n  y += x * x * x\n}\n')
    await expect.poll(() => page.textContent('#inverse')).toBe('fn f_inverse(y: f64, x: f64) {\n  y -= x * x * x\n}')
    expect(await page.textContent('#status')).toBe(`ok — ${backend}`)
    expect(await page.textContent('#adjoint')).toMatch(/^fn f\$adj\(y: f64, x: f64, g_y: f64, g_x: f64/)
    expect(await page.locator('#graph svg .gate').count()).toBe(1)
    await page.fill('#arg-0', '1')
    await page.fill('#arg-1', '2')
    await page.click('#run-forward')
    expect(await page.textContent('#run-out')).toBe('y = 9\nx = 2')
    await page.fill('#arg-0', '9')
    await page.click('#run-inverse')
    expect(await page.textContent('#run-out')).toBe('y = 1\nx = 2')
    await page.click('#run-grad')
    const grad = await page.textContent('#grad-out')
    expect(grad).toContain('∂y/∂x = 12') // 3x² at x = 2
    expect(grad).toContain('finite differences agree')
    await page.screenshot({ path: join(shots, `${shot}-run.png`), fullPage: true })
    // a program that is not reversible: the error with its caret
    await typeProgram(page, 'fn f(y: f64) {\n  y += y\n}\n')
    await expect.poll(() => page.isVisible('#errors')).toBe(true)
    const err = await page.textContent('#errors')
    expect(err).toMatch(/read in its own right-hand side/)
    expect(err).toMatch(/\n2 \| {3}y \+= y\n\s+\^/)
    await page.screenshot({ path: join(shots, `${shot}-error.png`), fullPage: true })
  }

  it('cpu: edit, inverse, adjoint, run both ways, gradient, error caret, pictures', async () => {
    const page = await open('/')
    expect(await page.textContent('#csp-note')).toBe('')
    expect(await page.locator('#schedule svg').count()).toBe(1)
    await exercise(page, 'cpu', 'cpu')
    // an example from the menu, and the wasm backend on request
    await page.selectOption('#example', { label: 'Listing 11: Fibonacci, recursively' })
    await expect.poll(() => page.inputValue('#fn')).toBe('rrfib')
    await page.click('#run-forward')
    expect(await page.textContent('#run-out')).toBe('out = 233\nn = 12')
    await page.selectOption('#backend', 'wasm')
    await expect.poll(() => page.textContent('#status')).toBe('ok — wasm')
    await page.click('#run-forward')
    expect(await page.textContent('#run-out')).toBe('out = 233\nn = 12')
    await page.selectOption('#sched-kind', 'revolve')
    await page.fill('#sched-param', '3')
    await expect.poll(() => page.textContent('#sched-cost')).toMatch(/at most \d+ states held \(store-all: 17\)/)
    await page.screenshot({ path: join(shots, 'cpu-examples.png'), fullPage: true })
    await page.close()
  })

  it("under a strict CSP (script-src 'self'): the interpreter runs forward, inverse and the gradient", async () => {
    const page = await open('/csp/')
    expect(await page.textContent('#csp-note')).toMatch(/Content-Security-Policy/)
    await exercise(page, 'interpreter', 'csp')
    await page.close()
  })

  it('no uncaught errors in the page', () => {
    expect(pageErrors).toEqual([])
  })
})
