/**
 * The webgpu backend in a browser: headless Chromium (Debian's `chromium`, driven by
 * playwright-core, WebGPU on SwiftShader where there is no GPU) loads a page from a tiny local
 * server; the page imports the built packages through an import map and runs one forward,
 * inverse and gradient kernel. Skips locally (one line) without chromium; fails under CI.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { dirname, join, normalize, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const CHROMIUM = '/usr/bin/chromium'
const packages = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
// the packages the page imports and what they import (@tenet/ad uses @tenet/dual for host functions
// and re-exports the papers' programs of @tenet/testing/programs)
const PACKAGES = ['ir', 'reversible', 'backend-cpu', 'dual', 'testing', 'ad', 'backend-webgpu']
const ci = process.env.CI === 'true' || process.env.CI === '1'
const ready = existsSync(CHROMIUM) && PACKAGES.every((p) => existsSync(join(packages, p, 'dist', 'index.js')))
if (!ready) {
  if (ci) throw new Error(`the browser test needs ${CHROMIUM} and the built packages (${PACKAGES.join(', ')}) under CI`)
  console.log(
    `[tenet] skipping the browser WebGPU test: needs ${CHROMIUM} (apt-get install chromium) and the packages built`,
  )
}

const page = `
import { createRegistry, parse } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { compileAdjoint } from '@tenet/ad'
import { gpuMap, requestGpu } from '@tenet/backend-webgpu'
try {
  const gpu = await requestGpu()
  const registry = createRegistry()
  registry.registerBackend(cpuBackend)
  const m = compileModule(parse({ text: 'fn f(y: f32, x: f32, a: f32) { y += a * x * x }', name: 'page' }), { registry, backend: 'cpu' })
  const k = await gpuMap(m.f, { batch: 4, perItem: ['x'], gpu, adjoint: () => compileAdjoint(m.f).adjoint })
  const x = Float32Array.from([1, 2, 3, 4]), y = new Float32Array(4)
  await k(y, x, 0.5)
  const forward = Array.from(y)
  await k.inverse(y, x, 0.5)
  const inverse = Array.from(y)
  const g = await k.gradient([new Float32Array(4), x, 0.5], { loss: 'y' })
  window.__tenet = { forward, inverse, gx: Array.from(g.gradient[1]), ga: g.gradient[2], reduction: g.reduction, fallback: gpu.fallback, adapter: gpu.adapter }
} catch (e) {
  window.__tenet = { error: String(e && e.stack || e) }
}
`

function html(): string {
  // the backends import compiler helpers from the subpath @tenet/ir/backend
  const imports = {
    ...Object.fromEntries(PACKAGES.map((p) => [`@tenet/${p}`, `/packages/${p}/dist/index.js`])),
    '@tenet/ir/backend': '/packages/ir/dist/backend.js',
    '@tenet/testing/programs': '/packages/testing/dist/programs.js',
  }
  return `<!doctype html><meta charset="utf-8"><title>tenet webgpu</title>
<script type="importmap">${JSON.stringify({ imports })}</script>
<script type="module" src="/page.js"></script>`
}

function serve(): Promise<Server> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost')
    const send = (type: string, body: string | Buffer) => {
      res.writeHead(200, { 'content-type': type })
      res.end(body)
    }
    if (url.pathname === '/') return send('text/html', html())
    if (url.pathname === '/page.js') return send('text/javascript', page)
    const m = /^\/packages\/([\w-]+)\/dist\/(.+\.js)$/.exec(url.pathname)
    const file = m && PACKAGES.includes(m[1]!) ? normalize(join(packages, m[1]!, 'dist', m[2]!)) : undefined
    if (file && file.startsWith(join(packages, m![1]!, 'dist') + sep) && existsSync(file))
      return send('text/javascript', readFileSync(file))
    res.writeHead(404)
    res.end()
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

describe.skipIf(!ready)('tenet on WebGPU in headless Chromium', () => {
  const profile = mkdtempSync(join(tmpdir(), 'tenet-chromium-'))
  afterAll(() => rmSync(profile, { recursive: true, force: true }))

  it('runs a forward, an inverse and a gradient kernel in a page', async () => {
    const { chromium } = await import('playwright-core')
    const server = await serve()
    const port = (server.address() as { port: number }).port
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--enable-unsafe-webgpu',
        '--no-sandbox',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    })
    try {
      const tab = await context.newPage()
      await tab.goto(`http://localhost:${port}/`)
      await tab.waitForFunction(
        () => (globalThis as unknown as { __tenet?: unknown }).__tenet !== undefined,
        undefined,
        { timeout: 90_000 },
      )
      const r = await tab.evaluate(() => (globalThis as unknown as { __tenet: Record<string, unknown> }).__tenet)
      expect(r.error).toBeUndefined()
      console.log(`[tenet] browser WebGPU adapter: ${String(r.adapter)}${r.fallback ? ' (fallback adapter)' : ''}`)
      expect(r.forward).toEqual([0.5, 2, 4.5, 8])
      expect(r.inverse).toEqual([0, 0, 0, 0])
      expect(r.gx).toEqual([1, 2, 3, 4])
      expect(r.ga).toBe(1 + 4 + 9 + 16)
      expect(r.reduction).toBe('tree')
    } finally {
      await context.close()
      server.close()
    }
  }, 150_000) // SwiftShader in a page on a busy 2-core machine: shader compiles take seconds
})
