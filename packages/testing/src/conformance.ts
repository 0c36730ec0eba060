/**
 * Backend conformance: run a program forwards and then backwards on several backends and
 * compare, bit for bit, with the inputs and with each other.
 */
import { createRegistry, parse, printFunction, type BackendSpec, type Registry } from '@tenet/ir'
import { compileModule, interpreterBackend, type TenetModule } from '@tenet/reversible'
import { randomArgs, type RandomProgram } from './generate.js'

/** A backend under test: a name and a way to compile Tenet source with it. */
export interface BackendUnderTest {
  name: string
  compile(source: string): TenetModule
}

/** Wraps a backend plugin (with the standard registry, or `registry` plus the backend). */
export function backendUnderTest(
  spec: BackendSpec,
  options: { registry?: Registry; checks?: boolean } = {},
): BackendUnderTest {
  const registry = options.registry ?? createRegistry()
  if (!registry.names('backend').includes(spec.name)) registry.registerBackend(spec)
  const cache = new Map<string, TenetModule>()
  return {
    name: spec.name,
    compile(source) {
      let m = cache.get(source)
      if (!m) {
        m = compileModule(parse({ text: source, name: 'conformance program' }), {
          registry,
          backend: spec.name,
          ...(options.checks !== undefined ? { checks: options.checks } : {}),
        })
        if (cache.size > 8) cache.clear()
        cache.set(source, m)
      }
      return m
    },
  }
}

/** `b` as a backend under test (a backend plugin is wrapped with the standard registry). */
function asBackendUnderTest(b: BackendUnderTest | BackendSpec): BackendUnderTest {
  return 'compile' in b ? b : backendUnderTest(b)
}

/** The reference interpreter as a backend under test. */
export const referenceBackend = (options?: { registry?: Registry; checks?: boolean }): BackendUnderTest =>
  backendUnderTest(interpreterBackend, options)

/** What one backend did with one program and one argument list. */
export interface ConformanceResult {
  backend: string
  /** A copy of the arguments as passed. */
  input: unknown[]
  /** The forward results (copied), when the forward run succeeded. */
  forward?: unknown[]
  /** The inverse applied to the forward results (copied), when it succeeded. */
  inverse?: unknown[]
  /** The error thrown by compilation or by either run. */
  error?: unknown
  /** True when `inverse` is bit-identical to `input`. */
  roundTrip: boolean
}

/** A deep copy of an argument list (typed arrays and stacks copied). */
export function cloneArgs(args: readonly unknown[]): unknown[] {
  return args.map((a) =>
    ArrayBuffer.isView(a) ? (a as unknown as { slice(): unknown }).slice() : Array.isArray(a) ? cloneArgs(a) : a,
  )
}

/**
 * Bit-for-bit equality of values: typed arrays byte for byte (so NaN payloads and the sign of
 * zero count), plain arrays element-wise, anything else (numbers included) by `Object.is`, so
 * -0 ≠ 0 but any NaN equals any other: a JS number does not reliably keep its NaN payload.
 */
export function sameBits(a: unknown, b: unknown): boolean {
  if (ArrayBuffer.isView(a) && ArrayBuffer.isView(b)) {
    if (a.constructor !== b.constructor || a.byteLength !== b.byteLength) return false
    const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength),
      y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength)
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false
    return true
  }
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => sameBits(v, b[i]))
  return Object.is(a, b)
}

/**
 * Equality of results across backends: as \`sameBits\`, except that in float typed arrays any NaN
 * equals any other. Which NaN an operation produces (its sign and payload) is left open by
 * WebAssembly and by JS engines, so two backends that compute the same values may store
 * different NaN bits; every other bit (the sign of zero included) must match.
 */
export function sameValues(a: unknown, b: unknown): boolean {
  if (
    (a instanceof Float64Array && b instanceof Float64Array) ||
    (a instanceof Float32Array && b instanceof Float32Array)
  ) {
    if (a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false
    return true
  }
  if (ArrayBuffer.isView(a) && ArrayBuffer.isView(b)) return sameBits(a, b)
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => sameValues(v, b[i]))
  return Object.is(a, b)
}

/** Formats an argument list for failure messages. */
export function showArgs(args: readonly unknown[] | undefined): string {
  if (!args) return '(none)'
  const one = (a: unknown): string => {
    if (ArrayBuffer.isView(a)) {
      try {
        return `${a.constructor.name}[${Array.from(a as unknown as ArrayLike<number>).join(', ')}]`
      } catch {
        return `${a.constructor.name}(detached)`
      }
    }
    if (Array.isArray(a)) return showArgs(a)
    if (typeof a === 'bigint') return `${a}n`
    if (typeof a === 'symbol' || typeof a === 'function') return typeof a
    if (typeof a === 'string') return JSON.stringify(a)
    if (a !== null && typeof a === 'object') return '{…}'
    return Object.is(a, -0) ? '-0' : String(a)
  }
  return `[${args.map(one).join(', ')}]`
}

