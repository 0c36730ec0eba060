/**
 * The conformance suite every backend runs: `conformanceChecks(backend, options)` lists the
 * checks, each a function returning its problems (empty: the backend conforms). It reads
 * `backend.capabilities` and turns what a backend lacks into checks that say "not applicable:
 * capability X" instead of running — so a report shows every part, run or not.
 *
 * Sections:
 * - round trips: random i32 programs (`randomProgram`) bit for bit with the reference and
 *   inverse(forward(x)) === x bit for bit; random real programs (`randomRealProgram`, f64 and
 *   f32) within a tolerance of the reference, with a round trip within rounding;
 * - primitives: the primitive table of the registry (value, inverse, gradient, Hessian; see
 *   `primitive-table.ts`);
 * - gradients: the adjoint gradients of random f64 programs against finite differences;
 * - errors: every run-time check of the catalog raised with the reference's code, message and
 *   location (`error-cases.ts`).
 */
import { createRegistry, RUNTIME_CHECKS, TenetError, type BackendSpec, type Registry } from '@tenet/ir'
import { interpreterBackend, type TenetModule } from '@tenet/reversible'
import { backendUnderTest, cloneArgs, programProblems, runConformance, type BackendUnderTest } from '../conformance.js'
import { finiteDifference, relativeError } from '../finite-difference.js'
import { randomProgram } from '../generate.js'
import { randomRealArgs, randomRealProgram, type RealProgram } from '../fuzz/typed-program.js'
import { notApplicable, undeclaredCapabilities, type Capability } from './capabilities.js'
import { CALLEE_ERROR_CASES, ERROR_CASES, type ErrorCase } from './error-cases.js'
import {
  gradientProblems,
  hessianProblems,
  inverseProblems,
  primitiveRows,
  tangentProblems,
  valueProblems,
  type ConformanceAd,
  type PrimitiveColumn,
} from './primitive-table.js'

/** The sections of the suite. */
export const CONFORMANCE_SECTIONS = ['capabilities', 'round trips', 'primitives', 'gradients', 'errors'] as const
export type ConformanceSection = (typeof CONFORMANCE_SECTIONS)[number]

/** The default seed of the random programs (`TENET_CONFORMANCE_SEED` overrides it). */
export const CONFORMANCE_SEED = 20261126

/** Options of `conformanceChecks`. */
export interface ConformanceOptions {
  /**
   * The registry: its primitives make the primitive table, and the backend (and the reference)
   * are registered into it when missing. Default: `createRegistry()` (the standard primitives).
   */
  registry?: Registry
  /** The reference the backend is compared with (default: the interpreter of `@tenet/reversible`). */
  reference?: BackendSpec
  /** Seed of the random programs (default `TENET_CONFORMANCE_SEED`, else `CONFORMANCE_SEED`). */
  seed?: number
  /** Random programs per kind (default `TENET_CONFORMANCE_PROGRAMS`, else 12). */
  programs?: number
  /**
   * The AD engine for the derivative parts (`gradient` and `hessian` of `@tenet/ad`). Without
   * it those parts say they are not applicable here: `@tenet/testing` does not depend on
   * `@tenet/ad` (whose tests depend on the backends), so the caller passes it in.
   */
  ad?: ConformanceAd
  /** Sections to run (default all); the others are reported as not selected. */
  sections?: readonly ConformanceSection[]
  /** Compile with run-time checks on (default true; the errors section needs them). */
  checks?: boolean
  /**
   * Known defects: a check whose name starts with a key is expected to fail, for the reason
   * given (`describeConformance` registers it with `it.fails`, so it fails once the defect is
   * fixed, and the entry must then be removed).
   */
  knownFailures?: Readonly<Record<string, string>>
}

/** One check of the suite. */
export interface ConformanceCheck {
  section: ConformanceSection
  name: string
  /** Why the check does not run for this backend ("not applicable: capability `stacks` is false"). */
  notApplicable?: string
  /** A known defect (`options.knownFailures`): the check is expected to fail, for this reason. */
  knownFailure?: string
  /** Runs the check: its problems, empty when the backend conforms. */
  run(): string[]
}

