/**
 * Complex numbers with f64 parts, implemented as a lowering: before checking, every complex
 * variable `x` becomes two f64 variables `x$re` and `x$im` (names with `$` cannot collide with
 * names written in Tenet source), every complex array `z: complex[]` one interleaved f64 array
 * `z$` (`z[i].re` at `2i`, `z[i].im` at `2i + 1`), and every complex expression a pair of real
 * expressions. Backends and AD therefore only see f64 code, and AD of complex code is AD of
 * that real code: the gradient with respect to a complex parameter `x` is the pair
 * (∂L/∂Re x, ∂L/∂Im x) — reported for the lowered parameters `x$re`, `x$im` — which is
 * 2·∂L/∂x̄ in Wirtinger terms (the direction of steepest ascent of a real loss L).
 *
 * Supported: `+ - * /` (with complex or real operands), unary `-`, `exp`, `log` (principal
 * branch), `conj`, `complex(re, im)`, the real-valued `abs`, `abs2`, `angle` (atan2(im, re)),
 * the dataviews `x.re` / `x.im`, `+=`/`-=` on complex targets, `SWAP`/`NEG` (componentwise),
 * ancillas `c <- complex(0.0, 0.0)` / `c: complex <- 0.0`, and complex arguments of calls.
 * `len(z)` of a complex array counts complex elements. Also `identity`, `sin`, `cos`, `tanh`, `sqrt`
 * (principal root) and `**` with a real or complex exponent (principal branch, exp(w·log z)), and
 * stacks of complex (`s: stack<complex>`: one f64 stack of the same name holding re then im of each value; a JS
 * array of `{ re, im }` at the host boundary).
 * At the host boundary a complex scalar is `{ re, im }` (a plain number is accepted as real);
 * a complex array is a Float64Array of interleaved parts (length 2n), updated in place.
 */
import {
  TenetError,
  TenetStaticError,
  type Arg,
  type Dataview,
  type Expr,
  type FunctionDef,
  type NumberSystemSpec,
  type Param,
  type Registry,
  type SourceLocation,
  type Stmt,
  type Type,
} from '@tenet/ir'
import { walk } from '@tenet/ir/backend'

type Kind = 'scalar' | 'array' | 'stack'
type Env = Map<string, Kind>
/** A complex expression as two real ones. */
interface Pair {
  re: Expr
  im: Expr
}

const fail = (msg: string, loc?: SourceLocation): never => {
  throw new TenetStaticError('static/complex', msg, loc)
}

const F = (value: number): Expr => ({ kind: 'num', value, isFloat: true })
const isZero = (e: Expr) => e.kind === 'num' && e.value === 0
const v = (name: string): Expr => ({ kind: 'var', name })
const b = (op: '+' | '-' | '*' | '/', l: Expr, r: Expr): Expr => {
  if (op === '+') {
    if (isZero(r)) return l
    if (isZero(l)) return r
  }
  if (op === '-') {
    if (isZero(r)) return l
    if (isZero(l)) return neg(r)
  }
  if (op === '*' && (isZero(l) || isZero(r))) return isZero(l) ? l : r
  return { kind: 'binary', op, left: l, right: r }
}
const neg = (e: Expr): Expr => (isZero(e) ? e : { kind: 'unary', op: '-', arg: e })
const call = (callee: string, ...args: Expr[]): Expr => ({ kind: 'call', callee, args })
const loc = <T extends object>(x: T, l?: SourceLocation): T => (l ? { ...x, loc: l } : x)

/** exp(z) = e^a (cos b + i sin b). */
const expPair = (z: Pair): Pair => {
  const m = call('exp', z.re)
  return { re: b('*', m, call('cos', z.im)), im: b('*', m, call('sin', z.im)) }
}
/** The principal log: log|z| + i·angle(z). */
const logPair = (z: Pair): Pair => ({
  re: call('log', call('sqrt', b('+', b('*', z.re, z.re), b('*', z.im, z.im)))),
  im: call('atan2', z.im, z.re),
})
const mulPair = (l: Pair, r: Pair): Pair => ({
  re: b('-', b('*', l.re, r.re), b('*', l.im, r.im)),
  im: b('+', b('*', l.re, r.im), b('*', l.im, r.re)),
})

