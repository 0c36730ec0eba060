/**
 * Test helpers: the operations both engines (and plain numbers) share, and a generator of random
 * plain-TS programs (loops, branches on values, recursion, nested records) that run on any of them.
 * A program is data interpreted by ordinary JS control flow, so the differentiated function is plain
 * JS with loops, ifs and recursive calls.
 */
import { Random } from '@tenet/testing'

/** The scalar operations a test program may use, over any scalar representation T. */
export interface Ops<T> {
  value(x: T): number
  /** Optional: a comparison that a staged engine records as a guard (else `value` is used). */
  compare?(x: T, y: T): number
  constant(c: number): T
  add(x: T, y: T): T
  sub(x: T, y: T): T
  mul(x: T, y: T): T
  div(x: T, y: T): T
  neg(x: T): T
  scale(x: T, c: number): T
  offset(x: T, c: number): T
  square(x: T): T
  sin(x: T): T
  cos(x: T): T
  exp(x: T): T
  log(x: T): T
  sqrt(x: T): T
  tanh(x: T): T
}

/** Plain numbers: the objective itself, for finite differences. */
export const plain: Ops<number> = {
  value: (x) => x,
  constant: (c) => c,
  add: (x, y) => x + y,
  sub: (x, y) => x - y,
  mul: (x, y) => x * y,
  div: (x, y) => x / y,
  neg: (x) => -x,
  scale: (x, c) => c * x,
  offset: (x, c) => x + c,
  square: (x) => x * x,
  sin: Math.sin,
  cos: Math.cos,
  exp: Math.exp,
  log: Math.log,
  sqrt: Math.sqrt,
  tanh: Math.tanh,
}

/** The input record every random program takes. */
export interface ProgramInput<S> {
  a: S
  b: S[]
  c: { d: S; e: [S, S] }
}

type Unary = 'sin' | 'cos' | 'tanh' | 'square' | 'safeLog' | 'safeSqrt' | 'safeExp' | 'neg' | 'scale'
type Binary = 'add' | 'sub' | 'mul' | 'safeDiv'
type Stmt =
  | { kind: 'unary'; op: Unary; x: number; c: number }
  | { kind: 'binary'; op: Binary; x: number; y: number }
  | { kind: 'if'; x: number; y: number; then: Stmt[]; else: Stmt[] }
  | { kind: 'loop'; times: number; acc: number; body: Stmt[] }
  | { kind: 'recurse'; depth: number; x: number }

/** A random program: statements over a growing list of variables, result = Σ of the last few. */
export interface Program {
  body: Stmt[]
  outputs: number
  seed: number
}

/** How many variables a block adds (an if adds the larger of its branches; a loop adds none). */
function count(body: Stmt[]): number {
  let n = 0
  for (const s of body) {
    if (s.kind === 'unary' || s.kind === 'binary' || s.kind === 'recurse') n++
    else if (s.kind === 'if') n += Math.max(count(s.then), count(s.else))
  }
  return n
}

/** Generates a random program from a seed (reproducible). */
export function randomProgram(seed: number, size = 8): Program {
  const rng = new Random(seed)
  let vars = 7 // a, b[0..2], c.d, c.e[0..1]
  const unary: Unary[] = ['sin', 'cos', 'tanh', 'square', 'safeLog', 'safeSqrt', 'safeExp', 'neg', 'scale']
  const binary: Binary[] = ['add', 'sub', 'mul', 'safeDiv']
  const block = (n: number, depth: number): Stmt[] => {
    const out: Stmt[] = []
    for (let i = 0; i < n; i++) {
      const r = rng.next()
      const pick = () => rng.int(0, vars - 1)
      if (depth < 2 && r < 0.12) {
        const x = pick(),
          y = pick()
        const before = vars
        const then = block(rng.int(1, 3), depth + 1)
        const afterThen = vars
        vars = before
        const otherwise = block(rng.int(1, 3), depth + 1)
        vars = Math.max(afterThen, vars)
        out.push({ kind: 'if', x, y, then, else: otherwise })
      } else if (depth < 2 && r < 0.22) {
        const before = vars
        const acc = pick()
        const body = block(rng.int(1, 2), depth + 1)
        vars = before
        if (body.length > 0 && count(body) > 0) out.push({ kind: 'loop', times: rng.int(1, 4), acc, body })
      } else if (r < 0.3) {
        out.push({ kind: 'recurse', depth: rng.int(0, 4), x: pick() })
        vars++
      } else if (r < 0.65) {
        out.push({ kind: 'unary', op: rng.pick(unary), x: pick(), c: Math.round((rng.next() * 4 - 2) * 100) / 100 })
        vars++
      } else {
        out.push({ kind: 'binary', op: rng.pick(binary), x: pick(), y: pick() })
        vars++
      }
    }
    return out
  }
  return { body: block(size, 0), outputs: 3, seed }
}

