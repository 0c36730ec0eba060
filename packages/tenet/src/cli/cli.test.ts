import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { HELP, main } from './main.js'

const dir = mkdtempSync(join(tmpdir(), 'tenet-cli-'))
const file = (name: string, text: string) => {
  const p = join(dir, name)
  writeFileSync(p, text)
  return p
}

const good = file(
  'good.tenet',
  `
fn sumsq(y: f64, x: f64[]) {
  for i in 0..len(x) { y += x[i] * x[i] }
}
fn rot(a: f64, b: f64, t: f64) { ROT(a, b, t) }
fn count(n: i32, flags: bool[]) { for i in 0..len(flags) { if (flags[i], ~) { n += 1 } } }
`,
)
const syntax = file('syntax.tenet', 'fn f(y: f64 {\n  y += 1.0\n}\n')
const reads = file('reads.tenet', 'fn f(y: f64) {\n  y += y\n}\n')
const dealloc = file('dealloc.tenet', 'fn f(y: f64) {\n  t <- 0.0\n  t += y\n  t -> 0.0\n}\n')

/** Runs the CLI in-process; returns the exit code and what it wrote. */
async function cli(args: string[], stdin = '') {
  let out = '',
    err = ''
  const code = await main(args, {
    stdout: (t) => {
      out += t
    },
    stderr: (t) => {
      err += t
    },
    readStdin: () => stdin,
  })
  return { code, out, err }
}