/** The lowering of one set of functions for the complex type named `name`. */
class Lowering {
  constructor(
    private readonly name: string,
    private readonly signatures: Map<string, Param[]>,
  ) {}

  /** The kind of a type in this lowering; `at` locates the declaration that names it (for the error). */
  private kindOf(t: Type | undefined, at?: SourceLocation): Kind | undefined {
    if (!t) return undefined
    if (t.kind === 'scalar') return t.name === this.name ? 'scalar' : undefined
    if (t.elem !== this.name) return undefined
    if (t.kind === 'stack') return 'stack'
    return 'array'
  }

  fn(f: FunctionDef): FunctionDef {
    const env: Env = new Map()
    const params: Param[] = []
    for (const p of f.params) {
      const k = this.kindOf(p.type, p.loc)
      if (!k) {
        params.push(p)
        continue
      }
      env.set(p.name, k)
      if (k === 'scalar')
        params.push(
          loc({ name: `${p.name}$re`, type: { kind: 'scalar', name: 'f64' } }, p.loc),
          loc({ name: `${p.name}$im`, type: { kind: 'scalar', name: 'f64' } }, p.loc),
        )
      // a stack keeps its name (errors name it as written); an array becomes the interleaved `z$`
      else params.push(loc({ name: k === 'stack' ? p.name : `${p.name}$`, type: { kind: k, elem: 'f64' } }, p.loc))
    }
    return { ...f, params, body: this.block(f.body, env) }
  }

  /** The loop variables in scope that count up from a non-negative integer literal. */
  private counting = new Set<string>()

  /** Whether an (i32) index expression cannot be negative: a literal ≥ 0, or a variable of \`counting\`. */
  private nonNegative(e: Expr): boolean {
    if (e.kind === 'num') return !e.isFloat && Number.isInteger(e.value) && e.value >= 0
    return e.kind === 'var' && this.counting.has(e.name)
  }

  private block(body: Stmt[], parent: Env): Stmt[] {
    const env = new Map(parent)
    return body.flatMap((s) => this.stmt(s, env))
  }

  // ---------- expressions ----------

  /**
   * The pairs (undefined: real) of the current statement's nodes: `real` asks `cx` at every
   * level of an expression, so without this a long chain would be walked once per level.
   */
  private pairs = new Map<Expr, Pair | undefined>()

  /** The pair of a complex expression, or undefined when `e` is real. */
  cx(e: Expr, env: Env): Pair | undefined {
    if (this.pairs.has(e)) return this.pairs.get(e)
    let p: Pair | undefined
    if (e.kind === 'binary') {
      // the left spine of a chain `a + b + c + …` in a loop: a long chain does not recurse per term
      const spine: Array<Extract<Expr, { kind: 'binary' }>> = [e]
      let n = e.left
      while (n.kind === 'binary' && !this.pairs.has(n)) {
        spine.push(n)
        n = n.left
      }
      p = this.cx(n, env)
      for (let k = spine.length - 1; k >= 0; k--) {
        const node = spine[k]!
        p = this.binaryPair(node, p, this.cx(node.right, env), env)
        this.pairs.set(node, p)
      }
      return p
    }
    p = this.cxOf(e, env)
    this.pairs.set(e, p)
    return p
  }

