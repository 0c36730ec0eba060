/**
 * A small typed builder for the bodies of the in-module math routines: expressions are lazy
 * emitters of one value (`Ex`), statements are written into the function's body in order.
 * Only what the routines need: i32, i64, f64 and v128 values (SIMD operations in `vector.ts`), locals, `if`, `return`, calls of other
 * routines, and the bit views of a double (its high and low 32-bit words, as the classic
 * algorithms read them).
 */
import { Bytes, F64, I32, I64, V128, type DefinedFunc, type ValType } from '../encoder.js'
import { constantAddress } from './constants.js'

/** The value types a routine computes with. */
export type T = 'i32' | 'i64' | 'f64' | 'v128'

/** A value: its type and the code that pushes it (emitted where the value is used). */
export interface Ex {
  readonly t: T
  readonly w: (b: Bytes) => void
}

/** A mutable local: reading it is an `Ex`; `fn.set` writes it. */
export interface Var extends Ex {
  readonly local: number
}

const VT: Record<T, ValType> = { i32: I32, i64: I64, f64: F64, v128: V128 }

// opcodes (the binary format's numbering) by operation and type
const BIN: Record<string, Partial<Record<T, number>>> = {
  add: { i32: 0x6a, i64: 0x7c, f64: 0xa0 },
  sub: { i32: 0x6b, i64: 0x7d, f64: 0xa1 },
  mul: { i32: 0x6c, i64: 0x7e, f64: 0xa2 },
  div: { f64: 0xa3 },
  and: { i32: 0x71, i64: 0x83 },
  or: { i32: 0x72, i64: 0x84 },
  xor: { i32: 0x73, i64: 0x85 },
  shl: { i32: 0x74, i64: 0x86 },
  shr: { i32: 0x75, i64: 0x87 },
  shru: { i32: 0x76, i64: 0x88 },
  eq: { i32: 0x46, i64: 0x51, f64: 0x61 },
  ne: { i32: 0x47, i64: 0x52, f64: 0x62 },
  lt: { i32: 0x48, i64: 0x53, f64: 0x63 },
  ltu: { i32: 0x49, i64: 0x54 },
  gt: { i32: 0x4a, i64: 0x55, f64: 0x64 },
  gtu: { i32: 0x4b, i64: 0x56 },
  le: { i32: 0x4c, i64: 0x57, f64: 0x65 },
  leu: { i32: 0x4d, i64: 0x58 },
  ge: { i32: 0x4e, i64: 0x59, f64: 0x66 },
  geu: { i32: 0x4f, i64: 0x5a },
}
const COMPARE = new Set(['eq', 'ne', 'lt', 'ltu', 'gt', 'gtu', 'le', 'leu', 'ge', 'geu'])

function bin(op: string): (a: Ex | number, b: Ex | number) => Ex {
  return (a0, b0) => {
    const [a, b] = coerce(a0, b0)
    const code = BIN[op]![a.t]
    if (code === undefined || a.t !== b.t) throw new Error(`math builder: ${op} on ${a.t}, ${b.t}`)
    return {
      t: COMPARE.has(op) ? 'i32' : a.t,
      w: (o) => {
        a.w(o)
        b.w(o)
        o.byte(code)
      },
    }
  }
}

/** A number literal next to a typed value takes that value's type. */
function coerce(a: Ex | number, b: Ex | number): [Ex, Ex] {
  if (typeof a === 'number' && typeof b === 'number') return [f(a), f(b)]
  if (typeof a === 'number') return [lit(a, (b as Ex).t), b as Ex]
  if (typeof b === 'number') return [a, lit(b, a.t)]
  return [a, b]
}
function lit(v: number, t: T): Ex {
  return t === 'f64' ? f(v) : t === 'i32' ? i(v) : l(BigInt(v))
}

export const add = bin('add'),
  sub = bin('sub'),
  mul = bin('mul'),
  div = bin('div')
export const and = bin('and'),
  or = bin('or'),
  xor = bin('xor'),
  shl = bin('shl'),
  shr = bin('shr'),
  shru = bin('shru')
export const eq = bin('eq'),
  ne = bin('ne'),
  lt = bin('lt'),
  ltu = bin('ltu'),
  gt = bin('gt'),
  gtu = bin('gtu')
export const le = bin('le'),
  leu = bin('leu'),
  ge = bin('ge'),
  geu = bin('geu')