/**
 * Runs a program on any scalar representation: plain JS loops, ifs on values, and a recursive
 * helper. Branch decisions are appended to `trace` (to detect finite differences that cross a
 * branch).
 */
export function runProgram<T>(d: Ops<T>, p: Program, input: ProgramInput<T>, trace?: number[]): T {
  const vars: T[] = [input.a, ...input.b, input.c.d, input.c.e[0], input.c.e[1]]
  const unary = (op: Unary, x: T, c: number): T => {
    switch (op) {
      case 'sin':
        return d.sin(x)
      case 'cos':
        return d.cos(x)
      case 'tanh':
        return d.tanh(x)
      case 'square':
        return d.square(d.tanh(x))
      case 'safeLog':
        return d.log(d.offset(d.square(x), 1))
      case 'safeSqrt':
        return d.sqrt(d.offset(d.square(x), 0.5))
      case 'safeExp':
        return d.exp(d.tanh(x))
      case 'neg':
        return d.neg(x)
      case 'scale':
        return d.scale(x, c)
    }
  }
  const binary = (op: Binary, x: T, y: T): T => {
    switch (op) {
      case 'add':
        return d.add(x, y)
      case 'sub':
        return d.sub(x, y)
      case 'mul':
        return d.tanh(d.mul(x, y))
      case 'safeDiv':
        return d.div(x, d.offset(d.square(y), 1))
    }
  }
  // a recursive function of plain JS: f(0, x) = x, f(n, x) = sin(f(n − 1, x)) · x + x
  const recurse = (n: number, x: T): T => (n === 0 ? x : d.add(d.mul(d.sin(recurse(n - 1, x)), x), x))
  const exec = (body: Stmt[]): void => {
    for (const s of body) {
      switch (s.kind) {
        case 'unary':
          vars.push(unary(s.op, vars[s.x]!, s.c))
          break
        case 'binary':
          vars.push(binary(s.op, vars[s.x]!, vars[s.y]!))
          break
        case 'recurse':
          vars.push(d.tanh(recurse(s.depth, vars[s.x]!)))
          break
        case 'if': {
          // branches are on values; both sides push the same number of variables (padded)
          const before = vars.length
          const taken = d.compare ? d.compare(vars[s.x]!, vars[s.y]!) > 0 : d.value(vars[s.x]!) > d.value(vars[s.y]!)
          trace?.push(taken ? 1 : 0)
          exec(taken ? s.then : s.else)
          const other = count(taken ? s.else : s.then)
          const mine = vars.length - before
          for (let k = mine; k < Math.max(mine, other); k++) vars.push(vars[vars.length - 1]!)
          break
        }
        case 'loop': {
          // the body reads and writes vars; the accumulator is updated each iteration
          for (let t = 0; t < s.times; t++) {
            const before = vars.length
            exec(s.body)
            vars[s.acc] = d.add(d.scale(vars[s.acc]!, 0.5), d.tanh(vars[vars.length - 1]!))
            vars.length = before // the body's temporaries are dropped; the accumulator carries
          }
          break
        }
      }
    }
  }
  exec(p.body)
  let out: T = vars[vars.length - 1]!
  for (let k = 2; k <= Math.min(p.outputs, vars.length); k++) out = d.add(out, vars[vars.length - k]!)
  return out
}

/** The 7 scalars of a program input, in the order `runProgram` reads them. */
export function flatInput<T>(x: ArrayLike<T>): ProgramInput<T> {
  return { a: x[0]!, b: [x[1]!, x[2]!, x[3]!], c: { d: x[4]!, e: [x[5]!, x[6]!] } }
}