  /** The pair of a binary expression whose operands' pairs are `l` and `r` (undefined: real). */
  private binaryPair(
    e: Extract<Expr, { kind: 'binary' }>,
    l: Pair | undefined,
    r: Pair | undefined,
    env: Env,
  ): Pair | undefined {
    if (!l && !r) return undefined
    const L = l ?? { re: this.real(e.left, env), im: F(0) }
    const R = r ?? { re: this.real(e.right, env), im: F(0) }
    switch (e.op) {
      case '+':
      case '-':
        return { re: b(e.op, L.re, R.re), im: b(e.op, L.im, R.im) }
      case '**': {
        if (
          !r &&
          e.right.kind === 'num' &&
          Number.isInteger(e.right.value) &&
          e.right.value >= 1 &&
          e.right.value <= 8
        ) {
          // a small integer literal: repeated products, exact where they are (z ** 2 of 1 + 2i is −3 + 4i)
          let z = L
          for (let k = 1; k < e.right.value; k++) z = mulPair(z, L)
          return z
        }
        if (!r) {
          // a real exponent p: |z|^p (cos pθ + i sin pθ), θ = angle(z) (principal branch)
          const p = R.re
          const rp = call('pow', b('+', b('*', L.re, L.re), b('*', L.im, L.im)), b('*', p, F(0.5)))
          const pt = b('*', p, call('atan2', L.im, L.re))
          return { re: b('*', rp, call('cos', pt)), im: b('*', rp, call('sin', pt)) }
        }
        // a complex exponent w: exp(w · log z), the principal branch (a real base counts as complex)
        return expPair(mulPair(R, logPair(L)))
      }
      case '*':
        return {
          re: b('-', b('*', L.re, R.re), b('*', L.im, R.im)),
          im: b('+', b('*', L.re, R.im), b('*', L.im, R.re)),
        }
      case '/': {
        if (!r) return { re: b('/', L.re, R.re), im: b('/', L.im, R.re) }
        const den = b('+', b('*', R.re, R.re), b('*', R.im, R.im))
        return {
          re: b('/', b('+', b('*', L.re, R.re), b('*', L.im, R.im)), den),
          im: b('/', b('-', b('*', L.im, R.re), b('*', L.re, R.im)), den),
        }
      }
      default:
        return fail(
          `\`${e.op}\` is not defined on ${this.name} (use \`+ - * /\`, \`exp\`, \`log\`; compare \`abs(x)\`, \`x.re\` or \`x.im\`)`,
          e.loc,
        )
    }
  }

