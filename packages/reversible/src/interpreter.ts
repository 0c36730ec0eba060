/**
 * The reference interpreter: runs core IR directly, with every run-time reversibility check.
 * It is the oracle every backend is tested against, and the backend for pages where `eval` is
 * forbidden. Small and obviously correct beats fast here.
 */
import {
  InvertibilityError,
  runtimeError,
  validLength,
  type Arg,
  type BackendSpec,
  type CompileOptions,
  type CompiledFunction,
  type CompiledProgram,
  type Dataview,
  type Expr,
  type FunctionDef,
  type Program,
  type ScalarTypeName,
  type RuntimeCheck,
  type SourceLocation,
  type Stmt,
  type Type,
} from '@tenet/ir'
import { hostNumber, insertChecks } from '@tenet/ir/backend'

type Value = number | boolean
type Memory = Value | ArrayLike<number> | number[]
type Frame = Map<string, Memory>
type TypedArray = Float64Array | Float32Array | Int32Array | Uint8Array

const fail = (code: string, msg: string, loc?: SourceLocation): never => {
  throw new InvertibilityError(code, msg, loc)
}

/** Formats a value for messages. */
const show = (v: unknown) =>
  typeof v === 'number'
    ? String(v)
    : typeof v === 'boolean'
      ? String(v)
      : Array.isArray(v)
        ? `[${v.join(', ')}]`
        : String(v)

export class Interpreter {
  constructor(
    private readonly program: Program,
    private readonly inverses: Map<string, FunctionDef>,
    private readonly options: CompileOptions,
  ) {}

  /** Runs function `name` (or its inverse) on `vals`, updating scalars in `vals` in place. */
  run(name: string, inverse: boolean, vals: Memory[]): void {
    const f = inverse ? this.inverses.get(name)! : this.program.functions.get(name)!
    const frame: Frame = new Map()
    f.params.forEach((p, i) => frame.set(p.name, vals[i]!))
    // (\`@unchecked\` is lexical: the checks are asserts that \`insert-checks\` placed outside it)
    this.block(f.body, frame)
    f.params.forEach((p, i) => {
      if (p.type.kind === 'scalar') vals[i] = frame.get(p.name)!
    })
  }

  private round(t: ScalarTypeName | undefined, v: Value): Value {
    if (t === 'bool') return typeof v === 'boolean' ? v : v !== 0
    if (t === undefined) return v
    const r = this.program.registry.findNumberSystem(t)?.round
    return r ? r.evaluate(v as number) : v
  }

  /** A numeric literal of type `t`, in its representation (`fromHost` encodes, e.g. ulog). */
  private literal(t: ScalarTypeName | undefined, v: number): Value {
    const ns = t && t !== 'bool' ? this.program.registry.findNumberSystem(t) : undefined
    return ns?.fromHost ? ns.fromHost(v) : this.round(t, v)
  }

  /** The plain (host) number a value of type `t` stands for. */
  private decode(t: ScalarTypeName | undefined, v: Value): number {
    const ns = t && t !== 'bool' ? this.program.registry.findNumberSystem(t) : undefined
    return ns?.toHost ? ns.toHost(v as number) : Number(v)
  }

  // ---------- expressions ----------

  eval(e: Expr, fr: Frame): Value {
    switch (e.kind) {
      case 'num':
        return this.literal(e.type, e.value)
      case 'bool':
        return e.value
      case 'var':
        return fr.get(e.name) as Value
      case 'index': {
        const arr = fr.get(e.array.name) as TypedArray
        const i = this.eval(e.index, fr) as number
        if (!(i >= 0 && i < arr.length)) throw runtimeError('outOfBounds', e.loc, e.array.name, i, arr.length)
        const v = arr[i]!
        return e.type === 'bool' ? v !== 0 : v
      }
      case 'field': {
        const ns = this.program.registry.numberSystem(e.target.type as string)
        return ns.getField!(this.eval(e.target, fr) as number, e.field)
      }
      case 'unary': {
        const a = this.eval(e.arg, fr)
        if (e.op === '!') return !a
        const neg =
          e.type && e.type !== 'bool' ? this.program.registry.findNumberSystem(e.type)?.arithmetic?.negate : undefined
        return neg ? neg(a as number) : this.round(e.type, -(a as number))
      }
      case 'binary':
        return this.binary(e, fr)
      case 'call':
        return this.call(e, fr)
    }
  }

