/**
 * The fuzzer: seeded, time-bounded campaigns of random programs and random bad input, run
 * against every backend under test. Each campaign is a property that must hold for every
 * program the generators can write:
 *
 * - `i32`: `randomProgram` (every construct, exact integers): forward then inverse returns the
 *   inputs bit for bit, and every backend agrees with the first (the reference interpreter).
 * - `f64`, `fixed`: `randomRealProgram` (reals, recursion, stacks): backends agree bit for bit
 *   (or raise the same error code); the round trip is exact for `fixed` and within rounding for
 *   `f64`.
 * - `gradient`: the adjoint gradient of a random f64 program against finite differences. A
 *   mismatch whose program does not return its inputs when run forwards then backwards (the
 *   uncompute is numerically unstable) is classified `unstable`, not failed: the adjoint sweep
 *   recomputes values by uncomputing, so it can only be as exact as the inverse.
 * - `bad-source`: mutated sources must compile or raise a Tenet error with a code (and a line
 *   and column for syntax and static errors); what compiles must run or raise a Tenet error,
 *   and leave the caller's arrays unchanged when it raises.
 * - `bad-args`: valid programs called with mutated arguments (wrong counts, types, detached
 *   buffers, plain arrays, ...): a result or a Tenet error with a code, arrays unchanged on error.
 *
 * A failure records the campaign, the seed that reproduces it and, where possible, a minimised
 * program that still shows it.
 */
import { TenetError } from '@tenet/ir'
import type { TenetModule } from '@tenet/reversible'
import {
  cloneArgs,
  conformanceProblems,
  runConformance,
  sameBits,
  sameValues,
  showArgs,
  type BackendUnderTest,
} from '../conformance.js'
import { randomArgs, randomProgram } from '../generate.js'
import { Random } from '../random.js'
import { minimizeSource } from './minimize.js'
import { mutateArgs, mutateSource } from './mutate.js'
import { randomRealArgs, randomRealProgram, type RealProgram, type RealType } from './typed-program.js'

/** A backend for the fuzzer: a backend under test and what it supports. */
export interface FuzzBackend extends BackendUnderTest {
  /** Stacks (`push`/`pop`) are lowered (default true). */
  stacks?: boolean
  /** The `fixed` number system is lowered (default true). */
  fixed?: boolean
  /** Run-time checks are on (default true); the bad-input campaigns use only such backends. */
  checks?: boolean
}

/** The campaigns, in the order they run. */
export const CAMPAIGNS = ['i32', 'f64', 'fixed', 'gradient', 'bad-source', 'bad-args'] as const
export type Campaign = (typeof CAMPAIGNS)[number]

/**
 * What the gradient campaign needs: a check of the adjoint gradient against finite differences.
 * `skip` names why a program could not be checked (finite differences that overflow, say); it
 * is counted under that name, not as a failure.
 */
export type FuzzGradientCheck = (source: string, args: unknown[]) => { ok: boolean; detail: string; skip?: string }

/** Options of `fuzz`. */
export interface FuzzOptions {
  /** First seed; campaign k uses seeds derived from it, one per program. */
  seed: number
  /** Total time budget in milliseconds, shared among the campaigns. */
  timeMs: number
  /** Backends under test; the first is the reference (put the interpreter first). */
  backends: FuzzBackend[]
  /** The gradient check; without it the gradient campaign is skipped (and says so in the report). */
  gradient?: FuzzGradientCheck
  /** Relative share of the time per campaign (default: equal shares). */
  shares?: Partial<Record<Campaign, number>>
  /** Failures minimised before reporting (default 3). */
  minimize?: number
}

/** One property violation. */
export interface FuzzFailure {
  campaign: Campaign
  /** The program's seed (reproduce with `fuzzOne(campaign, seed, options)`). */
  seed: number
  source: string
  problem: string
  /** A smaller program that still fails the same property, when one was found. */
  minimized?: string
}

/** What a fuzz run did. */
export interface FuzzReport {
  seed: number
  elapsedMs: number
  /** Programs (or inputs) checked per campaign. */
  counts: Record<Campaign, number>
  /** Outcomes that are not failures, by kind (e.g. `unstable`, `overflow`, `rejected`). */
  classified: Record<string, number>
  failures: FuzzFailure[]
}

const isTenet = (e: unknown): e is TenetError =>
  TenetError.isInstance(e) && typeof (e as TenetError).code === 'string' && (e as TenetError).code.length > 0