  private cxOf(e: Expr, env: Env): Pair | undefined {
    switch (e.kind) {
      case 'var':
        return env.get(e.name) === 'scalar'
          ? { re: loc(v(`${e.name}$re`), e.loc), im: loc(v(`${e.name}$im`), e.loc) }
          : env.get(e.name) === 'array'
            ? fail(`\`${e.name}\` is a ${this.name} array; use an element such as \`${e.name}[i]\``, e.loc)
            : env.get(e.name) === 'stack'
              ? fail(`\`${e.name}\` is a stack of ${this.name}; move values with \`push\` and \`pop\``, e.loc)
              : undefined
      case 'index': {
        if (env.get(e.array.name) !== 'array') return undefined
        const i = this.real(e.index, env)
        const arr = { kind: 'var' as const, name: `${e.array.name}$` }
        // The element k of a complex array is the parts 2k and 2k + 1, and 2k is i32 arithmetic: for
        // k below −2³⁰ it wraps into the array's range (k = −2³¹ became 0), where the bounds check
        // must fail. A negative k is raised to −1 first (2k = −2: out of bounds, as k was); an index
        // that cannot be negative (a literal, or the variable of a loop that counts up from one)
        // is left as it is, so that loops keep the affine indices the code generators rely on.
        // (From k ≥ 2³⁰, 2k wraps below zero: out of bounds too.)
        const safe = this.nonNegative(i) ? i : call('max', i, { kind: 'num', value: -1, isFloat: false })
        const twice = b('*', { kind: 'num', value: 2, isFloat: false }, safe)
        return {
          re: loc({ kind: 'index', array: arr, index: twice }, e.loc),
          im: loc(
            { kind: 'index', array: arr, index: b('+', twice, { kind: 'num', value: 1, isFloat: false }) },
            e.loc,
          ),
        }
      }
      case 'unary': {
        if (e.op !== '-') return undefined
        const p = this.cx(e.arg, env)
        return p && { re: neg(p.re), im: neg(p.im) }
      }
      case 'call': {
        if (e.callee === 'len') return undefined
        if (e.callee === 'complex') {
          if (e.args.length !== 2) fail('`complex(re, im)` takes two real arguments', e.loc)
          return { re: this.real(e.args[0]!, env), im: this.real(e.args[1]!, env) }
        }
        const args = e.args.map((a) => this.cx(a, env))
        if (!args.some(Boolean)) return undefined
        const z = args[0]
        if (e.args.length !== 1 || !z)
          return fail(
            `\`${e.callee}\` is not defined on ${this.name} arguments (defined: exp, log, sin, cos, tanh, sqrt, identity, conj, abs, abs2, angle, complex, and \`**\`)`,
            e.loc,
          )
        switch (e.callee) {
          case 'exp':
            return expPair(z)
          case 'log':
            return logPair(z)
          case 'conj':
            return { re: z.re, im: neg(z.im) }
          case 'identity':
            return z
          // sin(a + bi) = sin a cosh b + i cos a sinh b; cos(a + bi) = cos a cosh b − i sin a sinh b
          case 'sin':
            return {
              re: b('*', call('sin', z.re), call('cosh', z.im)),
              im: b('*', call('cos', z.re), call('sinh', z.im)),
            }
          case 'cos':
            return {
              re: b('*', call('cos', z.re), call('cosh', z.im)),
              im: neg(b('*', call('sin', z.re), call('sinh', z.im))),
            }
          case 'tanh': {
            // tanh(a + bi) = (sinh 2a + i sin 2b) / (cosh 2a + cos 2b)
            const a2 = b('*', F(2), z.re),
              b2 = b('*', F(2), z.im)
            const den = b('+', call('cosh', a2), call('cos', b2))
            return { re: b('/', call('sinh', a2), den), im: b('/', call('sin', b2), den) }
          }
          case 'sqrt': {
            // the principal root: re = √((|z| + a)/2), im = ±√((|z| − a)/2) with the sign of b
            // (+ for b = 0, so that √−4 = 2i); max(…, 0) keeps a rounding residue out of √
            const r = this.abs(z)
            const sg = call('sign', z.im)
            const s = b('-', b('+', sg, F(1)), call('abs', sg))
            return {
              re: call('sqrt', call('max', b('*', b('+', r, z.re), F(0.5)), F(0))),
              im: b('*', s, call('sqrt', call('max', b('*', b('-', r, z.re), F(0.5)), F(0)))),
            }
          }
          case 'abs':
          case 'abs2':
          case 'angle':
            return undefined // real-valued: see real()
          default:
            return fail(
              `\`${e.callee}\` is not defined on ${this.name} (defined: exp, log, sin, cos, tanh, sqrt, identity, conj, abs, abs2, angle, complex, and \`**\`)`,
              e.loc,
            )
        }
      }
      default:
        return undefined
    }
  }

  private abs(z: Pair): Expr {
    return call('sqrt', b('+', b('*', z.re, z.re), b('*', z.im, z.im)))
  }

  /** Rewrites a real expression (complex values inside it only through real-valued functions). */
  real(e: Expr, env: Env): Expr {
    switch (e.kind) {
      case 'var':
        if (env.get(e.name))
          fail(
            `\`${e.name}\` is ${this.name}, but a real value is needed here (use \`${e.name}.re\`, \`${e.name}.im\` or \`abs(${e.name})\`)`,
            e.loc,
          )
        return e
      case 'index': {
        if (env.get(e.array.name))
          fail(
            `\`${e.array.name}[...]\` is ${this.name}, but a real value is needed here (use \`.re\`, \`.im\` or \`abs(...)\`)`,
            e.loc,
          )
        return { ...e, index: this.real(e.index, env) }
      }
      case 'field': {
        const p = this.cx(e.target, env)
        if (!p) return { ...e, target: this.real(e.target, env) }
        if (e.field === 're') return p.re
        if (e.field === 'im') return p.im
        return fail(`${this.name} has no field \`${e.field}\` (fields: re, im)`, e.loc)
      }
      case 'unary':
        return { ...e, arg: this.real(e.arg, env) }
      case 'binary': {
        if (this.cx(e, env))
          fail(
            `this expression is ${this.name}, but a real value is needed here (use \`.re\`, \`.im\` or \`abs(...)\`)`,
            e.loc,
          )
        return { ...e, left: this.real(e.left, env), right: this.real(e.right, env) }
      }
      case 'call': {
        // len(z) of a complex array counts complex elements
        const a0 = e.args[0]
        if (e.callee === 'len' && a0?.kind === 'var' && env.get(a0.name) === 'array') {
          return {
            kind: 'call',
            callee: 'div',
            args: [
              { ...e, args: [{ ...a0, name: `${a0.name}$` }] },
              { kind: 'num', value: 2, isFloat: false },
            ],
          }
        }
        if (e.args.length === 1) {
          const z = this.cx(e.args[0]!, env)
          if (z) {
            switch (e.callee) {
              case 'abs':
                return loc(this.abs(z), e.loc)
              case 'abs2':
                return b('+', b('*', z.re, z.re), b('*', z.im, z.im))
              case 'angle':
                return call('atan2', z.im, z.re)
            }
          }
        }
        if (e.callee === 'complex' || this.cx(e, env))
          fail(
            `this expression is ${this.name}, but a real value is needed here (use \`.re\`, \`.im\` or \`abs(...)\`)`,
            e.loc,
          )
        // array arguments of host functions (by name) stay as they are
        return { ...e, args: e.args.map((a) => (a.kind === 'var' && !env.get(a.name) ? a : this.real(a, env))) }
      }
      default:
        return e
    }
  }