  private binary(e: Extract<Expr, { kind: 'binary' }>, fr: Frame): Value {
    const op = e.op
    if (op === '&&') return (this.eval(e.left, fr) as boolean) && (this.eval(e.right, fr) as boolean)
    if (op === '||') return (this.eval(e.left, fr) as boolean) || (this.eval(e.right, fr) as boolean)
    // the left spine of a chain `a + b + c + …` in a loop: a long chain does not recurse per term
    const spine: Array<Extract<Expr, { kind: 'binary' }>> = [e]
    let n = e.left
    while (n.kind === 'binary' && n.op !== '&&' && n.op !== '||') {
      spine.push(n)
      n = n.left
    }
    let a = this.eval(n, fr)
    for (let k = spine.length - 1; k >= 0; k--) a = this.binaryValue(spine[k]!, a, this.eval(spine[k]!.right, fr))
    return a
  }

  private binaryValue(e: Extract<Expr, { kind: 'binary' }>, a: Value, b: Value): Value {
    const op = e.op
    const t = e.type
    switch (op) {
      case '==':
        return a === b
      case '!=':
        return a !== b
      case '<':
        return a < b
      case '<=':
        return a <= b
      case '>':
        return a > b
      case '>=':
        return a >= b
    }
    if (t === 'bool') {
      if (op === '^') return a !== b
      if (op === '&') return (a as boolean) && (b as boolean)
      if (op === '|') return (a as boolean) || (b as boolean)
    }
    const x = a as number,
      y = b as number
    const ar = t ? this.program.registry.findNumberSystem(t)?.arithmetic : undefined
    if (ar) return ar.binary(op, x, op === '**' && e.right.type === t ? this.decode(t, y) : y)
    if (t === 'i32') {
      switch (op) {
        case '+':
          return (x + y) | 0
        case '-':
          return (x - y) | 0
        case '*':
          return Math.imul(x, y)
        case '%':
          return (x % y) | 0
        case '**':
          return Math.pow(x, y) | 0
        case '^':
          return x ^ y
        case '&':
          return x & y
        case '|':
          return x | y
      }
    }
    let r: number
    switch (op) {
      case '+':
        r = x + y
        break
      case '-':
        r = x - y
        break
      case '*':
        r = x * y
        break
      case '/':
        r = x / y
        break
      case '%':
        r = x % y
        break
      case '**':
        r = Math.pow(x, y)
        break
      default:
        throw new Error(`interpreter: operator ${op} on ${t}`)
    }
    return this.round(t, r)
  }

