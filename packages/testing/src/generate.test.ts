import { describe, expect, it } from 'vitest'
import { check, createRegistry, parse } from '@tenet/ir'
import { walk } from '@tenet/ir/backend'
import { preprocess } from '@tenet/reversible'
import { randomArgs, randomProgram, Random } from './index.js'

/** What every construct the generator promises looks like in the source. */
const CONSTRUCTS: Record<string, RegExp> = {
  '+=': /\+= /,
  '-=': /[^<]-= /,
  '^=': /\^= /,
  'array element': /\w\[[^\]]+\]/,
  'loop-variable index': /\[i\d( [+-] \d)?\]/,
  'len(a)': /len\(\w+\)/,
  'SWAP(a, b)': /SWAP\(/,
  'a <-> b': /<->/,
  NEG: /NEG\(/,
  INC: /INC\(/,
  DEC: /DEC\(/,
  'negated dataview': /^\s*-\w|\(-\w+[,)]|, -\w/m,
  'if (c, ~)': /if \(.*, ~\)/,
  'if with explicit post-condition': /if \((.*), (?!~\)).*\)/,
  else: /} else /,
  'else if': /else if/,
  'for a..b': /for i\d in \S+\.\.(?!=)/,
  'for a..=b': /\.\.=/,
  'for by positive step': /by [1-9]/,
  'for by negative step': /by -/,
  'nested for': /for i1 /,
  'for in reverse': /in reverse /,
  'run-time step': /by \(/,
  'while (pre, post)': /while \(/,
  'x: i32 <- e': /: i32 <- (?!0\b)/,
  'x -> e': /-> (?!0\b|\[\])/,
  routine: /routine \{/,
  '~routine': /~routine/,
  '~{ }': /~\{/,
  call: /^\s*g\(/m,
  uncall: /~g\(/,
  'array argument': /g\([^)]*\ba\d\b(?!\[)/,
  stack: /stack<i32> <- \[\]/,
  push: /push\(/,
  pop: /pop\(/,
  '@unchecked': /@unchecked/,
  '%': / % /,
  div: /div\(/,
  '**': / \*\* /,
  'i32(f64(...))': /i32\(f64\(/,
  'literal i32 extremes': /2147483647|-2147483648/,
}

describe('randomProgram', () => {
  it('is deterministic in its seed', () => {
    expect(randomProgram(42).source).toBe(randomProgram(42).source)
    expect(randomProgram(42).source).not.toBe(randomProgram(43).source)
  })

  it('covers every construct it promises, in a few hundred programs', () => {
    const counts = Object.fromEntries(Object.keys(CONSTRUCTS).map((k) => [k, 0]))
    for (let seed = 0; seed < 400; seed++) {
      const s = randomProgram(seed).source
      for (const [k, re] of Object.entries(CONSTRUCTS)) if (re.test(s)) counts[k]!++
    }
    const rare = Object.entries(counts).filter(([, n]) => n < 5)
    expect(rare).toEqual([])
  })

  it('produces programs the checker accepts, with the declared signature', () => {
    const registry = createRegistry()
    for (let seed = 0; seed < 200; seed++) {
      const p = randomProgram(seed)
      const mod = parse(p.source)
      const program = check(mod.functions.map(preprocess), [], registry)
      const f = program.functions.get('f')!
      expect(
        f.params.map(
          (q) => `${q.name}: ${q.type.kind === 'array' ? q.type.elem + '[]' : (q.type as { name: string }).name}`,
        ),
      ).toEqual(p.signature.params.map((q) => `${q.name}: ${q.type}`))
      expect(program.functions.size).toBe(p.functions.length)
    }
  })

  it('writes array statements whose distinct indices are only checked at run time', () => {
    // `a[i] += a[0]` with i in 1..n: the checker cannot prove i != 0, so it asks for a run-time
    // check, and the generator knows from the loop range that the check passes
    const registry = createRegistry()
    let checked = 0
    for (let seed = 0; seed < 300; seed++) {
      const program = check(parse(randomProgram(seed).source).functions.map(preprocess), [], registry)
      for (const f of program.functions.values())
        walk(f.body, (st) => {
          if ((st as { distinct?: unknown[] }).distinct?.length) checked++
        })
    }
    expect(checked).toBeGreaterThan(10)
  })

  it('leaves out disabled constructs', () => {
    for (let seed = 0; seed < 100; seed++) {
      const s = randomProgram(seed, {
        features: {
          for: false,
          while: false,
          call: false,
          stack: false,
          routine: false,
          inverseBlock: false,
          arrays: false,
        },
      }).source
      expect(s).not.toMatch(/\bfor\b|\bwhile\b|\bg\(|stack|routine|~\{|\[/)
    }
  })

  it('respects the statement budget roughly', () => {
    const small = randomProgram(7, { maxStatements: 3 }).source.split('\n').length
    const large = randomProgram(7, { maxStatements: 60 }).source.split('\n').length
    expect(small).toBeLessThan(large)
  })
})

describe('randomArgs', () => {
  it('matches the signature and is deterministic', () => {
    for (let seed = 0; seed < 50; seed++) {
      const p = randomProgram(seed)
      const args = randomArgs(p.signature, seed)
      expect(args).toEqual(randomArgs(p.signature, seed))
      p.signature.params.forEach((q, i) => {
        const a = args[i]!
        if (q.type === 'i32') expect(Number.isInteger(a) && (a as number) === ((a as number) | 0)).toBe(true)
        else {
          expect(a).toBeInstanceOf(Int32Array)
          expect((a as Int32Array).length).toBe(q.length)
        }
      })
    }
  })

  it('gives helper arrays a length between their minimum and maximum', () => {
    const sig = { name: 'g', params: [{ name: 'c0', type: 'i32[]' as const, length: 2, maxLength: 6 }] }
    const lengths = new Set(Array.from({ length: 100 }, (_, s) => (randomArgs(sig, s)[0] as Int32Array).length))
    expect([...lengths].every((n) => n >= 2 && n <= 6)).toBe(true)
    expect(lengths.size).toBeGreaterThan(2)
  })
})

describe('Random', () => {
  it('is uniform enough and stays in range', () => {
    const r = new Random(1)
    const hist = [0, 0, 0, 0]
    for (let i = 0; i < 4000; i++) hist[r.int(0, 3)]!++
    for (const h of hist) expect(h).toBeGreaterThan(850)
    for (let i = 0; i < 1000; i++) {
      const v = r.int32()
      expect(v).toBe(v | 0)
    }
  })
})