  /** A dataview's parts: a complex view gives two real views, a real view (incl. `x.re`) one. */
  private view(dv: Dataview | Arg, env: Env): { pair?: [Dataview, Dataview]; single?: Dataview } {
    if (dv.kind === 'neg') {
      const r = this.view(dv.target, env)
      if (r.pair)
        return {
          pair: [
            loc({ kind: 'neg' as const, target: r.pair[0] }, dv.loc),
            loc({ kind: 'neg' as const, target: r.pair[1] }, dv.loc),
          ],
        }
      return { single: loc({ kind: 'neg' as const, target: r.single! }, dv.loc) }
    }
    if (dv.kind === 'field') {
      const p = this.cx(dv.target, env)
      if (!p) return { single: dv as Dataview }
      const part =
        dv.field === 're'
          ? p.re
          : dv.field === 'im'
            ? p.im
            : fail(`${this.name} has no field \`${dv.field}\` (fields: re, im)`, dv.loc)
      return { single: part as Dataview }
    }
    const p = this.cx(dv as Expr, env)
    if (p) return { pair: [p.re as Dataview, p.im as Dataview] }
    if (dv.kind === 'index') return { single: { ...dv, index: this.real(dv.index, env) } }
    return { single: dv as Dataview }
  }

  private isView(a: Arg): boolean {
    return a.kind === 'var' || a.kind === 'index' || a.kind === 'field' || a.kind === 'neg'
  }

  // ---------- statements ----------

