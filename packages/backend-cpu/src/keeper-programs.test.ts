/**
 * Random branch-keeper programs (the shape of paper 000's sparse dot product): a loop records
 * its decisions in an array ancilla, uses them, and undoes them in the same iteration. Without
 * checks, `sink-ancillas` gives the array to each iteration, `dead-ancillas` drops the uncompute
 * and `contract-arrays` makes the array a scalar. The programs must compute the same bits as the
 * reference interpreter (checks on), forwards and backwards, whether or not the passes apply;
 * variants where they must not apply (the uncompute is not the exact inverse, something between
 * writes what the decisions read, the state is a float) check that they do not.
 */
import { describe, expect, it } from 'vitest'
import { createRegistry } from '@tenet/ir'
import { backendUnderTest, conformanceProblems, optimisedIr, referenceBackend, runConformance } from '@tenet/testing'
import { cpuBackend } from './index.js'

const VARIANTS = [
  'plain',
  'mid-read',
  'adjoint-shaped',
  'reversed-index',
  'int-keeper',
  'mid-write',
  'float-state',
  'mismatch',
  'carried',
] as const
type Variant = (typeof VARIANTS)[number]
/** The variants whose keeper `sink-ancillas` gives to each column. */
const MOVED = new Set<Variant>(['plain', 'mid-read', 'int-keeper', 'reversed-index', 'adjoint-shaped'])

/**
 * What each variant must become without checks: the loops of \`f\` (the column loop, the decision
 * loop, the uncompute where it stays) and the updates of the keeper left in them.
 */
const EXPECT: Record<Variant, { loops: number; keeperUpdates: number; why: string }> = {
  plain: { loops: 2, keeperUpdates: 1, why: 'the uncompute goes, the keeper is a scalar' },
  'mid-read': { loops: 2, keeperUpdates: 1, why: 'reads between the pair: the uncompute goes' },
  'int-keeper': { loops: 2, keeperUpdates: 1, why: 'an i32 keeper added and subtracted: the uncompute goes' },
  'reversed-index': { loops: 2, keeperUpdates: 1, why: 'the uncompute goes, the keeper stays an array' },
  'adjoint-shaped': {
    loops: 3,
    keeperUpdates: 1,
    why: 'the reverse loop stays for its other work, without the keeper update',
  },
  'mid-write': { loops: 3, keeperUpdates: 2, why: 'a write between the pair of what the decisions read' },
  'float-state': { loops: 3, keeperUpdates: 2, why: 'float state: the inverse is not exact' },
  mismatch: { loops: 3, keeperUpdates: 2, why: 'the uncompute is written differently: not matched' },
  carried: { loops: 2, keeperUpdates: 1, why: 'the decisions carry over to later columns: the keeper stays' },
}

/** A small deterministic generator (the programs differ in their conditions and amounts). */
function rng(seed: number): () => number {
  let s = seed * 2654435761 + 1
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) | 0
    return ((s >>> 8) & 0xffff) / 0x10000
  }
}