const un =
  (t: T, from: T, ...code: number[]) =>
  (a: Ex): Ex => {
    if (a.t !== from) throw new Error(`math builder: expected ${from}, got ${a.t}`)
    return {
      t,
      w: (o) => {
        a.w(o)
        o.bytes(code)
      },
    }
  }
/** f64 operations without a second operand. */
export const neg = un('f64', 'f64', 0x9a),
  abs = un('f64', 'f64', 0x99),
  sqrt = un('f64', 'f64', 0x9f)
export const floor = un('f64', 'f64', 0x9c),
  nearest = un('f64', 'f64', 0x9e),
  trunc = un('f64', 'f64', 0x9d)
/** i32 = 0 (as i32 0/1). */
export const eqz = un('i32', 'i32', 0x45)
/** Count of leading zero bits of an i64. */
export const clz64 = un('i64', 'i64', 0x79)
/** The 64 bits of a double; a double from 64 bits. */
export const bits = un('i64', 'f64', 0xbd),
  fromBits = un('f64', 'i64', 0xbf)
/** Low 32 bits of an i64; an i32 widened unsigned / signed. */
export const wrap = un('i32', 'i64', 0xa7),
  extu = un('i64', 'i32', 0xad),
  exts = un('i64', 'i32', 0xac)
/** An i32 as a double; a double truncated to i32 (the caller keeps it in range: it traps outside). */
export const f64i = un('f64', 'i32', 0xb7),
  i32f = un('i32', 'f64', 0xaa)
/** An unsigned i64 as a double (rounded). */
export const f64u64 = un('f64', 'i64', 0xba)

/** Literals (a double in a routine's body is read from the constants table: see \`constants.ts\`). */
export function f(v: number): Ex {
  return {
    t: 'f64',
    w: (o) => {
      const at = constantAddress(v)
      // f64.load (align 8) at a constant address, or f64.const
      if (at !== undefined) o.byte(0x41).s32(0).byte(0x2b).u32(3).u32(at)
      else o.byte(0x44).f64(v)
    },
  }
}
export function i(v: number): Ex {
  return {
    t: 'i32',
    w: (o) => {
      o.byte(0x41).s32(v)
    },
  }
}
export function l(v: bigint): Ex {
  return {
    t: 'i64',
    w: (o) => {
      o.byte(0x42)
      s64(o, v)
    },
  }
}

/** Signed LEB128 of a 64-bit integer. */
function s64(o: Bytes, v: bigint): void {
  v = BigInt.asIntN(64, v)
  for (;;) {
    const byte = Number(v & 0x7fn)
    v >>= 7n
    if ((v === 0n && (byte & 0x40) === 0) || (v === -1n && (byte & 0x40) !== 0)) {
      o.byte(byte)
      return
    }
    o.byte(byte | 0x80)
  }
}

/** A double from the bits of a JS number's high and low words (`0x3ff00000, 0` is 1). */
export function words(hi: number, lo: number): number {
  const d = new DataView(new ArrayBuffer(8))
  d.setUint32(0, hi >>> 0)
  d.setUint32(4, lo >>> 0)
  return d.getFloat64(0)
}

/** High 32 bits of a double (sign, exponent, top 20 mantissa bits), as a signed i32. */
export const hi = (x: Ex): Ex => wrap(shru(bits(x), l(32n)))
/** Low 32 bits of a double. */
export const lo = (x: Ex): Ex => wrap(bits(x))
/** The double with this high word and a zero low word. */
export const fromHi = (h: Ex): Ex => fromBits(shl(extu(h), l(32n)))
/** The double `x` with its low word cleared (its top 21 mantissa bits kept). */
export const clearLo = (x: Ex): Ex => fromBits(and(bits(x), l(-0x100000000n)))
/** The double `x` with its high word replaced. */
export const withHi = (x: Ex, h: Ex): Ex => fromBits(or(shl(extu(h), l(32n)), and(bits(x), l(0xffffffffn))))
/** 2^k as a double, for an i32 k in the normal range [−1022, 1023]. */
export const pow2 = (k: Ex): Ex => fromBits(shl(extu(add(k, 1023)), l(52n)))