  private stmt(s: Stmt, env: Env): Stmt[] {
    // whether a name is complex can change between statements (an allocation binds it)
    this.pairs = new Map()
    switch (s.kind) {
      case 'update': {
        const t = this.view(s.target, env)
        if (t.pair) {
          if (s.op !== '+=' && s.op !== '-=')
            fail(`\`${s.op}\` is not a reversible update of ${this.name}; use \`+=\` or \`-=\``, s.loc)
          const p = this.cx(s.value, env) ?? { re: this.real(s.value, env), im: F(0) }
          const out: Stmt[] = [{ ...s, target: t.pair[0], value: p.re }]
          if (!isZero(p.im)) out.push({ ...s, target: t.pair[1], value: p.im })
          return out
        }
        if (this.cx(s.value, env))
          fail(
            `a ${this.name} value cannot be added to a real target; update \`.re\`/\`.im\` separately, or make the target ${this.name}`,
            s.value.loc ?? s.loc,
          )
        return [{ ...s, target: t.single!, value: this.real(s.value, env) }]
      }
      case 'alloc': {
        // (a local of a loop variable's name, where the checker allows one, is not that variable)
        this.counting.delete(s.name)
        const declared = this.kindOf(s.declared, s.loc)
        if (s.value.kind === 'emptystack') {
          if (declared !== 'stack') return [s]
          // a stack of complex: one f64 stack holding re, im of each value (im on top)
          env.set(s.name, 'stack')
          return [{ ...s, declared: { kind: 'stack', elem: 'f64' } }]
        }
        if (s.value.kind === 'call' && s.value.callee === 'zeros') {
          if (declared !== 'array')
            return [{ ...s, value: { ...s.value, args: s.value.args.map((a) => this.real(a, env)) } }]
          env.set(s.name, 'array')
          return [
            {
              ...s,
              name: `${s.name}$`,
              declared: { kind: 'array', elem: 'f64' },
              value: {
                ...s.value,
                args: [b('*', { kind: 'num', value: 2, isFloat: false }, this.real(s.value.args[0]!, env))],
              },
            },
          ]
        }
        const p = this.cx(s.value, env)
        if (!p && !declared) return [{ ...s, value: this.real(s.value, env) }]
        const q = p ?? { re: this.real(s.value, env), im: F(0) }
        env.set(s.name, 'scalar')
        const f64: Type = { kind: 'scalar', name: 'f64' }
        return [
          { ...s, name: `${s.name}$re`, declared: f64, value: q.re.kind === 'num' ? { ...q.re, isFloat: true } : q.re },
          { ...s, name: `${s.name}$im`, declared: f64, value: q.im.kind === 'num' ? { ...q.im, isFloat: true } : q.im },
        ]
      }
      case 'dealloc': {
        const k = env.get(s.name)
        if (!k) {
          if (s.value.kind === 'emptystack') return [s]
          if (s.value.kind === 'call' && s.value.callee === 'zeros')
            return [{ ...s, value: { ...s.value, args: s.value.args.map((a) => this.real(a, env)) } }]
          return [{ ...s, value: this.real(s.value, env) }]
        }
        env.delete(s.name)
        if (k === 'stack') return [{ ...s, declared: { kind: 'stack', elem: 'f64' } }]
        if (k === 'array') {
          const z = s.value as Extract<Expr, { kind: 'call' }>
          return [
            {
              ...s,
              name: `${s.name}$`,
              declared: { kind: 'array', elem: 'f64' },
              value: { ...z, args: [b('*', { kind: 'num', value: 2, isFloat: false }, this.real(z.args[0]!, env))] },
            },
          ]
        }
        const q = this.cx(s.value as Expr, env) ?? { re: this.real(s.value as Expr, env), im: F(0) }
        const f64: Type = { kind: 'scalar', name: 'f64' }
        return [
          { ...s, name: `${s.name}$re`, declared: f64, value: q.re.kind === 'num' ? { ...q.re, isFloat: true } : q.re },
          { ...s, name: `${s.name}$im`, declared: f64, value: q.im.kind === 'num' ? { ...q.im, isFloat: true } : q.im },
        ]
      }
      case 'callstmt': {
        const params = this.signatures.get(s.callee)
        if (params) {
          const args: Arg[] = []
          s.args.forEach((a, i) => {
            const k = this.kindOf(params[i]?.type, params[i]?.loc ?? s.loc)
            if (k === 'array' || k === 'stack') {
              if (a.kind !== 'var' || env.get(a.name) !== k)
                fail(
                  `argument ${i + 1} of \`${s.callee}\` must be a ${k === 'array' ? `${this.name} array` : `stack of ${this.name}`}, passed by name`,
                  a.loc ?? s.loc,
                )
              args.push(
                loc(
                  {
                    kind: 'var',
                    name: k === 'stack' ? (a as { name: string }).name : `${(a as { name: string }).name}$`,
                  },
                  a.loc,
                ),
              )
            } else if (k === 'scalar') {
              if (this.isView(a)) {
                const w = this.view(a, env)
                if (w.pair) args.push(...w.pair)
                else args.push(w.single!, F(0))
              } else {
                const p = this.cx(a as Expr, env) ?? { re: this.real(a as Expr, env), im: F(0) }
                args.push(p.re, p.im)
              }
            } else if (this.isView(a)) {
              const w = this.view(a, env)
              if (w.pair)
                fail(`argument ${i + 1} of \`${s.callee}\` is real, but a ${this.name} value is passed`, a.loc ?? s.loc)
              args.push(w.single!)
            } else if (a.kind === 'var' || a.kind === 'index') args.push(a)
            else args.push(this.real(a as Expr, env))
          })
          return [{ ...s, args }]
        }
        // a bijection: componentwise when its arguments are complex (SWAP, NEG)
        const views = s.args.map((a) =>
          this.isView(a) ? this.view(a, env) : { single: this.real(a as Expr, env) as Dataview },
        )
        if (!views.some((w) => w.pair)) return [{ ...s, args: views.map((w) => w.single!) }]
        if (!views.every((w) => w.pair))
          fail(`\`${s.callee}\` mixes ${this.name} and real arguments; pass \`.re\`/\`.im\` explicitly`, s.loc)
        // INC/DEC add ±1: to the real part only (2 + 1i → 3 + 1i), not componentwise
        if (s.callee === 'INC' || s.callee === 'DEC') return [{ ...s, args: views.map((w) => w.pair![0]!) }]
        return [0, 1].map((j) => ({ ...s, args: views.map((w) => w.pair![j]!) }))
      }
      case 'if':
        return [
          {
            ...s,
            pre: this.real(s.pre, env),
            post: s.post && this.real(s.post, env),
            then: this.block(s.then, env),
            else: this.block(s.else, env),
          },
        ]
      case 'while':
        return [{ ...s, pre: this.real(s.pre, env), post: this.real(s.post, env), body: this.block(s.body, env) }]
      case 'for': {
        const start = this.real(s.start, env),
          stop = this.real(s.stop, env),
          step = s.step && this.real(s.step, env)
        // (its variable counts up from a non-negative literal: from there, or back down to it in
        // reverse, it is never negative; a step that is not a positive literal may go below it)
        const up = this.nonNegative(start) && (step === null || (step.kind === 'num' && step.value > 0))
        const had = this.counting.has(s.variable)
        if (up && !s.each) this.counting.add(s.variable)
        else this.counting.delete(s.variable)
        const body = this.block(s.body, env)
        if (had) this.counting.add(s.variable)
        else this.counting.delete(s.variable)
        return [{ ...s, start, stop, step, body }]
      }
      case 'push':
      case 'pop': {
        const w = this.view(s.value, env)
        const complexStack = env.get(s.stack.name) === 'stack'
        if (!complexStack) {
          if (w.pair)
            fail(
              `\`${s.stack.name}\` is not a stack of ${this.name}, but a ${this.name} value is moved; declare it \`${s.stack.name}: stack<${this.name}> <- []\``,
              s.loc,
            )
          return [{ ...s, value: w.single! }]
        }
        if (!w.pair)
          fail(
            `\`${s.stack.name}\` is a stack of ${this.name}, but a real value is moved; move a ${this.name} variable`,
            s.loc,
          )
        // re below im: push re then im, pop im then re
        const st = { ...s.stack }
        const [re, im] = w.pair!
        return s.kind === 'push'
          ? [
              { ...s, stack: st, value: re },
              { ...s, stack: { ...st }, value: im },
            ]
          : [
              { ...s, stack: st, value: im },
              { ...s, stack: { ...st }, value: re },
            ]
      }
      case 'safe':
        return [{ ...s, expr: this.real(s.expr, env) }]
      case 'unchecked':
      case 'routine':
      case 'invblock':
        return [{ ...s, body: this.block(s.body, env) } as Stmt]
      default:
        return [s]
    }
  }
}

