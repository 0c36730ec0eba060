/**
 * The browser pools in headless Chromium (Debian's `chromium`, driven by playwright-core): a tiny
 * local server serves the built packages (bare `@tenet/…`/`tenet` imports rewritten to their
 * `dist/index.js`, so module workers need no import map) and a page that runs `createWebPool`
 * and `webGradientPool`. Checks the task-order reduction (same bits for 1, 2 and 3 workers, and
 * as the Node pool), claiming (a worker that turns slow runs fewer tasks), `warmUp`, `map` into
 * `out`, errors (the lowest-numbered failed task), and a Tenet gradient against the Node pool's. Skips locally (one
 * line) without chromium; fails under CI.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { dirname, join, normalize, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { createPool, sharedArray, tenetGradientPool } from './index.js'

const CHROMIUM = '/usr/bin/chromium'
const here = dirname(fileURLToPath(import.meta.url))
const packages = join(here, '..', '..')
const ci = process.env.CI === 'true' || process.env.CI === '1'
const built = readdirSync(packages).filter((p) => existsSync(join(packages, p, 'dist', 'index.js')))
const ready = existsSync(CHROMIUM) && ['parallel', 'tenet', 'ir', 'reversible', 'ad'].every((p) => built.includes(p))
if (!ready) {
  if (ci) throw new Error(`the browser pool test needs ${CHROMIUM} and the built packages under CI`)
  console.log(
    `[parallel] skipping the browser pool test: needs ${CHROMIUM} (apt-get install chromium) and the packages built`,
  )
}

const source = `
fn nll(loss: f64, mu: f64, s: f64, x: f64[]) {
  for i in 0..len(x) { loss += log(1.0 + (x[i] - mu) * (x[i] - mu) / (s * s)) }
}`
const tasks = Array.from({ length: 13 }, (_, t) => [t * 1000, 1000 + t])
const points = Array.from({ length: 6 }, (_, s) => Array.from({ length: 50 }, (_, i) => Math.sin(7 * (s * 50 + i)) * 3))

const page = `
import { createWebPool, webGradientPool } from '/packages/parallel/dist/web.js'
const out = {}
try {
  const tasks = ${JSON.stringify(tasks)}
  out.sums = []
  for (const workers of [1, 2, 3]) {
    const pool = await createWebPool({ module: '/fixture.mjs', init: { scale: 0.1 }, workers })
    const [a, b] = await Promise.all([pool.sum(tasks, 2), pool.sum(tasks, 2)]) // two calls in flight at once
    out.sums.push(Array.from(a), Array.from(b))
    if (workers === 2) {
      out.rows = Array.from(await pool.map([[0, 1], [1, 1], [2, 1]], 2))
      try { await pool.sum([...tasks.slice(0, 10), -1, tasks[11], -1], 2) } catch (e) { out.taskError = { message: e.message, code: e.code } }
      out.after = Array.from(await pool.sum([[0, 1]], 2))
      const o = new Float64Array(6)
      out.mapOut = (await pool.map([[0, 1], [1, 1], [2, 1]], 2, o)) === o ? Array.from(o) : 'not out'
      const kept = new Float64Array(4).fill(7)
      try { await pool.map([[0, 1], -1], 2, kept) } catch (e) { out.keptError = e.message }
      out.kept = Array.from(kept)
      await pool.warmUp(tasks, 2)
      try { await pool.warmUp([[0, 1], -1, [1, 1], -1], 2) } catch (e) { out.warmError = e.message }
      try { await pool.warmUp(tasks, 2, 0) } catch (e) { out.roundsError = e.message }
    }
    pool.close()
    if (workers === 3) { try { await pool.sum(tasks, 2) } catch (e) { out.closed = e.message } }
  }
  try { await createWebPool({ module: '/fixture.mjs', init: { failSetup: true }, workers: 1 }) } catch (e) { out.setupError = e.message }
  // claiming: the worker that runs task 0 turns slow, and the other one takes most of the tasks
  {
    const pool = await createWebPool({ module: '/who-ran.mjs', init: { slowMs: 100 }, workers: 2 })
    out.claim = Array.from(await pool.map(Array.from({ length: 24 }, (_, t) => t), 3))
    await pool.warmUp([1, 2], 3, 2)
    out.afterWarm = Array.from(await pool.map([1, 2, 3, 4], 3))
    pool.close()
  }
  const points = ${JSON.stringify(points)}
  const shards = points.map((xs) => [0, 0.3, 1.7, Float64Array.from(xs)])
  for (const workers of [1, 2]) {
    const g = await webGradientPool({ source: ${JSON.stringify(source)}, entry: 'nll', loss: 0, workers, checks: false })
    if (workers === 2) await g.warmUp(shards)
    const r = await g.gradient(shards)
    out['grad' + workers] = { loss: r.loss, mu: r.gradient[1], s: r.gradient[2] }
    g.close()
  }
} catch (e) {
  out.error = String(e && e.stack || e)
}
window.__pool = out
`

/** `tenet` → its dist/index.js; `@tenet/x` → packages/x/dist/index.js; `@tenet/x/sub` → packages/x/dist/sub.js. */
const toUrl = (spec: string) => {
  if (spec === 'tenet') return '/packages/tenet/dist/index.js'
  const [, pkg, sub] = /^@tenet\/([\w-]+)(?:\/([\w-]+))?$/.exec(spec)!
  return `/packages/${pkg}/dist/${sub ?? 'index'}.js`
}
/** Bare imports of Tenet's packages (and their subpaths) become paths the server answers. */
const rewrite = (js: string) =>
  js.replace(
    /(from\s*|import\(\s*)(['"])(tenet|@tenet\/[\w-]+(?:\/[\w-]+)?)\2/g,
    (_, pre: string, q: string, spec: string) => `${pre}${q}${toUrl(spec)}${q}`,
  )

function serve(): Promise<Server> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost')
    const send = (type: string, body: string | Buffer) => {
      res.writeHead(200, { 'content-type': type })
      res.end(body)
    }
    if (url.pathname === '/')
      return send(
        'text/html',
        '<!doctype html><meta charset="utf-8"><title>pool</title><script type="module" src="/page.js"></script>',
      )
    if (url.pathname === '/page.js') return send('text/javascript', page)
    if (url.pathname === '/fixture.mjs')
      return send('text/javascript', readFileSync(join(here, '..', 'test', 'fixtures', 'scaled-sum.mjs')))
    if (url.pathname === '/who-ran.mjs')
      return send('text/javascript', readFileSync(join(here, '..', 'test', 'fixtures', 'web-who-ran.mjs')))
    const m = /^\/packages\/([\w-]+)\/dist\/(.+\.js)$/.exec(url.pathname)
    const file = m && built.includes(m[1]!) ? normalize(join(packages, m[1]!, 'dist', m[2]!)) : undefined
    if (file && file.startsWith(join(packages, m![1]!, 'dist') + sep) && existsSync(file))
      return send('text/javascript', rewrite(readFileSync(file, 'utf8')))
    res.writeHead(404)
    res.end()
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

describe.skipIf(!ready)('the browser pools in headless Chromium', () => {
  const profile = mkdtempSync(join(tmpdir(), 'tenet-pool-chromium-'))
  afterAll(() => rmSync(profile, { recursive: true, force: true }))

  it('claim tasks and sum in task order on Web Workers (same bits for 1–3 workers and as the Node pool), warm-up, errors, Tenet gradients', async () => {
    const { chromium } = await import('playwright-core')
    const server = await serve()
    const port = (server.address() as { port: number }).port
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    })
    try {
      const tab = await context.newPage()
      const pageErrors: string[] = []
      tab.on('pageerror', (e) => pageErrors.push(String(e)))
      tab.on('console', (m) => {
        if (m.type() === 'error') pageErrors.push(m.text())
      })
      await tab.goto(`http://localhost:${port}/`)
      try {
        await tab.waitForFunction(
          () => (globalThis as unknown as { __pool?: unknown }).__pool !== undefined,
          undefined,
          {
            // every worker loads tenet's module graph and compiles: slow on a loaded 2-core machine
            timeout: 120_000,
          },
        )
      } catch (e) {
        throw new Error(`the page did not finish: ${String(e)}; page errors: ${pageErrors.join(' | ') || 'none'}`)
      }
      const r = await tab.evaluate(() => (globalThis as unknown as { __pool: Record<string, any> }).__pool)
      expect(r.error).toBeUndefined()
      // the Node pool on the same tasks: the same bits
      const node = await createPool({
        module: new URL('../test/fixtures/scaled-sum.mjs', import.meta.url),
        init: { scale: 0.1 },
        workers: 2,
      })
      const ref = Array.from(node.sum(tasks, 2))
      await node.close()
      expect(r.sums).toHaveLength(6)
      for (const s of r.sums) expect(s).toEqual(ref)
      expect(r.rows).toEqual([1 * 0.1, 1, 0.5 * 0.1, 1, (1 / 3) * 0.1, 1]) // init scale 0.1
      // the lowest-numbered failed task, whichever worker met it (as the Node pool says it)
      expect(r.taskError).toEqual({ message: 'task 10 failed in a worker: task -1 refused', code: 'fixture/refused' })
      expect(r.after).toEqual([0.1, 1]) // the pool still works after a failed call
      expect(r.mapOut).toEqual([1 * 0.1, 1, 0.5 * 0.1, 1, (1 / 3) * 0.1, 1])
      expect(r.keptError).toMatch(/^task 1 failed/)
      expect(r.kept).toEqual([7, 7, 7, 7]) // a failed map leaves `out` as it was
      expect(r.warmError).toMatch(/^task 1 failed in a worker: task -1 refused/)
      expect(r.roundsError).toMatch(/positive integer/)
      // claiming: rows in task order; the worker that turned slow ran far fewer than half the tasks
      const claim = Array.from({ length: 24 }, (_, t) => r.claim.slice(3 * t, 3 * t + 3) as number[])
      expect(claim.map((row) => row[0])).toEqual(Array.from({ length: 24 }, (_, t) => t))
      const slow = claim[0]![1]
      expect(new Set(claim.map((row) => row[1])).size).toBe(2)
      expect(claim.filter((row) => row[1] === slow).length).toBeLessThanOrEqual(8)
      // warm-up: each worker ran both tasks twice (4 calls) before the map that follows
      const ranBefore = (id: number) => claim.filter((row) => row[1] === id).length
      for (let t = 0; t < 4; t++) {
        const [task, id, calls] = r.afterWarm.slice(3 * t, 3 * t + 3) as number[]
        expect(task).toBe(t + 1)
        expect(calls).toBeGreaterThanOrEqual(ranBefore(id!) + 4 + 1)
      }
      expect(r.closed).toMatch(/closed/)
      expect(r.setupError).toMatch(/worker setup failed: setup refused/)
      // Tenet gradients: 1 and 2 Web Workers agree to the bit; the Node pool agrees to rounding
      expect(r.grad2).toEqual(r.grad1)
      const pool = await tenetGradientPool({ source, entry: 'nll', loss: 0, workers: 2, checks: false })
      const g = pool.gradient(points.map((xs) => [0, 0.3, 1.7, sharedArray(xs)]))
      await pool.close()
      expect(r.grad1.loss).toBeCloseTo(g.loss, 10)
      expect(r.grad1.mu).toBeCloseTo(g.gradient[1] as number, 10)
      expect(r.grad1.s).toBeCloseTo(g.gradient[2] as number, 10)
      // and against a finite difference of the loss
      const loss = (mu: number, s: number) =>
        points.flat().reduce((a, x) => a + Math.log(1 + ((x - mu) * (x - mu)) / (s * s)), 0)
      const h = 1e-6
      expect(r.grad1.mu).toBeCloseTo((loss(0.3 + h, 1.7) - loss(0.3 - h, 1.7)) / (2 * h), 5)
      expect(r.grad1.s).toBeCloseTo((loss(0.3, 1.7 + h) - loss(0.3, 1.7 - h)) / (2 * h), 5)
    } finally {
      await context.close()
      server.close()
    }
  }, 180_000)
})