function keeperProgram(variant: Variant, seed: number): string {
  const r = rng(seed)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
  if (variant === 'carried') {
    // the first column sets decisions that the middle columns read and the last clears: one loop
    // uses the keeper, but its iterations do not restore it (sinking it would change r)
    return `fn f(r: f64, n: i32, m: i32, a: i32[], b: f64[]) {
  keeper: bool[] <- zeros(m)
  for j in 0..n {
    for i in 0..m {
      if (keeper[i], ~) { r += b[i] * ${pick(['0.5', '1.5', 'f64(j)'])} }
      keeper[i] ^= (j == 0 || j == n - 1) && a[${pick(['i', 'm - 1 - i'])}] ${pick(['<', '>', '<='])} ${pick(['0', '1'])}
    }
  }
  keeper -> zeros(m)
}`
  }
  const float = variant === 'float-state'
  const s = float ? 'x' : 's'
  const up = pick(['1', '2', '3']),
    tup = pick(['1', '2'])
  const inc = float ? `${up}.0` : up
  const cmp = pick(['<', '>', '<=']),
    other = pick(['a[i]', 'a[m - 1 - i]', 't + a[i]'])
  const lhs = float ? `${s} ${cmp} f64(${other})` : `${s} ${cmp} ${other}`
  // the decision: a bool (xor) or an int (added) keeper
  const intKeeper = variant === 'int-keeper'
  const at = variant === 'reversed-index' ? 'm - 1 - i' : 'i'
  const decide = intKeeper ? `keeper[${at}] += ${s === 'x' ? 'i32(x)' : s} - a[i]` : `keeper[${at}] ^= ${lhs}`
  const test = intKeeper ? `keeper[${at}] > 0` : `keeper[${at}]`
  const branch = `if (${test}, ~) {
          ${s} += ${inc}
        } else {
          t += ${tup}
        }`
  const extra = pick([
    `if (t > 0 && ${float ? 'x > 0.0' : 's > 0'}, ~) { r += b[i] * ${float ? 'x' : 'f64(s)'} }`,
    `r += b[i] * f64(t)`,
  ])
  const mismatched = variant === 'mismatch' ? lhs.replace(/ (<|>|<=) /, (_m, op) => ` ${op} 0 + `) : lhs
  const undecide = intKeeper ? decide : variant === 'mismatch' ? `keeper[${at}] ^= ${mismatched}` : decide
  const uncompute =
    variant === 'adjoint-shaped'
      ? `for i in reverse 0..m {
        if (${test}, ~) {
          ${s} -= ${inc}
        } else {
          t -= ${tup}
        }
        ${undecide}
        r -= b[i] * 0.5
      }`
      : `~{
        for i in 0..m {
          ${undecide}
          ${branch}
        }
      }`
  const mid =
    variant === 'mid-read'
      ? `r += ${float ? 'x' : 'f64(s)'}`
      : variant === 'mid-write'
        ? `${s} += ${inc}\n      ${s} -= ${inc}`
        : ''
  const init = float ? 'x: f64 <- f64(a[j])' : 's: i32 <- a[j]'
  const fin = float ? 'x -> f64(a[j])' : 's -> a[j]'
  const kt = intKeeper ? 'i32' : 'bool'
  return `fn f(r: f64, n: i32, m: i32, a: i32[], b: f64[]) {
  keeper: ${kt}[] <- zeros(m)
  for j in 0..n {
    ${init}
    t: i32 <- 0
    @unchecked {
      for i in 0..m {
        ${extra}
        ${decide}
        ${branch}
      }
      ${mid}
      ${uncompute}
    }
    t -> 0
    ${fin}
  }
  keeper -> zeros(m)
}`
}

function args(seed: number): unknown[] {
  const r = rng(seed + 99)
  const m = 3 + Math.floor(r() * 6)
  const a = Int32Array.from({ length: m + 2 }, () => Math.floor(r() * 9) - 4)
  const b = Float64Array.from({ length: m }, () => r() * 2 - 1)
  return [0.25, 2 + Math.floor(r() * m), m, a, b]
}

const registry = createRegistry()
const backends = [
  referenceBackend(),
  backendUnderTest(cpuBackend, { registry }),
  { ...backendUnderTest(cpuBackend, { registry, checks: false }), name: 'cpu (checks off)' },
]
/** The optimised IR the cpu backend compiles (checks off). */
const optimised = (source: string): string => optimisedIr(cpuBackend, source, { name: 'keeper' })

describe('random branch-keeper programs: every backend, checks on and off, agrees with the interpreter', () => {
  for (const variant of VARIANTS) {
    const want = EXPECT[variant]
    it(`${variant} (${want.why}): the bits agree`, () => {
      const failures: string[] = []
      for (let seed = 0; seed < 8; seed++) {
        const source = keeperProgram(variant, seed)
        for (let k = 0; k < 2; k++) {
          const problems = conformanceProblems(runConformance({ source, entry: 'f' }, args(seed * 3 + k), backends))
          if (problems.length) failures.push(`seed ${seed}:\n${source}\n${problems.join('\n')}`)
        }
        const ir = optimised(source)
        const loops = ir.match(/^ *for /gm)?.length ?? 0
        // an update of the keeper, or the contracted keeper allocated with its first update
        const updates =
          ir.match(/^ *keeper(\[[^\n]*\] (\^=|\+=|-=)|\$ct (\^=|\+=|-=)|\$ct: \w+ <- (?!false$|0$))/gm)?.length ?? 0
        const moved = !/^ {2}keeper: \w+\[\] <- zeros/m.test(ir)
        if (loops !== want.loops || updates !== want.keeperUpdates || moved !== MOVED.has(variant))
          failures.push(
            `seed ${seed}: ${loops} loops, ${updates} keeper updates, moved ${moved}; expected ${want.loops}, ${want.keeperUpdates}, ${MOVED.has(variant)}\n${ir}`,
          )
      }
      expect(failures.slice(0, 2).join('\n\n')).toBe('')
    })
  }
})