/** `c ? a : b` evaluating only the branch taken. */
export function cond(c: Ex, a: Ex, b: Ex): Ex {
  if (a.t !== b.t) throw new Error('math builder: branches of different types')
  return {
    t: a.t,
    w: (o) => {
      c.w(o)
      o.byte(0x04).byte(VT[a.t])
      a.w(o)
      o.byte(0x05)
      b.w(o)
      o.byte(0x0b)
    },
  }
}
/** `c ? a : b` evaluating both (wasm `select`): for cheap operands. */
export function select(c: Ex, a: Ex, b: Ex): Ex {
  return {
    t: a.t,
    w: (o) => {
      a.w(o)
      b.w(o)
      c.w(o)
      o.byte(0x1b)
    },
  }
}

/** The polynomial c0 + z·(c1 + z·(c2 + …)) in Horner's form. */
export function horner(z: Ex, cs: number[]): Ex {
  let e = f(cs[cs.length - 1]!)
  for (let k = cs.length - 2; k >= 0; k--) e = add(f(cs[k]!), mul(z, e))
  return e
}

/** A call site of another routine, patched once the routines have their indices. */
export interface CallSite {
  body: Bytes
  at: number
  name: string
}

/** The body of one routine under construction. */
export class Routine {
  readonly body = new Bytes()
  readonly locals: ValType[] = []
  readonly calls: CallSite[] = []
  private next: number

  constructor(
    readonly params: T[],
    readonly results: T[],
  ) {
    this.next = params.length
  }

  /** The i-th parameter. */
  param(k: number): Var {
    const t = this.params[k]!
    return {
      t,
      local: k,
      w: (o) => {
        o.byte(0x20).u32(k)
      },
    }
  }
  /** A fresh local, set to `init` when given. */
  var(t: T, init?: Ex | number): Var {
    this.locals.push(VT[t])
    const k = this.next++
    const v: Var = {
      t,
      local: k,
      w: (o) => {
        o.byte(0x20).u32(k)
      },
    }
    if (init !== undefined) this.set(v, init)
    return v
  }
  /** A local holding `e` (evaluated now). */
  let(e: Ex): Var {
    return this.var(e.t, e)
  }
  /** `v = e` (a number is a literal of v's type). */
  set(v: Var, e: Ex | number): void {
    const x = typeof e === 'number' ? lit(e, v.t) : e
    if (x.t !== v.t) throw new Error(`math builder: ${x.t} stored into ${v.t}`)
    x.w(this.body)
    this.body.byte(0x21).u32(v.local)
  }
  /** `if (c) { then } else { otherwise }` as statements. */
  if(c: Ex, then: () => void, otherwise?: () => void): void {
    c.w(this.body)
    this.body.byte(0x04).byte(0x40)
    then()
    if (otherwise) {
      this.body.byte(0x05)
      otherwise()
    }
    this.body.byte(0x0b)
  }
  /** Returns these values. */
  ret(...es: Ex[]): void {
    for (const e of es) e.w(this.body)
    this.body.byte(0x0f)
  }
  /** Calls the routine `name` (one result). */
  call(name: string, args: Ex[], t: T = 'f64'): Ex {
    return {
      t,
      w: (o) => {
        for (const a of args) a.w(o)
        this.callSite(o, name)
      },
    }
  }
  /** Calls the routine `name` and stores its results into `into`, in order. */
  callInto(name: string, args: Ex[], into: Var[]): void {
    for (const a of args) a.w(this.body)
    this.callSite(this.body, name)
    for (let k = into.length - 1; k >= 0; k--) this.body.byte(0x21).u32(into[k]!.local)
  }
  private callSite(o: Bytes, name: string): void {
    o.byte(0x10)
    this.calls.push({ body: o, at: o.length, name })
    o.padU32()
  }
  /** `switch (k) { case j: return values[j] }` for k in range (others return `fallback`). */
  retTable(k: Ex, values: Ex[], fallback: Ex): void {
    const o = this.body
    const n = values.length
    // n + 1 nested blocks; br_table jumps out of block j to run case j
    for (let j = 0; j <= n; j++) o.byte(0x02).byte(0x40)
    k.w(o)
    o.byte(0x0e).u32(n)
    for (let j = 0; j < n; j++) o.u32(j)
    o.u32(n)
    o.byte(0x0b)
    for (const v of values) {
      v.w(o)
      o.byte(0x0f)
      o.byte(0x0b)
    }
    fallback.w(o)
    o.byte(0x0f)
  }
  /** The finished function (its last statement must return). */
  done(): DefinedFunc {
    this.body.byte(0x00) // unreachable: every path returned
    return {
      type: { params: this.params.map((t) => VT[t]), results: this.results.map((t) => VT[t]) },
      locals: this.locals,
      body: this.body,
    }
  }
}