describe('tenet CLI', () => {
  it('--help and no arguments', async () => {
    const h = await cli(['--help'])
    expect(h.code).toBe(0)
    expect(h.out).toContain('tenet check <file>')
    expect(h.err).toBe('')
    const none = await cli([])
    expect(none.code).toBe(2)
    expect(none.err).toContain(HELP.split('\n')[0])
  })

  it('check: ok lists the functions; errors as the library prints them, exit 1', async () => {
    expect(await cli(['check', good])).toEqual({ code: 0, out: 'ok: 3 functions (sumsq, rot, count)\n', err: '' })
    const s = await cli(['check', syntax])
    expect(s.code).toBe(1)
    expect(s.out).toBe('')
    expect(s.err).toMatch(/\(at 1:\d+\)\n1 \| fn f\(y: f64 \{\n\s+\^/)
    const r = await cli(['check', reads])
    expect(r.code).toBe(1)
    expect(r.err).toContain('`y` is read in its own right-hand side')
    expect(r.err).toMatch(/\n2 \| {3}y \+= y\n\s+\^\n$/)
  })

  it('check reads standard input for -', async () => {
    expect((await cli(['check', '-'], 'fn f(y: f64, x: f64) { y += x }')).out).toBe('ok: 1 function (f)\n')
  })

  it('print: the function, its inverse and its adjoint in Tenet syntax', async () => {
    const f = await cli(['print', 'rot', good])
    expect(f).toEqual({ code: 0, out: 'fn rot(a: f64, b: f64, t: f64) {\n  ROT(a, b, t)\n}\n', err: '' })
    const inv = await cli(['print', 'rot', good, '--inverse'])
    expect(inv.out).toBe('fn rot_inverse(a: f64, b: f64, t: f64) {\n  ~ROT(a, b, t)\n}\n')
    const adj = await cli(['print', 'sumsq', good, '--adjoint'])
    expect(adj.code).toBe(0)
    expect(adj.out).toMatch(/^fn sumsq\$adj\(y: f64, x: f64\[\], g_y: f64, g_x: f64\[\]/)
    expect(adj.out).toContain('for i in reverse 0..len(x)')
    expect((await cli(['print', 'rot', good, '--inverse', '--adjoint'])).code).toBe(2)
    // the core IR with the run-time checks every engine runs
    const checked = await cli(['print', 'f', '-', '--checks'], 'fn f(y: f64, x: f64[], k: i32) { y += x[k] }')
    expect(checked.code).toBe(0)
    expect(checked.out).toMatch(/^fn f\(/)
    expect(checked.out).toContain('assert outOfBounds($inrange(k, len(x))) else ("x", k, len(x))')
    expect((await cli(['print', 'sumsq', good, '--checks', '--no-checks'])).code).toBe(2)
  })

  it('run: forwards and backwards, text and JSON', async () => {
    expect(await cli(['run', 'sumsq', good, '--', '1', '[1, 2, 3]'])).toEqual({
      code: 0,
      out: 'y = 15\nx = [1, 2, 3]\n',
      err: '',
    })
    expect((await cli(['run', 'sumsq', good, '--inverse', '--', '15', '[1, 2, 3]'])).out).toBe('y = 1\nx = [1, 2, 3]\n')
    expect((await cli(['run', 'count', good, '--json', '--', '0', '[true, false, true]'])).out).toBe(
      '{"n":2,"flags":[1,0,1]}\n',
    )
    expect((await cli(['run', 'sumsq', good, '--json', '--', 'Infinity', '[NaN]'])).out).toBe(
      '{"y":"NaN","x":["NaN"]}\n',
    )
    for (const backend of ['interpreter', 'wasm']) {
      expect((await cli(['run', 'sumsq', good, '--backend', backend, '--', '0', '[3]'])).out).toBe('y = 9\nx = [3]\n')
    }
  })

  it('run: a run-time error is exit 1 with the location', async () => {
    const r = await cli(['run', 'f', dealloc, '--', '2'])
    expect(r.code).toBe(1)
    expect(r.err).toMatch(/cannot deallocate `t`.*\(at 4:3\)/)
  })

  it('grad: the gradient of the named (or numbered) loss parameter, checked against the closed form', async () => {
    const g = await cli(['grad', 'sumsq', good, '--loss', 'y', '--', '0', '[1, -2, 0.5]'])
    expect(g).toEqual({ code: 0, out: 'dy/dy = 1\ndy/dx = [2, -4, 1]\n', err: '' })
    // ROT(a, b, t): a' = a cos t − b sin t, so ∂a'/∂t = −a sin t − b cos t
    const [a, b, t] = [0.3, -1.1, 0.7]
    const r = await cli(['grad', 'rot', good, '--loss=0', '--json', '--', String(a), String(b), String(t)])
    const out = JSON.parse(r.out) as Record<string, number>
    expect(out['da/dt']).toBeCloseTo(-a * Math.sin(t) - b * Math.cos(t), 12)
    expect(out['da/da']).toBeCloseTo(Math.cos(t), 12)
  })

  it('js: the generated JavaScript of the cpu backend', async () => {
    const j = await cli(['js', 'sumsq', good])
    expect(j.code).toBe(0)
    expect(j.out).toMatch(/^function \w+\(/)
    expect(j.out).toContain('for (let')
    expect((await cli(['js', 'sumsq', good, '--inverse'])).out).toContain(' - ')
  })

  it('usage errors are exit 2 with a message on stderr', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['frobnicate'], /unknown command `frobnicate`/],
      [['check'], /usage: tenet check <file>/],
      [['check', join(dir, 'missing.tenet')], /cannot read .*missing\.tenet/],
      [['run', 'nope', good, '--', '1'], /no function `nope` in the file \(it has: sumsq, rot, count\)/],
      [['run', 'sumsq', good, '--', '1'], /takes 2 arguments \(y: f64, x: f64\[\]\), got 1/],
      [['run', 'sumsq', good, '--', '1', '2'], /argument `x` is an array/],
      [['run', 'sumsq', good, '--', 'one', '[1]'], /argument `y`: cannot read "one"/],
      [['run', 'sumsq', good, '--backend', 'gpu', '--', '1', '[1]'], /unknown backend `gpu`/],
      [['grad', 'sumsq', good, '--', '1', '[1]'], /grad needs --loss/],
      [['grad', 'sumsq', good, '--loss', 'z', '--', '1', '[1]'], /--loss z: no such parameter/],
      [['run', 'sumsq', good, '--bogus'], /unknown option --bogus/],
    ]
    for (const [args, message] of cases) {
      const r = await cli(args)
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.out, args.join(' ')).toBe('')
      expect(r.err, args.join(' ')).toMatch(message)
    }
  })

  it('the built executable: exit codes and streams as a shell sees them', () => {
    const bin = join(dirname(fileURLToPath(import.meta.url)), '../../dist/cli/bin.js')
    expect(existsSync(bin), 'packages/tenet is built before its tests (turbo: test depends on build)').toBe(true)
    expect(execFileSync(process.execPath, [bin, 'run', 'sumsq', good, '--', '0', '[2]'], { encoding: 'utf8' })).toBe(
      'y = 4\nx = [2]\n',
    )
    const bad = spawnSync(process.execPath, [bin, 'check', reads], { encoding: 'utf8' })
    expect(bad.status).toBe(1)
    expect(bad.stdout).toBe('')
    expect(bad.stderr).toContain('`y` is read in its own right-hand side')
    const piped = spawnSync(process.execPath, [bin, 'check', '-'], {
      encoding: 'utf8',
      input: 'fn g(a: i32) { a += 1 }',
    })
    expect(piped.stdout).toBe('ok: 1 function (g)\n')
    expect(spawnSync(process.execPath, [bin, 'nope'], { encoding: 'utf8' }).status).toBe(2)
  })
})