/**
 * Runs `program.entry` forwards on a copy of `args`, then its inverse on the results, on each
 * backend. Never throws: compile and run errors are reported in the results.
 */
export function runConformance(
  program: { source: string; entry: string },
  args: readonly unknown[],
  backends: ReadonlyArray<BackendUnderTest | BackendSpec>,
): ConformanceResult[] {
  return backends.map((b) => {
    const bt = asBackendUnderTest(b)
    const input = cloneArgs(args)
    const result: ConformanceResult = { backend: bt.name, input, roundTrip: false }
    try {
      const f = bt.compile(program.source)[program.entry]
      if (!f) throw new Error(`no function \`${program.entry}\` in the program`)
      const out = f(...cloneArgs(args))
      result.forward = cloneArgs(out)
      const back = f.inverse(...cloneArgs(out))
      result.inverse = cloneArgs(back)
      result.roundTrip = sameBits(result.inverse, input)
    } catch (e) {
      result.error = e
    }
    return result
  })
}

/**
 * The problems in a set of conformance results: errors, failed round trips, and forward
 * results that differ from the first backend's. Empty when everything conforms.
 */
export function conformanceProblems(results: readonly ConformanceResult[]): string[] {
  const problems: string[] = []
  const ref = results[0]
  for (const r of results) {
    if (r.error !== undefined) {
      problems.push(
        `${r.backend}: threw ${r.error instanceof Error ? `${r.error.name}: ${r.error.message}` : String(r.error)}`,
      )
      continue
    }
    if (!r.roundTrip)
      problems.push(
        `${r.backend}: inverse(forward(x)) != x: x = ${showArgs(r.input)}, forward = ${showArgs(r.forward)}, inverse = ${showArgs(r.inverse)}`,
      )
    if (ref && r !== ref && ref.error === undefined && !sameBits(r.forward, ref.forward)) {
      problems.push(
        `${r.backend} and ${ref.backend} disagree on the forward results: ${showArgs(r.forward)} vs ${showArgs(ref.forward)}`,
      )
    }
  }
  return problems
}

/** The `k`th random argument list of a generated program (the same in every check). */
function argSet(program: RandomProgram, k: number): Array<number | Int32Array> {
  return randomArgs(program.signature, program.seed * 7919 + k)
}

/**
 * Every conformance problem of a generated program on `backends`, over `argSets` random
 * argument lists: errors, failed round trips, disagreement with the first backend (put the
 * reference interpreter first).
 */
export function programProblems(
  program: RandomProgram,
  backends: ReadonlyArray<BackendUnderTest | BackendSpec>,
  options: { argSets?: number } = {},
): string[] {
  const problems: string[] = []
  const bts = backends.map(asBackendUnderTest) // wrapped once: each wrapper caches its compiled programs
  for (let k = 0; k < (options.argSets ?? 1); k++) {
    problems.push(...conformanceProblems(runConformance(program, argSet(program, k), bts)))
  }
  return problems
}

/**
 * Source round trips of a program on one backend:
 * - printing a function (`m.f.source`, `m.f.inverse.source`), parsing it and printing it again
 *   gives the same text;
 * - the printed inverses (`f_inverse`, ...) compiled together with the original source behave
 *   as the inverse, bit for bit (and their inverses as the originals).
 */
export function roundTripProblems(
  program: RandomProgram,
  backend: BackendUnderTest | BackendSpec,
  options: { argSets?: number } = {},
): string[] {
  const bt = asBackendUnderTest(backend)
  const problems: string[] = []
  try {
    const m = bt.compile(program.source)
    const names = program.functions.map((s) => s.name)
    for (const n of names) {
      for (const text of [m[n]!.source, m[n]!.inverse.source]) {
        const again = printFunction(parse({ text, name: 'printed function' }).functions[0]!)
        if (again !== text) problems.push(`printing the parsed \`${n}\` changed it:\n${text}\n--- became ---\n${again}`)
      }
    }
    const both = bt.compile([program.source, ...names.map((n) => m[n]!.inverse.source)].join('\n\n'))
    const f = m[program.entry]!,
      fInverse = both[`${program.entry}_inverse`]!
    for (let k = 0; k < (options.argSets ?? 1); k++) {
      const args = argSet(program, k)
      const out = cloneArgs(f(...cloneArgs(args)))
      const back = fInverse(...cloneArgs(out))
      if (!sameBits(back, args))
        problems.push(
          `the reparsed \`${program.entry}_inverse\` does not undo \`${program.entry}\`: x = ${showArgs(args)}, f(x) = ${showArgs(out)}, f_inverse(f(x)) = ${showArgs(back)}`,
        )
      const again = fInverse.inverse(...cloneArgs(args))
      if (!sameBits(again, out))
        problems.push(
          `the inverse of the reparsed \`${program.entry}_inverse\` is not \`${program.entry}\`: x = ${showArgs(args)}, f(x) = ${showArgs(out)}, got ${showArgs(again)}`,
        )
    }
  } catch (e) {
    problems.push(`threw ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`)
  }
  return problems
}