/**
 * Whether a body declares an ancilla of the type `name` or calls its constructor `name(re, im)`
 * (else the lowering has nothing to do). One pass over the statements and their expressions.
 */
function mentionsIn(body: Stmt[], name: string, mentions: (t: Type) => boolean): boolean {
  const exprs: Array<Expr | Arg> = []
  let found = false
  walk(body, (s) => {
    switch (s.kind) {
      case 'alloc':
      case 'dealloc':
        if (s.declared && mentions(s.declared)) found = true
        if (s.value.kind !== 'emptystack') exprs.push(s.value)
        break
      case 'update':
        exprs.push(s.target, s.value)
        break
      case 'callstmt':
        exprs.push(...s.args)
        break
      case 'if':
        exprs.push(s.pre)
        if (s.post) exprs.push(s.post)
        break
      case 'while':
        exprs.push(s.pre, s.post)
        break
      case 'for':
        exprs.push(s.start, s.stop)
        if (s.step) exprs.push(s.step)
        break
      case 'push':
      case 'pop':
        exprs.push(s.value)
        break
      case 'safe':
        exprs.push(s.expr)
        break
    }
  })
  while (!found && exprs.length) {
    const e = exprs.pop()!
    switch (e.kind) {
      case 'call':
        if (e.callee === name) found = true
        exprs.push(...e.args)
        break
      case 'binary':
        exprs.push(e.left, e.right)
        break
      case 'unary':
        exprs.push(e.arg)
        break
      case 'index':
        exprs.push(e.index)
        break
      case 'field':
      case 'neg':
        exprs.push(e.target)
        break
    }
  }
  return found
}