const envNumber = (name: string): number | undefined => {
  const v = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name]
  return v === undefined || v === '' ? undefined : Number(v)
}

/** `code | message | line:column` of what `f` throws, or a description of what went wrong. */
function failure(f: () => unknown): string {
  try {
    f()
  } catch (e) {
    if (!TenetError.isInstance(e))
      return `not a TenetError: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`
    const t = e as TenetError
    return `${t.code} | ${t.message} | ${t.line}:${t.column}`
  }
  return 'no error'
}

/** Largest absolute difference of two results (numbers and typed arrays), Infinity on a shape mismatch. */
function distance(a: readonly unknown[], b: readonly unknown[]): number {
  if (a.length !== b.length) return Infinity
  let d = 0
  a.forEach((x, i) => {
    const y = b[i]
    if (typeof x === 'number' && typeof y === 'number') d = Math.max(d, Object.is(x, y) ? 0 : Math.abs(x - y))
    else if (ArrayBuffer.isView(x) && ArrayBuffer.isView(y)) {
      const u = x as unknown as ArrayLike<number>,
        v = y as unknown as ArrayLike<number>
      if (u.length !== v.length) d = Infinity
      else for (let k = 0; k < u.length; k++) d = Math.max(d, Object.is(u[k], v[k]) ? 0 : Math.abs(u[k]! - v[k]!))
    } else if (!Object.is(x, y)) d = Infinity
  })
  return Number.isNaN(d) ? Infinity : d
}

/** Largest magnitude of the numbers of a result list. */
function magnitude(a: readonly unknown[]): number {
  let m = 0
  for (const x of a) {
    if (typeof x === 'number') m = Math.max(m, Math.abs(x))
    else if (ArrayBuffer.isView(x)) {
      const u = x as unknown as ArrayLike<number>
      for (let k = 0; k < u.length; k++) m = Math.max(m, Math.abs(u[k]!))
    }
  }
  return m
}

/**
 * The checks of the conformance suite for `backend` (see the module comment). Run each check's
 * `run()` and expect no problems; a check with `notApplicable` set does not apply to this
 * backend and says why. `describeConformance` (`@tenet/testing/vitest`) registers them as tests.
 */