  private call(e: Extract<Expr, { kind: 'call' }>, fr: Frame): Value {
    const name = e.callee
    if (name.startsWith('$host')) {
      const fn = this.program.hosts[Number(name.slice(5))] as (...a: unknown[]) => unknown
      const r = fn(
        ...e.args.map((a) => (a.kind === 'var' && typeof a.type === 'object' ? fr.get(a.name) : this.eval(a, fr))),
      )
      return hostNumber(r, Number(name.slice(5)), e.loc)
    }
    switch (name) {
      case 'f64':
        return this.decode(e.args[0]!.type as ScalarTypeName, this.eval(e.args[0]!, fr))
      case 'f32':
        return Math.fround(this.decode(e.args[0]!.type as ScalarTypeName, this.eval(e.args[0]!, fr)))
      case 'i32':
        return Math.trunc(this.decode(e.args[0]!.type as ScalarTypeName, this.eval(e.args[0]!, fr))) | 0
      case 'div':
        return Math.trunc((this.eval(e.args[0]!, fr) as number) / (this.eval(e.args[1]!, fr) as number)) | 0
      case 'len':
        return (fr.get((e.args[0] as { name: string }).name) as ArrayLike<number>).length
      // two arrays share no memory (see `apart.ts` of `@tenet/ir`; the optimised IR's guards)
      case '$apart': {
        const [a, b] = e.args.map((x) => fr.get((x as { name: string }).name) as unknown)
        if (a === b) return false
        if (!ArrayBuffer.isView(a) || !ArrayBuffer.isView(b)) return false
        return (
          a.buffer !== b.buffer ||
          a.byteOffset + a.byteLength <= b.byteOffset ||
          b.byteOffset + b.byteLength <= a.byteOffset
        )
      }
      // the reserved calls of run-time checks (see `insert-checks.ts`)
      case '$inrange': {
        const i = this.eval(e.args[0]!, fr) as number
        return i >= 0 && i < (this.eval(e.args[1]!, fr) as number)
      }
      case '$factor': {
        const v = this.eval(e.args[0]!, fr) as number
        return v !== 0 && Number.isFinite(v)
      }
      case '$near': {
        const x = this.eval(e.args[0]!, fr) as number,
          y = this.eval(e.args[1]!, fr) as number
        return x === y || Math.abs(x - y) <= this.options.tolerance * Math.max(1, Math.abs(y))
      }
      case '$zeros': {
        const a = e.args[0] as Extract<Expr, { kind: 'var' }>
        return this.equal(a.type as Type, fr.get(a.name), this.eval(e.args[1]!, fr))
      }
      case '$start':
      case '$stop':
      case '$step': {
        return fr.get(`${name}:${(e.args[0] as { name: string }).name}`) as number
      }
      case 'convert': {
        const ns = this.program.registry.numberSystem(e.type!)
        const v = this.decode(e.args[0]!.type as ScalarTypeName, this.eval(e.args[0]!, fr))
        return ns.fromHost ? ns.fromHost(v) : this.round(e.type, v)
      }
    }
    const spec = this.program.registry.pure(name)
    // an array argument (a primitive with `argKinds`) is the array itself
    const args = e.args.map(
      (a) => (a.kind === 'var' && typeof a.type === 'object' ? fr.get(a.name) : this.eval(a, fr)) as number,
    )
    return this.round(e.type, spec.evaluate(...args))
  }

  // ---------- dataviews ----------

  private read(dv: Dataview | Arg, fr: Frame): Value {
    if (dv.kind === 'neg') return this.round(dv.type, -(this.read(dv.target, fr) as number))
    return this.eval(dv as Expr, fr)
  }

  private write(dv: Dataview | Arg, v: Value, fr: Frame): void {
    switch (dv.kind) {
      case 'var':
        fr.set(dv.name, this.round(dv.type as ScalarTypeName, v))
        return
      case 'index': {
        const arr = fr.get(dv.array.name) as TypedArray
        const i = this.eval(dv.index, fr) as number
        if (!(i >= 0 && i < arr.length)) throw runtimeError('outOfBounds', dv.loc, dv.array.name, i, arr.length)
        arr[i] = typeof v === 'boolean' ? (v ? 1 : 0) : (this.round(dv.type, v) as number)
        return
      }
      case 'neg':
        this.write(dv.target, -(v as number), fr)
        return
      case 'field': {
        const ns = this.program.registry.numberSystem(dv.target.type as string)
        if (!ns.setField) fail('runtime/field', `the field \`.${dv.field}\` of ${ns.name} is read-only`, dv.loc)
        this.write(
          dv.target as Dataview,
          ns.setField!(this.read(dv.target as Dataview, fr) as number, dv.field, v as number),
          fr,
        )
        return
      }
      default:
        throw new Error(`interpreter: cannot write to ${dv.kind}`)
    }
  }

  // ---------- statements ----------

  private block(body: Stmt[], fr: Frame): void {
    for (const s of body) this.stmt(s, fr)
  }