/**
 * A complex number system with f64 parts under the type name `name` (default `complex`),
 * implemented by lowering (see the module comment).
 */
export function complexNumbers(name = 'complex'): NumberSystemSpec {
  return {
    specificationVersion: 'v1',
    name,
    description:
      'complex numbers with f64 parts, lowered to pairs of f64 before checking ({ re, im } at the host boundary)',
    bijectiveUpdates: ['+=', '-='],
    exact: false,
    float: true,
    arrayType: 'Float64Array',
    fields: { re: 'f64', im: 'f64' },
    lowering: {
      lower(functions: FunctionDef[], _registry: Registry) {
        const mentions = (t: Type) => (t.kind === 'scalar' ? t.name : t.elem) === name
        const signatures = new Map(functions.map((f) => [f.name, f.params]))
        const any = functions.some((f) => f.params.some((p) => mentions(p.type)) || mentionsIn(f.body, name, mentions))
        if (!any) return functions
        const l = new Lowering(name, signatures)
        return functions.map((f) => l.fn(f))
      },
      arity: (t) => (t.kind === 'scalar' ? 2 : 1),
      toArgs(value, t, describe) {
        if (t.kind === 'stack') {
          // a JS array of { re, im } (or real numbers): one f64 stack of re, im pairs
          if (!Array.isArray(value))
            throw new TenetError(
              'call/type',
              `${describe} must be a JS array of { re, im } values (a stack of ${name})`,
            )
          const flat: number[] = []
          for (const z of value as unknown[]) {
            if (typeof z === 'number') {
              flat.push(z, 0)
              continue
            }
            const c = z as { re?: unknown; im?: unknown } | null
            if (!c || typeof c.re !== 'number' || typeof c.im !== 'number')
              throw new TenetError(
                'call/type',
                `${describe} must hold { re: number, im: number } values (or real numbers)`,
              )
            flat.push(c.re, c.im)
          }
          return [flat]
        }
        if (t.kind === 'array') {
          if (!(value instanceof Float64Array) || value.length % 2 !== 0) {
            throw new TenetError(
              'call/type',
              `${describe} must be a Float64Array of interleaved re, im parts (even length)`,
            )
          }
          return [value]
        }
        if (typeof value === 'number') return [value, 0]
        const z = value as { re?: unknown; im?: unknown } | null
        if (!z || typeof z.re !== 'number' || typeof z.im !== 'number')
          throw new TenetError('call/type', `${describe} must be { re: number, im: number } (or a real number)`)
        return [z.re, z.im]
      },
      fromResults: (values, t) => {
        if (t.kind === 'array') return values[0]
        if (t.kind === 'stack') {
          const flat = values[0] as number[]
          const out: Array<{ re: number; im: number }> = []
          for (let i = 0; i + 1 < flat.length; i += 2) out.push({ re: flat[i]!, im: flat[i + 1]! })
          return out
        }
        return { re: values[0] as number, im: values[1] as number }
      },
    },
  }
}

/** The standard `complex` type (f64 parts). */
export const complex: NumberSystemSpec = complexNumbers('complex')