export function conformanceChecks(backend: BackendSpec, options: ConformanceOptions = {}): ConformanceCheck[] {
  const registry = options.registry ?? createRegistry()
  const referenceSpec = options.reference ?? interpreterBackend
  const checks = options.checks ?? true
  const bt = backendUnderTest(backend, { registry, checks })
  const ref = backendUnderTest(referenceSpec, { registry, checks })
  const seed = options.seed ?? envNumber('TENET_CONFORMANCE_SEED') ?? CONFORMANCE_SEED
  const programs = options.programs ?? envNumber('TENET_CONFORMANCE_PROGRAMS') ?? 12
  const selected = new Set(options.sections ?? CONFORMANCE_SECTIONS)
  const out: ConformanceCheck[] = []
  const add = (section: ConformanceSection, name: string, needs: Capability[], run: () => string[], why?: string) => {
    const reason = !selected.has(section)
      ? 'not selected here (options.sections)'
      : (notApplicable(backend, ['synchronous', ...needs]) ?? why)
    const known = Object.entries(options.knownFailures ?? {}).find(([key]) => name.startsWith(key))?.[1]
    out.push({
      section,
      name,
      ...(reason ? { notApplicable: reason } : {}),
      ...(known ? { knownFailure: known } : {}),
      run,
    })
  }

  // capabilities
  add('capabilities', 'declares every capability the suite reads', [], () =>
    undeclaredCapabilities(backend).map((c) => `\`capabilities.${c}\` is not declared (true or false)`),
  )

  // round trips: i32 programs
  const i32Programs = (stacks: boolean) => () => {
    const problems: string[] = []
    const chosen = programsWhere(seed, programs, (s) => {
      const p = randomProgram(s, { features: { stack: stacks } })
      return (!stacks || p.source.includes('stack<')) && (backend.capabilities.f64 || !p.source.includes('f64'))
        ? p
        : undefined
    })
    for (const p of chosen) {
      const ps = programProblems(p, [ref, bt], { argSets: 2 })
      if (ps.length) problems.push(`seed ${p.seed}:\n${p.source}\n${ps.slice(0, 3).join('\n')}`)
    }
    if (chosen.length < programs) problems.push(`only ${chosen.length} of ${programs} programs generated`)
    return problems.slice(0, 3)
  }
  add(
    'round trips',
    `${programs} random i32 programs without stacks: bit for bit with ${ref.name}, inverse(forward(x)) === x`,
    [],
    i32Programs(false),
  )
  add('round trips', `${programs} random i32 programs with stacks`, ['stacks'], i32Programs(true))

  // round trips: real programs
  const realPrograms = (type: 'f64' | 'f32', variant: 'plain' | 'recursion' | 'stacks') => () =>
    realRoundTrips(ref, bt, type, variant, seed, programs)
  for (const type of ['f64', 'f32'] as const) {
    add(
      'round trips',
      `${programs} random ${type} programs: within rounding of ${ref.name}, inverse(forward(x)) ≈ x`,
      [type],
      realPrograms(type, 'plain'),
    )
    add(
      'round trips',
      `${programs} random ${type} programs with recursion`,
      [type, 'recursion'],
      realPrograms(type, 'recursion'),
    )
    add(
      'round trips',
      `${programs} random ${type} programs with stacks`,
      [type, 'stacks'],
      realPrograms(type, 'stacks'),
    )
  }

  // the primitive table
  const { rows, without } = primitiveRows(registry)
  for (const [name, why] of without) add('primitives', `${name}: no row`, [], () => [], `not applicable: ${why}`)
  const compiled = new Map<string, TenetModule>()
  const compile = (source: string) => {
    let m = compiled.get(source)
    if (!m) compiled.set(source, (m = bt.compile(source)))
    return m
  }
  for (const row of rows) {
    const title = (c: PrimitiveColumn) =>
      `${row.primitive} (${row.type}) ${c}${c === 'value' || c === 'inverse' ? (row.tolerance[c] ? ` (${row.tolerance[c]} ulp)` : ' (exact)') : ` (relative ${row.tolerance[c === 'tangent' ? 'gradient' : c]})`}`
    const needs: Capability[] = row.type === 'f64' || row.type === 'f32' ? [row.type] : []
    add('primitives', title('value'), needs, () => valueProblems(row, compile(row.valueSource)))
    add('primitives', title('inverse'), needs, () => inverseProblems(row, compile(row.valueSource)))
    for (const column of ['gradient', 'tangent', 'hessian'] as const) {
      const ad = options.ad
      const reason =
        row.notDifferentiable[column] ??
        (!ad
          ? 'not applicable here: no AD engine given (options.ad)'
          : column === 'tangent' && !ad.jvp
            ? 'not applicable here: no forward mode given (options.ad.jvp)'
            : undefined)
      const colNeeds: Capability[] =
        column === 'hessian' ? [...needs, 'f64', 'gradient', 'hessian'] : [...needs, 'gradient']
      add(
        'primitives',
        title(column),
        colNeeds,
        () =>
          column === 'gradient'
            ? gradientProblems(row, compile(row.lossSource(row.type)), ad!)
            : column === 'tangent'
              ? tangentProblems(row, compile(row.lossSource(row.type)), ad!)
              : hessianProblems(row, compile(row.lossSource(row.type)), compile(row.lossSource('f64')), ad!),
        reason,
      )
    }
  }

  // gradients of random programs
  const gradientsOf = (variant: 'plain' | 'recursion' | 'stacks') => () =>
    randomGradients(ref, bt, options.ad!, variant, seed, programs)
  const noAd = options.ad ? undefined : 'not applicable here: no AD engine given (options.ad)'
  add(
    'gradients',
    `${programs} random f64 programs: adjoint gradients match central differences`,
    ['f64', 'gradient'],
    gradientsOf('plain'),
    noAd,
  )
  add(
    'gradients',
    `${programs} random f64 programs with recursion`,
    ['f64', 'gradient', 'recursion'],
    gradientsOf('recursion'),
    noAd,
  )
  add(
    'gradients',
    `${programs} random f64 programs with stacks`,
    ['f64', 'gradient', 'stacks'],
    gradientsOf('stacks'),
    noAd,
  )

  // error parity: the reference's error (code, message, location) from the program under test
  const parity = (c: ErrorCase): string[] => {
    if (!checks) return ['compiled with run-time checks off (options.checks)']
    const want = failure(() => c.call(ref.compile(c.src)))
    const got = failure(() => c.call(bt.compile(c.src)))
    const problems: string[] = []
    if (!/^runtime\//.test(want)) problems.push(`the reference raised ${want}`)
    if (got !== want) problems.push(`${bt.name} raised ${got}\n${ref.name} raised ${want}`)
    return problems
  }
  add('errors', 'every check of the catalog has a case', [], () => {
    const want = Object.keys(RUNTIME_CHECKS).sort(),
      have = Object.keys(ERROR_CASES).sort()
    return want.join() === have.join() ? [] : [`catalog ${want.join(', ')} ≠ cases ${have.join(', ')}`]
  })
  for (const [check, c] of Object.entries(ERROR_CASES)) {
    if ('only' in c) {
      add('errors', `${check}: raised as ${ref.name} raises it`, [], () => [], `not applicable: only ${c.only}`)
      continue
    }
    add('errors', `${check}: raised as ${ref.name} raises it`, ['checks', 'exceptions', ...(c.needs ?? [])], () =>
      parity(c),
    )
  }
  for (const [name, c] of Object.entries(CALLEE_ERROR_CASES)) {
    add(
      'errors',
      `in a callee, ${name}: raised as ${ref.name} raises it`,
      ['checks', 'exceptions', ...(c.needs ?? [])],
      () => parity(c),
    )
  }
  return out
}

/**
 * The first `n` programs `make` accepts, from seeds `seed`, `seed + 1`, … (at most 20·n tries:
 * a variant such as "with stacks" keeps only the programs that have one).
 */
function programsWhere<P>(seed: number, n: number, make: (seed: number) => P | undefined): P[] {
  const out: P[] = []
  for (let k = 0; out.length < n && k < 20 * n; k++) {
    const p = make(seed + k)
    if (p !== undefined) out.push(p)
  }
  return out
}

/** Options of the real-valued generator per variant (recursion and stacks only where named). */
function realProgram(
  type: 'f64' | 'f32',
  variant: 'plain' | 'recursion' | 'stacks',
  seed: number,
): RealProgram | undefined {
  const p = randomRealProgram(seed, {
    differentiable: true,
    type,
    recursion: variant === 'recursion',
    stacks: variant === 'stacks',
    functions: ['sin', 'cos', 'tanh', 'atan'],
  })
  if (variant === 'recursion' && !p.source.includes('fn r(')) return undefined
  if (variant === 'stacks' && !p.source.includes('stack<')) return undefined
  return p
}

/**
 * Real-valued programs: the backend's forward results within `tol · max(1, scale)` of the
 * reference's, and its inverse of its own results within the same of the inputs — unless the
 * reference's own round trip is as inexact (the program amplifies rounding: counted, not failed).
 */
function realRoundTrips(
  ref: BackendUnderTest,
  bt: BackendUnderTest,
  type: 'f64' | 'f32',
  variant: 'plain' | 'recursion' | 'stacks',
  seed: number,
  programs: number,
): string[] {
  const tol = type === 'f64' ? 1e-9 : 1e-3
  const problems: string[] = []
  let compared = 0
  for (const p of programsWhere(seed + 1000, programs, (s) => realProgram(type, variant, s))) {
    const args = randomRealArgs(p, p.seed)
    const fix = (a: unknown[]) =>
      type === 'f32' ? a.map((v) => (typeof v === 'number' ? Math.fround(v) : Float32Array.from(v as Float64Array))) : a
    const [r, b] = runConformance(p, fix(args), [ref, bt])
    const where = `seed ${p.seed} (${type}, ${variant}):\n${p.source}\n`
    if (r!.error !== undefined || b!.error !== undefined) {
      const code = (e: unknown) =>
        e === undefined ? 'none' : TenetError.isInstance(e) ? (e as TenetError).code : String(e)
      if (code(r!.error) !== code(b!.error))
        problems.push(`${where}${bt.name} error ${code(b!.error)}, ${ref.name} error ${code(r!.error)}`)
      continue
    }
    const scale = Math.max(1, magnitude(r!.forward!))
    if (!Number.isFinite(scale)) continue
    compared++
    const d = distance(b!.forward!, r!.forward!)
    if (!(d <= tol * scale)) problems.push(`${where}forward results differ by ${d} (scale ${scale})`)
    const refTrip = distance(r!.inverse!, r!.input)
    const trip = distance(b!.inverse!, b!.input)
    if (!(trip <= tol * scale || trip <= 4 * refTrip))
      problems.push(`${where}inverse(forward(x)) is ${trip} from x (${ref.name}: ${refTrip})`)
  }
  if (compared === 0) problems.push(`none of the ${programs} programs could be compared`)
  return problems.slice(0, 3)
}

/**
 * Adjoint gradients of random f64 programs (loss: the first argument `w0`) against central
 * differences of the backend's own forward run, over every float input. A mismatch counts as a
 * failure unless the program does not return its inputs when run forwards and backwards on the
 * reference (the adjoint sweep recomputes values by uncomputing, so it is only as exact as the
 * inverse), or a second, larger step agrees.
 */
function randomGradients(
  ref: BackendUnderTest,
  bt: BackendUnderTest,
  ad: ConformanceAd,
  variant: 'plain' | 'recursion' | 'stacks',
  seed: number,
  programs: number,
): string[] {
  const problems: string[] = []
  let checked = 0
  for (const p of programsWhere(seed + 2000, programs, (s) => realProgram('f64', variant, s))) {
    const args = randomRealArgs(p, p.seed)
    const f = bt.compile(p.source).f!
    const where = `seed ${p.seed} (${variant}):\n${p.source}\nargs ${JSON.stringify(args, (_, v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v))}\n`
    // the float inputs: w0, w1, w2, p and the elements of x (n is an i32)
    const flat = (a: readonly unknown[]) => [...(a.slice(0, 4) as number[]), ...(a[5] as Float64Array)]
    const unflat = (v: number[]) => [v[0]!, v[1]!, v[2]!, v[3]!, args[4], Float64Array.from(v.slice(4))]
    let g: number[]
    try {
      g = flat(ad.gradient(f, cloneArgs(args), { loss: 0 }))
    } catch (e) {
      problems.push(`${where}gradient threw ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`)
      continue
    }
    const loss = (v: number[]) => f(...unflat(v))[0] as number
    const mismatch = (h?: number) => {
      const fd = finiteDifference(loss, flat(args), h)
      let worst = -1,
        at = 0
      fd.forEach((d, i) => {
        const e = relativeError(g[i]!, d)
        if (!(e <= worst)) {
          worst = e
          at = i
        }
      })
      return worst <= 1e-5 ? undefined : `input ${at}: adjoint ${g[at]} vs finite differences ${fd[at]}`
    }
    const first = mismatch()
    if (first && mismatch(1e-4)) {
      const [r] = runConformance(p, args, [ref])
      if (r?.inverse && distance(r.inverse, r.input) > 1e-9) continue // unstable uncompute: not a gradient defect
      problems.push(`${where}${first}`)
    }
    checked++
  }
  if (checked === 0) problems.push(`none of the ${programs} programs could be checked`)
  return problems.slice(0, 3)
}

export type { ConformanceAd, PrimitiveRow } from './primitive-table.js'