const describe = (e: unknown): string =>
  e instanceof Error ? `${e.name}: ${e.message.split('\n')[0]}` : `non-error ${String(e)}`
const supports = (b: FuzzBackend, p: { stacks: boolean; fixed: boolean }) =>
  (!p.stacks || b.stacks !== false) && (!p.fixed || b.fixed !== false)

/** Compiles on one backend, or returns the error. */
/** A problem's kind: its text with numbers and names of generated variables blurred. */
const kindOf = (problem: string | undefined) =>
  (problem ?? '')
    .replace(/[-0-9.e+]+/g, '#')
    .replace(/`[^`]*`/g, '`_`')
    .slice(0, 60)

/**
 * The candidate still compiles on the reference backend and still fails the same way as the
 * original (a smaller program that fails differently — say, one whose deallocation no longer
 * matches — is not a reduction of this failure).
 */
function stillFails(
  reference: BackendUnderTest,
  check: (source: string) => string[],
  original: string[],
): (source: string) => boolean {
  const want = kindOf(original[0])
  return (source) => {
    if ('error' in tryCompile(reference, source)) return false
    const p = check(source)
    return p.length > 0 && kindOf(p[0]) === want
  }
}

function tryCompile(b: BackendUnderTest, source: string): TenetModule | { error: unknown } {
  try {
    return b.compile(source)
  } catch (error) {
    return { error }
  }
}

/** Largest magnitude among the numbers of an argument list. */
function magnitude(values: readonly unknown[]): number {
  let m = 0
  for (const v of values) {
    if (typeof v === 'number') m = Math.max(m, Math.abs(v))
    else if (ArrayBuffer.isView(v))
      for (const x of Array.from(v as unknown as ArrayLike<number>)) m = Math.max(m, Math.abs(x))
  }
  return m
}

/** Largest |a − b| between two argument lists of numbers and typed arrays. */
function distance(a: readonly unknown[], b: readonly unknown[]): number {
  let d = 0
  a.forEach((v, i) => {
    const w = b[i]
    if (typeof v === 'number' && typeof w === 'number') d = Math.max(d, Math.abs(v - w))
    else if (ArrayBuffer.isView(v) && ArrayBuffer.isView(w)) {
      const x = v as unknown as ArrayLike<number>,
        y = w as unknown as ArrayLike<number>
      for (let k = 0; k < x.length; k++) d = Math.max(d, Math.abs(x[k]! - y[k]!))
    }
  })
  return Number.isNaN(d) ? Infinity : d
}

/** Problems of a real-valued program across backends; `classify` counts benign outcomes. */
function realProblems(
  p: RealProgram,
  backends: FuzzBackend[],
  args: unknown[],
  classify: (k: string) => void,
): string[] {
  const eligible = backends.filter((b) =>
    supports(b, { stacks: p.source.includes('stack<'), fixed: p.type === 'fixed' }),
  )
  const results = runConformance(p, args, eligible)
  const problems: string[] = []
  const ref = results[0]!
  const code = (e: unknown) => (isTenet(e) ? e.code : describe(e))
  // values that overflowed to ±Infinity or NaN make a float deallocation check fail: the
  // program's own arithmetic, not a defect (backends without checks then simply run on)
  if (
    p.type === 'f64' &&
    isTenet(ref.error) &&
    ref.error.name === 'InvertibilityError' &&
    /\b(NaN|-?Infinity)\b/.test(ref.error.message)
  ) {
    classify('non-finite values')
    return results
      .filter(
        (r) =>
          eligible[results.indexOf(r)]!.checks !== false &&
          !(isTenet(r.error) && r.error.code === (ref.error as TenetError).code),
      )
      .map(
        (r) =>
          `${r.backend}: ${r.error === undefined ? 'ran' : `threw ${describe(r.error)}`} where ${ref.backend} threw ${describe(ref.error)}`,
      )
  }
  for (const r of results) {
    if (r.error !== undefined) {
      if (!isTenet(r.error)) problems.push(`${r.backend}: raw JS error ${describe(r.error)}`)
      if (ref.error === undefined || code(ref.error) !== code(r.error)) {
        problems.push(
          `${r.backend}: threw ${describe(r.error)}${ref.error === undefined ? ` where ${ref.backend} did not` : ` (${ref.backend}: ${code(ref.error)})`}`,
        )
      } else if ((r.error as TenetError).code === 'runtime/fixed-overflow') classify('overflow')
      else if (p.type === 'f64') problems.push(`${r.backend}: threw ${describe(r.error)} on a valid f64 program`)
      continue
    }
    if (ref.error !== undefined) {
      // without checks a backend drops statements whose results nothing reads (the dead-ancillas
      // pass, documented in the cpu and wasm READMEs), so a run-time error inside them (a fixed
      // overflow in an uncompute) is not raised: running is then allowed, with nothing to compare
      if (
        eligible[results.indexOf(r)]!.checks === false &&
        isTenet(ref.error) &&
        ref.error.name === 'InvertibilityError'
      ) {
        classify('error in dead code (checks off)')
        continue
      }
      problems.push(`${r.backend} ran where ${ref.backend} threw ${describe(ref.error)}`)
      continue
    }
    // (NaN bits may differ between backends: see \`sameValues\`)
    if (r !== ref && !sameValues(r.forward, ref.forward))
      problems.push(`${r.backend} and ${ref.backend} disagree: ${showArgs(r.forward)} vs ${showArgs(ref.forward)}`)
    if (p.type === 'fixed') {
      if (!r.roundTrip)
        problems.push(
          `${r.backend}: inverse(forward(x)) != x (fixed is exact): x = ${showArgs(r.input)}, got ${showArgs(r.inverse)}`,
        )
    } else {
      const scale = Math.max(1, magnitude(r.forward!))
      if (!Number.isFinite(scale)) {
        classify('overflow')
        continue
      }
      // f64 updates are reversible only up to rounding, and a program can amplify that
      // (cancellation after growth): such round trips are classified, not failed. The same
      // programs over `fixed` check the inverse exactly.
      if (r === ref && !(distance(r.inverse!, r.input) <= 1e-9 * scale)) classify('inexact round trip')
    }
  }
  return problems
}

/** Whether a thrown error is acceptable for bad input: a Tenet error with a code, located if it is about source. */
function badInputProblem(e: unknown, what: string): string | undefined {
  if (!isTenet(e)) return `${what}: raw JS error ${describe(e)}`
  if (
    (e.name === 'TenetSyntaxError' || e.name === 'TenetStaticError') &&
    !(typeof e.line === 'number' && e.line >= 1 && typeof e.column === 'number' && e.column >= 1)
  ) {
    return `${what}: ${e.name} (${e.code}) without a valid location (line ${e.line}, column ${e.column}): ${e.message.split('\n')[0]}`
  }
  return undefined
}

/** Calls `f` with `args` and checks the bad-input rules: a Tenet error, arrays unchanged on error. */
function callProblems(f: ((...a: unknown[]) => unknown) | undefined, args: unknown[], what: string): string[] {
  if (!f) return []
  const before = args.map((a) =>
    ArrayBuffer.isView(a) && (a as unknown as { buffer: ArrayBuffer }).buffer.byteLength > 0
      ? (a as unknown as { slice(): unknown }).slice()
      : a,
  )
  try {
    f(...args)
    return []
  } catch (e) {
    const out: string[] = []
    const p = badInputProblem(e, what)
    if (p) out.push(p)
    args.forEach((a, i) => {
      if (ArrayBuffer.isView(a) && before[i] !== a && !sameBits(a, before[i]))
        out.push(
          `${what}: argument ${i} changed by a call that threw ${describe(e)}: ${showArgs([before[i]])} → ${showArgs([a])}`,
        )
    })
    return out
  }
}

/** The `for` loop heads of a source (a mutated program runs only if it kept them all, so it ends). */
/** A loop head whose trip count is a literal or an array length (or the recursion's literal depth). */
const boundedHead = (h: string) =>
  /^for \w+ in -?\d+\.\.=?(-?\d+|len\(\w+\))( by -?\d+)? \{$/.test(h) ||
  /^while \(k\d+ < \d+, k\d+ > 0\) \{$/.test(h) ||
  /\br\(d - 1\b/.test(h)
const loopHeads = (s: string) =>
  s
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => /^(for|while)\b/.test(l) || /\br\(d - 1\b/.test(l))

/** One program of one campaign: the problems found (empty when the property holds). */
export function fuzzOne(
  campaign: Campaign,
  seed: number,
  options: Pick<FuzzOptions, 'backends' | 'gradient'>,
  classify: (kind: string) => void = () => {},
): { source: string; problems: string[]; recheck: (source: string) => boolean } {
  const { backends } = options
  const rng = new Random(seed ^ 0x5bd1e995)
  switch (campaign) {
    case 'i32': {
      const stacks = backends.every((b) => b.stacks !== false) || rng.chance(0.5)
      const p = randomProgram(seed, { features: { stack: stacks } })
      const eligible = backends.filter((b) => supports(b, { stacks, fixed: false }))
      const check = (source: string) => {
        const args = randomArgs(p.signature, seed * 7919)
        return conformanceProblems(runConformance({ source, entry: p.entry }, args, eligible))
      }
      const first = check(p.source)
      // not minimised: removing a statement can change a variable a loop bound reads (the i32
      // generator's bounds are variables) and make the loop run for minutes; the seed reproduces it
      return { source: p.source, problems: first, recheck: () => false }
    }
    case 'f64':
    case 'fixed': {
      const stacks = rng.chance(0.5)
      const p = randomRealProgram(seed, { type: campaign as RealType, stacks })
      const args = randomRealArgs(p, seed)
      const check = (source: string, on = backends) => realProblems({ ...p, source }, on, args, classify)
      const first = check(p.source)
      // candidates run only where checks are on: a removed `k += 1` leaves a while loop that
      // only its post-condition check ends
      const checked = backends.filter((b) => b.checks !== false)
      return {
        source: p.source,
        problems: first,
        recheck: stillFails(backends[0]!, (src) => check(src, checked), first),
      }
    }
    case 'gradient': {
      const gradient = options.gradient
      if (!gradient) return { source: '', problems: [], recheck: () => false }
      const p = randomRealProgram(seed, { type: 'f64', stacks: rng.chance(0.3), maxStatements: 10 })
      const args = randomRealArgs(p, seed)
      const check = (source: string): string[] => {
        let r: ReturnType<FuzzGradientCheck>
        try {
          r = gradient(source, cloneArgs(args))
        } catch (e) {
          // a static rejection by the AD transform (a construct it documents as not
          // differentiable) is a clear answer, not a wrong one
          if (isTenet(e) && e.name === 'TenetStaticError') {
            classify('not differentiable')
            return []
          }
          // the gradient drivers' own instability check (the recomputed inputs differ from the
          // inputs): the documented answer for such a program
          if (isTenet(e) && e.code === 'ad/uncompute') {
            classify('unstable (reported by the driver)')
            return []
          }
          if (isTenet(e) && e.name === 'InvertibilityError' && /\b(NaN|-?Infinity)\b/.test(e.message)) {
            classify('non-finite values')
            return []
          }
          return [`gradient threw ${describe(e)}`]
        }
        if (r.skip) {
          classify(r.skip)
          return []
        }
        if (r.ok) return []
        // the instability check: does the program return its inputs when run forwards and back?
        const [ref] = runConformance({ source, entry: 'f' }, args, [backends[0]!])
        // (the inputs are at most 1 in magnitude: an absolute bound is a relative one)
        if (ref?.inverse && distance(ref.inverse, ref.input) > 1e-9) {
          classify('unstable')
          return []
        }
        return [`gradient differs from finite differences: ${r.detail}`]
      }
      const first = check(p.source)
      return { source: p.source, problems: first, recheck: stillFails(backends[0]!, check, first) }
    }
    case 'bad-source': {
      const base = rng.chance(0.5)
        ? randomProgram(seed, { maxStatements: 10 })
        : randomRealProgram(seed, { maxStatements: 10 })
      const args = 'signature' in base ? randomArgs(base.signature, seed) : randomRealArgs(base, seed)
      let source = base.source
      for (let k = rng.int(1, 2); k > 0; k--) source = mutateSource(source, rng)
      // a mutated program runs only if it must end: its loop heads (and the recursive call) are
      // unchanged, and their bounds are literals or array lengths (an i32 program's bounds are
      // variables, which a mutation elsewhere could make huge)
      const runs = loopHeads(source).every((h) => loopHeads(base.source).includes(h) && boundedHead(h))
      const check = (src: string): string[] => {
        const problems: string[] = []
        for (const b of backends) {
          if (b.checks === false) continue
          const m = tryCompile(b, src)
          if ('error' in m) {
            const p = badInputProblem(m.error, `${b.name}: compiling`)
            if (p) problems.push(p)
            else classify('rejected')
            continue
          }
          if (runs)
            problems.push(
              ...callProblems(m.f as ((...a: unknown[]) => unknown) | undefined, cloneArgs(args), `${b.name}: running`),
            )
        }
        return problems
      }
      return { source, problems: check(source), recheck: (s) => check(s).length > 0 }
    }
    case 'bad-args': {
      const base = rng.chance(0.5)
        ? randomProgram(seed, { maxStatements: 8, features: { stack: false } })
        : randomRealProgram(seed, { maxStatements: 8, stacks: false })
      const good = 'signature' in base ? randomArgs(base.signature, seed) : randomRealArgs(base, seed)
      const bad = mutateArgs(good, rng, { extremeNumbers: !('signature' in base) })
      const check = (src: string): string[] => {
        const problems: string[] = []
        for (const b of backends) {
          if (b.checks === false) continue
          const m = tryCompile(b, src)
          if ('error' in m) {
            problems.push(`${b.name}: a valid program did not compile: ${describe(m.error)}`)
            continue
          }
          const args = bad.map((a) =>
            ArrayBuffer.isView(a) && (a as unknown as { buffer: ArrayBuffer }).buffer.byteLength > 0
              ? (a as unknown as { slice(): unknown }).slice()
              : a,
          )
          problems.push(...callProblems(m.f as (...a: unknown[]) => unknown, args, `${b.name}: f(${showArgs(bad)})`))
        }
        return problems
      }
      const first = check(base.source)
      // (i32 programs are not minimised: their loop bounds are variables, see the i32 campaign)
      return {
        source: base.source,
        problems: first,
        recheck: 'signature' in base ? () => false : stillFails(backends[0]!, check, first),
      }
    }
  }
}

/**
 * Runs every campaign for its share of `timeMs`, each over consecutive seeds from `seed`, and
 * reports the counts, the benign outcomes and the failures (the first `minimize` of them
 * minimised). Never throws on a failing program: failures are in the report.
 */
export function fuzz(options: FuzzOptions): FuzzReport {
  const start = Date.now()
  const counts = Object.fromEntries(CAMPAIGNS.map((c) => [c, 0])) as Record<Campaign, number>
  const classified: Record<string, number> = {}
  let muted = false // outcomes of the minimiser's reruns are not counted
  const classify = (k: string) => {
    if (!muted) classified[k] = (classified[k] ?? 0) + 1
  }
  const failures: FuzzFailure[] = []
  const active = CAMPAIGNS.filter((c) => c !== 'gradient' || options.gradient)
  const total = active.reduce((s, c) => s + (options.shares?.[c] ?? 1), 0)
  let budgetEnd = start
  active.forEach((campaign, k) => {
    budgetEnd += (options.timeMs * (options.shares?.[campaign] ?? 1)) / total
    let seed = options.seed + k * 1_000_003
    do {
      const r = fuzzOne(campaign, seed, options, classify)
      counts[campaign]++
      if (r.problems.length) {
        const failure: FuzzFailure = { campaign, seed, source: r.source, problem: r.problems.slice(0, 3).join('\n') }
        if (failures.length < (options.minimize ?? 3)) {
          muted = true
          const small = minimizeSource(r.source, r.recheck, 200)
          muted = false
          if (small !== r.source) failure.minimized = small
        }
        failures.push(failure)
      }
      seed++
    } while (Date.now() < budgetEnd)
  })
  return { seed: options.seed, elapsedMs: Date.now() - start, counts, classified, failures }
}

/** A one-line summary of a report, plus every failure (program, problem, minimised program). */
export function formatReport(r: FuzzReport): string {
  const counts = CAMPAIGNS.map((c) => `${c} ${r.counts[c]}`).join(', ')
  const classified = Object.entries(r.classified)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ')
  const head = `fuzz (seed ${r.seed}, ${(r.elapsedMs / 1000).toFixed(1)} s): ${counts}${classified ? `; not failures: ${classified}` : ''}; ${r.failures.length} failures`
  const details = r.failures
    .slice(0, 5)
    .map(
      (f) =>
        `\n--- ${f.campaign}, seed ${f.seed}:\n${f.problem}\n${f.minimized ? `minimised program:\n${f.minimized}` : `program:\n${f.source}`}`,
    )
  return head + details.join('')
}