  private equal(t: Type | undefined, a: unknown, b: unknown): boolean {
    if (t?.kind === 'array') {
      const x = a as ArrayLike<number>
      const n = b as number
      if (x.length !== n) return false
      // one rule with scalar ancillas: float elements within the tolerance of zero, exact ones exactly zero
      const ens = this.program.registry.findNumberSystem(t.elem)
      const tol = ens && !ens.exact ? this.options.tolerance : 0
      for (let i = 0; i < x.length; i++) if (!(Math.abs(x[i]!) <= tol)) return false
      return true
    }
    if (t?.kind === 'stack') return (a as unknown[]).length === 0
    if (typeof a === 'boolean' || typeof b === 'boolean') return a === b
    const ns = t?.kind === 'scalar' ? this.program.registry.findNumberSystem(t.name) : undefined
    if (!ns || ns.exact) return a === b
    const x = a as number,
      y = b as number
    return x === y || Math.abs(x - y) <= this.options.tolerance * Math.max(1, Math.abs(y))
  }

  stmt(s: Stmt, fr: Frame): void {
    switch (s.kind) {
      case 'update': {
        const v = this.eval(s.value, fr)
        const old = this.read(s.target, fr)
        let r: Value
        switch (s.op) {
          case '+=':
            r = (old as number) + (v as number)
            break
          case '-=':
            r = (old as number) - (v as number)
            break
          case '^=':
            r = typeof old === 'boolean' ? old !== v : (old as number) ^ (v as number)
            break
          default: {
            const ns = this.program.registry.numberSystem(s.target.type as string)
            if (!ns.update) throw new Error(`interpreter: number system ${ns.name} has no \`update\` for ${s.op}`)
            r = ns.update(s.op, old as number, v as number)
          }
        }
        this.write(s.target, r, fr)
        return
      }
      case 'callstmt':
        return this.callStmt(s, fr)
      case 'alloc': {
        if (s.value.kind === 'emptystack') fr.set(s.name, [])
        else if (s.value.kind === 'call' && s.value.callee === 'zeros') {
          const n = this.eval(s.value.args[0]!, fr) as number
          if (!validLength(n)) throw runtimeError('arrayLength', s.loc, s.name, show(n))
          const ctor = { Float64Array, Float32Array, Int32Array, Uint8Array }[
            this.program.registry.numberSystem((s.type as { elem: string }).elem).arrayType
          ]
          fr.set(s.name, new ctor(n))
        } else fr.set(s.name, this.round((s.type as { name: string }).name, this.eval(s.value, fr)))
        return
      }
      case 'dealloc': {
        // (checked by the assert before it: see \`insert-checks.ts\`)
        fr.delete(s.name)
        return
      }
      case 'if': {
        const pre = this.eval(s.pre, fr) as boolean
        this.block(pre ? s.then : s.else, fr)
        return
      }
      case 'while': {
        while (this.eval(s.pre, fr)) this.block(s.body, fr)
        return
      }
      case 'for':
        return this.forStmt(s, fr)
      case 'push': {
        const st = fr.get(s.stack.name) as Value[]
        st.push(this.read(s.value, fr))
        this.write(s.value, typeof st[st.length - 1] === 'boolean' ? false : 0, fr)
        return
      }
      case 'pop': {
        const st = fr.get(s.stack.name) as Value[]
        if (st.length === 0) throw runtimeError('emptyStack', s.loc, s.stack.name)
        this.write(s.value, st.pop()!, fr)
        return
      }
      case 'safe': {
        // a host call's value is ignored, whatever it is
        if (s.expr.kind === 'call' && s.expr.callee.startsWith('$host')) {
          const fn = this.program.hosts[Number(s.expr.callee.slice(5))] as (...a: unknown[]) => unknown
          fn(
            ...s.expr.args.map((a) =>
              a.kind === 'var' && typeof a.type === 'object' ? fr.get(a.name) : this.eval(a, fr),
            ),
          )
        } else this.eval(s.expr, fr)
        return
      }
      case 'assert': {
        // a run-time check (see `insert-checks.ts`): its message's values are computed only now
        if (this.eval(s.cond, fr)) return
        const args = s.args.map((a) => (typeof a === 'string' ? a : this.eval(a, fr)))
        throw runtimeError(s.check as RuntimeCheck, s.loc, ...(args as [never, never, never, never, never, never]))
      }
      case 'unchecked':
        // (no assert was placed inside it)
        this.block(s.body, fr)
        return
      default:
        throw new Error(`interpreter: \`${s.kind}\` is not core IR (preprocess first)`)
    }
  }

