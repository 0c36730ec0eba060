import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { blackBox, blackBoxEnabled } from './black-box.js'

const fixture = fileURLToPath(new URL('../../test/fixtures/black-box-fields.mjs', import.meta.url))
// the fixture imports the built harness (turbo builds the package before its tests)
if (!existsSync(fileURLToPath(new URL('../../dist/harness/runner.js', import.meta.url))))
  throw new Error('black-box.test.ts needs the built package: run `npx turbo run build --filter=@tenet/bench` first')

/** V8's descriptor of each named field in the fixture's `%DebugPrint` output: 'const' or 'mutable'. */
function fieldsSeen(env: Record<string, string>): Record<string, 'const' | 'mutable'> {
  const r = spawnSync(process.execPath, ['--allow-natives-syntax', fixture], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
  })
  expect(r.status, r.stderr).toBe(0)
  const out: Record<string, 'const' | 'mutable'> = {}
  for (const m of r.stdout.matchAll(/#(\w+): .*\((const )?data field \d+\)/g)) out[m[1]!] = m[2] ? 'const' : 'mutable'
  return out
}

describe('blackBox', () => {
  const saved = process.env.TENET_BENCH_BLACK_BOX
  afterEach(() => {
    if (saved === undefined) delete process.env.TENET_BENCH_BLACK_BOX
    else process.env.TENET_BENCH_BLACK_BOX = saved
  })

  it('leaves every value as it was, deep, typed arrays by identity and content', () => {
    class Sys {
      mass = Float64Array.of(1, 2)
      g = 6.67e-11
    }
    const xs = Float64Array.of(1, -0, Number.NaN)
    const ys = Int32Array.of(7)
    const c = {
      nu: 2,
      z: 1,
      half: 0.5,
      negZero: -0,
      big: 10n,
      flag: true,
      name: 'case',
      empty: '',
      none: null,
      missing: undefined,
      xs,
      inner: { k: 3, ys, list: [1, 2, { deep: 4 }] },
      sys: new Sys(),
      fn: (x: number) => x + 1,
    }
    expect(blackBox(c)).toBe(c)
    expect(c.nu).toBe(2)
    expect(c.z).toBe(1)
    expect(c.half).toBe(0.5)
    expect(Object.is(c.negZero, -0)).toBe(true)
    expect(c.big).toBe(10n)
    expect(c.flag).toBe(true)
    expect(c.name).toBe('case')
    expect(c.empty).toBe('')
    expect(c.none).toBe(null)
    expect(c.missing).toBe(undefined)
    expect(c.xs).toBe(xs)
    expect(Array.from(xs)).toEqual([1, -0, Number.NaN])
    expect(c.inner.k).toBe(3)
    expect(c.inner.ys).toBe(ys)
    expect(c.inner.list).toEqual([1, 2, { deep: 4 }])
    expect(c.sys.g).toBe(6.67e-11)
    expect(Array.from(c.sys.mass)).toEqual([1, 2])
    expect(c.fn(1)).toBe(2)
  })

  it('visits cycles once and leaves accessors, read-only fields and frozen objects alone', () => {
    let reads = 0
    let writes = 0
    const o: Record<string, unknown> = { n: 1 }
    o.self = o
    Object.defineProperty(o, 'acc', {
      get: () => ++reads,
      set: () => void ++writes,
      enumerable: true,
    })
    Object.defineProperty(o, 'fixed', { value: 5, writable: false, enumerable: true })
    o.frozen = Object.freeze({ m: 2 })
    blackBox(o)
    expect(reads).toBe(0)
    expect(writes).toBe(0)
    expect(o.fixed).toBe(5)
    expect(o.self).toBe(o)
    expect(o.n).toBe(1)
    expect((o.frozen as { m: number }).m).toBe(2)
  })

  it('is switched off by TENET_BENCH_BLACK_BOX=0', () => {
    process.env.TENET_BENCH_BLACK_BOX = '0'
    expect(blackBoxEnabled()).toBe(false)
    let writes = 0
    const o = {}
    Object.defineProperty(o, 'w', { get: () => 1, set: () => void ++writes, enumerable: true })
    expect(blackBox(o)).toBe(o)
    delete process.env.TENET_BENCH_BLACK_BOX
    expect(blackBoxEnabled()).toBe(true)
  })

  it("makes the case's fields ones V8 must load (the runner's case, as V8 describes its fields)", () => {
    const on = fieldsSeen({})
    // an object that skipped the box: V8 may fold its fields into optimised code
    expect(on).toMatchObject({ nuControl: 'const', zControl: 'const', xsControl: 'const' })
    // the case the runner hands to the baseline: numbers, typed arrays and nested numbers are loaded
    expect(on).toMatchObject({ nuCase: 'mutable', zCase: 'mutable', xsCase: 'mutable', kInner: 'mutable' })
    // switched off, the case's fields are as foldable as the control's
    const off = fieldsSeen({ TENET_BENCH_BLACK_BOX: '0' })
    expect(off).toMatchObject({ nuCase: 'const', zCase: 'const', xsCase: 'const', kInner: 'const' })
  })
})