  private forStmt(s: Extract<Stmt, { kind: 'for' }>, fr: Frame): void {
    const a = this.eval(s.start, fr) as number
    const b = this.eval(s.stop, fr) as number
    const step = s.step ? (this.eval(s.step, fr) as number) : 1
    if (step === 0) throw runtimeError('zeroStep', s.loc)
    // the values a, a+step, ... before b (or up to b when inclusive)
    const inRange = (i: number) => (step > 0 ? (s.inclusive ? i <= b : i < b) : s.inclusive ? i >= b : i > b)
    let count = 0
    if (inRange(a)) {
      const span = Math.abs(b - a)
      count = Math.floor(span / Math.abs(step)) + 1
      if (!s.inclusive && a + (count - 1) * step === b) count--
    }
    for (let k = 0; k < count; k++) {
      const i = s.reverse ? a + (count - 1 - k) * step : a + k * step
      fr.set(s.variable, i)
      this.block(s.body, fr)
    }
    fr.delete(s.variable)
    // the range the loop began with, for the `loopRange` assert after it (`$start(v)`, …)
    if (this.options.checks) {
      fr.set(`$start:${s.variable}`, a)
      fr.set(`$stop:${s.variable}`, b)
      fr.set(`$step:${s.variable}`, step)
    }
  }

  private callStmt(s: Extract<Stmt, { kind: 'callstmt' }>, fr: Frame): void {
    if (s.target === 'bijection') {
      let spec = this.program.registry.bijection(s.callee)
      if (s.inverse && spec.inverse !== 'self') spec = this.program.registry.bijection(spec.inverse)
      const vals = s.args.map((a) => this.read(a, fr) as number)
      const out = spec.apply(...vals.map(Number))
      let k = 0
      spec.roles.forEach((r, i) => {
        if (r === 'inout') this.write(s.args[i]!, out[k++]!, fr)
      })
      return
    }
    const callee = this.program.functions.get(s.callee)!
    const vals: Memory[] = s.args.map((a, i) =>
      callee.params[i]!.type.kind === 'scalar' ? this.read(a, fr) : fr.get((a as { name: string }).name)!,
    )
    this.run(s.callee, s.inverse, vals)
    const w = this.program.writes.get(s.callee)!
    s.args.forEach((a, i) => {
      if (w[i] && callee.params[i]!.type.kind === 'scalar') this.write(a, vals[i] as Value, fr)
    })
  }
}

/** Compiles (that is: wraps) a program for the interpreter. */
export function interpretProgram(
  program: Program,
  inverses: Map<string, FunctionDef>,
  options: CompileOptions,
): CompiledProgram {
  ;({ program, inverses } = insertChecks(program, inverses, options))
  const interp = new Interpreter(program, inverses, options)
  const cache = new Map<string, CompiledFunction>()
  return {
    get(name, inverse) {
      const key = `${inverse ? '~' : ''}${name}`
      let c = cache.get(key)
      if (!c) {
        const f = program.functions.get(name)!
        const results = new Float64Array(f.params.length)
        const vals: Memory[] = new Array(f.params.length)
        const fn = ((...args: unknown[]) => {
          for (let i = 0; i < args.length; i++) vals[i] = args[i] as Memory
          interp.run(name, inverse, vals)
          f.params.forEach((p, i) => {
            if (p.type.kind === 'scalar') results[i] = Number(vals[i])
          })
        }) as CompiledFunction
        Object.defineProperty(fn, 'results', { value: results })
        c = fn
        cache.set(key, c)
      }
      return c
    },
  }
}

/** The interpreter as a backend plugin (no `eval`, every check; the reference semantics). */
export const interpreterBackend: BackendSpec = {
  specificationVersion: 'v1',
  name: 'interpreter',
  priority: 0,
  capabilities: {
    f64: true,
    recursion: true,
    exceptions: true,
    f32: true,
    stacks: true,
    checks: true,
    gradient: true,
    hessian: true,
    synchronous: true,
  },
  description: 'reference interpreter of the core IR (no eval; for strict CSP pages and as the test oracle)',
  doCompile: interpretProgram,
}
