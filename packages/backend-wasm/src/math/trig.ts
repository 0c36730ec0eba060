/**
 * sin, cos and tan: reduction of the argument to r = x − n·π/2 with |r| ≤ π/4 held as a
 * double-double (y0 + y1), then the odd (sin, tan) or even (cos) polynomial of r on the
 * quadrant n mod 4. The reduction subtracts n·π/2 in three 33-bit pieces (Cody and Waite) up to
 * |x| ≈ 2¹⁹·π/2, and beyond that multiplies the argument's integer significand by 224 bits of
 * 2/π taken from where its exponent points (Payne and Hanek). The polynomials are the minimax
 * ones of Sun's fdlibm (coefficients from its published tables), so the results are those of
 * the engines that use it (V8 among them).
 */
import { twoOverPiWords } from './two-over-pi.js'
import {
  type Routine,
  abs,
  add,
  and,
  cond,
  clearLo,
  clz64,
  div,
  eq,
  extu,
  f,
  f64i,
  f64u64,
  fromHi,
  ge,
  gt,
  hi,
  horner,
  i,
  i32f,
  l,
  le,
  lo,
  lt,
  mul,
  ne,
  neg,
  or,
  pow2,
  shl,
  shr,
  shru,
  sub,
  trunc,
  wrap,
  bits,
  type Ex,
  type Var,
} from './builder.js'

const ix = (x: Ex): Ex => and(hi(x), 0x7fffffff)

// sin(r) ≈ r + r³·(S1 + r²·S2 + …) on |r| ≤ π/4
export const S = [
  -1.66666666666666324348e-1, 8.33333333332248946124e-3, -1.98412698298579493134e-4, 2.75573137070700676789e-6,
  -2.50507602534068634195e-8, 1.58969099521155010221e-10,
]
// cos(r) ≈ 1 − r²/2 + r⁴·(C1 + r²·C2 + …)
export const C = [
  4.16666666666666019037e-2, -1.38888888888741095749e-3, 2.48015872894767294178e-5, -2.75573143513906633035e-7,
  2.0875723212981748279e-9, -1.13596475577881948265e-11,
]
// tan(r) ≈ r + r³·(T0 + r²·T1 + …) on |r| ≤ 0.6744; nearer π/4, tan(π/4 − r') is used
const T = [
  3.33333333333334091986e-1, 1.33333333333201242699e-1, 5.39682539762260521377e-2, 2.18694882948595424599e-2,
  8.86323982359930005737e-3, 3.59207910759131235356e-3, 1.45620945432529025516e-3, 5.88041240820264096874e-4,
  2.46463134818469906812e-4, 7.817944429395570923e-5, 7.14072491382608190305e-5, -1.85586374855275456654e-5,
  2.59073051863633712884e-5,
]
const PIO4 = 7.85398163397448278999e-1,
  PIO4LO = 3.06161699786838301793e-17

// π/2 in pieces of 33 bits (and the tails of their sums), and 2/π
export const INVPIO2 = 6.36619772367581382433e-1
export const PIO2_1 = 1.57079632673412561417,
  PIO2_1T = 6.07710050650619224932e-11
const PIO2_2 = 6.0771005063039659766e-11,
  PIO2_2T = 2.02226624879595063154e-21
const PIO2_3 = 2.0222662487111664558e-21,
  PIO2_3T = 8.47842766036889956997e-32
// π/2 as a double-double, and the high half of its Veltkamp split (26 bits)
export const PIO2_HI = Math.PI / 2,
  PIO2_LO = 6.123233995736766e-17

/** sin(x + y) for |x + y| ≤ π/4 (y the tail of x; `tail` false when y is 0). */
function kSin(r: Routine, x: Var, y: Ex, tail: boolean): Ex {
  const z = r.let(mul(x, x))
  const v = r.let(mul(z, x))
  const p = r.let(horner(z, S.slice(1)))
  const poly = !tail
    ? add(x, mul(v, add(f(S[0]!), mul(z, p))))
    : sub(x, sub(sub(mul(z, sub(mul(f(0.5), y), mul(v, p))), y), mul(v, f(S[0]!))))
  return cond(lt(ix(x), 0x3e400000), x, poly)
}

/** cos(x + y) for |x + y| ≤ π/4. */
function kCos(r: Routine, x: Var, y: Ex): Ex {
  const k = r.let(ix(x))
  const z = r.let(mul(x, x))
  const p = r.let(mul(z, horner(z, C)))
  const tail = r.let(sub(mul(z, p), mul(x, y)))
  // beyond 0.3, 1 − z/2 as (1 − qx) − (z/2 − qx) with qx ≈ x²/4 taken exactly
  const qx = r.let(cond(gt(k, 0x3fe90000), f(0.28125), fromHi(sub(k, 0x00200000))))
  const near = sub(f(1), sub(mul(f(0.5), z), tail))
  const far = sub(sub(f(1), qx), sub(sub(mul(f(0.5), z), qx), tail))
  return cond(lt(k, 0x3e400000), f(1), cond(lt(k, 0x3fd33333), near, far))
}

/** Returns ±sin(x + y) for |x + y| ≤ π/4. */
function retSin(r: Routine, x: Var, y: Ex, tail: boolean, negate: boolean): void {
  const v = kSin(r, x, y, tail)
  r.ret(negate ? neg(v) : v)
}

/** Returns ±cos(x + y) for |x + y| ≤ π/4. */
function retCos(r: Routine, x: Var, y: Ex, negate: boolean): void {
  const v = kCos(r, x, y)
  r.ret(negate ? neg(v) : v)
}

/** Returns tan(x + y) (odd = 1) or −1/tan(x + y) (odd = −1) for |x + y| ≤ π/4. */
function retTan(r: Routine, x0: Var, y0: Ex, odd: Ex): void {
  const x = r.let(x0),
    y = r.let(y0)
  const hx = r.let(hi(x)),
    k = r.let(and(hx, 0x7fffffff))
  // −1/(x + y) with the division's error compensated (the cotangent of a tiny or reduced r)
  const minusInverse = (w: Ex, rest: Ex) => {
    const ww = r.let(w)
    const z = r.let(clearLo(ww))
    const v = r.let(sub(rest, sub(z, x)))
    const a = r.let(div(f(-1), ww))
    const t = r.let(clearLo(a))
    const s = r.let(add(f(1), mul(t, z)))
    r.ret(add(t, mul(a, add(s, mul(t, v)))))
  }
  r.if(lt(k, 0x3e300000), () => {
    r.if(eq(or(or(k, lo(x)), add(odd, 1)), 0), () => r.ret(div(f(1), abs(x))))
    r.if(eq(odd, 1), () => r.ret(x))
    minusInverse(add(x, y), y)
  })
  const big = r.let(ge(k, 0x3fe59428))
  r.if(big, () => {
    r.if(lt(hx, 0), () => {
      r.set(x, neg(x))
      r.set(y, neg(y))
    })
    r.set(x, add(sub(f(PIO4), x), sub(f(PIO4LO), y)))
    r.set(y, f(0))
  })
  const z = r.let(mul(x, x)),
    w = r.let(mul(z, z))
  const rr = r.var('f64', horner(w, [T[1]!, T[3]!, T[5]!, T[7]!, T[9]!, T[11]!]))
  const v = r.let(mul(z, horner(w, [T[2]!, T[4]!, T[6]!, T[8]!, T[10]!, T[12]!])))
  const s = r.let(mul(z, x))
  r.set(rr, add(y, mul(z, add(mul(s, add(rr, v)), y))))
  r.set(rr, add(rr, mul(f(T[0]!), s)))
  const ww = r.let(add(x, rr))
  r.if(big, () => {
    const vv = r.let(f64i(odd))
    const signOf = f64i(sub(1, and(shr(hx, 30), 2)))
    r.ret(mul(signOf, sub(vv, mul(f(2), sub(x, sub(div(mul(ww, ww), add(ww, vv)), rr))))))
  })
  r.if(eq(odd, 1), () => r.ret(ww))
  minusInverse(ww, rr)
}

/** `sin`. */
export function buildSin(r: Routine): void {
  const x = r.param(0)
  const hx = r.let(hi(x)),
    k = r.let(and(hx, 0x7fffffff))
  r.if(le(k, 0x3fe921fb), () => retSin(r, x, f(0), false, false))
  r.if(ge(k, 0x7ff00000), () => r.ret(sub(x, x)))
  const n = r.var('i32'),
    y0 = r.var('f64'),
    y1 = r.var('f64')
  remPio2(r, x, hx, k, n, y0, y1)
  const q = r.let(and(n, 3))
  r.if(eq(q, 0), () => retSin(r, y0, y1, true, false))
  r.if(eq(q, 1), () => retCos(r, y0, y1, false))
  r.if(eq(q, 2), () => retSin(r, y0, y1, true, true))
  retCos(r, y0, y1, true)
}

/** `cos`. */
export function buildCos(r: Routine): void {
  const x = r.param(0)
  const hx = r.let(hi(x)),
    k = r.let(and(hx, 0x7fffffff))
  r.if(le(k, 0x3fe921fb), () => retCos(r, x, f(0), false))
  r.if(ge(k, 0x7ff00000), () => r.ret(sub(x, x)))
  const n = r.var('i32'),
    y0 = r.var('f64'),
    y1 = r.var('f64')
  remPio2(r, x, hx, k, n, y0, y1)
  const q = r.let(and(n, 3))
  r.if(eq(q, 0), () => retCos(r, y0, y1, false))
  r.if(eq(q, 1), () => retSin(r, y0, y1, true, true))
  r.if(eq(q, 2), () => retCos(r, y0, y1, true))
  retSin(r, y0, y1, true, false)
}

/** `tan`. */
export function buildTan(r: Routine): void {
  const x = r.param(0)
  const hx = r.let(hi(x)),
    k = r.let(and(hx, 0x7fffffff))
  r.if(le(k, 0x3fe921fb), () => retTan(r, x, f(0), i(1)))
  r.if(ge(k, 0x7ff00000), () => r.ret(sub(x, x)))
  const n = r.var('i32'),
    y0 = r.var('f64'),
    y1 = r.var('f64')
  remPio2(r, x, hx, k, n, y0, y1)
  retTan(r, y0, y1, sub(1, shl(and(n, 1), 1)))
}

/** `__sincos(x) → (sin x, cos x)`: one reduction for both (ROT, IROT and sincos use it). */
export function buildSincos(r: Routine): void {
  const x = r.param(0)
  const hx = r.let(hi(x)),
    k = r.let(and(hx, 0x7fffffff))
  r.if(le(k, 0x3fe921fb), () => {
    const s = r.let(kSin(r, x, f(0), false))
    r.ret(s, kCos(r, x, f(0)))
  })
  r.if(ge(k, 0x7ff00000), () => r.ret(sub(x, x), sub(x, x)))
  const n = r.var('i32'),
    y0 = r.var('f64'),
    y1 = r.var('f64')
  remPio2(r, x, hx, k, n, y0, y1)
  const s = r.let(kSin(r, y0, y1, true)),
    c = r.let(kCos(r, y0, y1))
  const q = r.let(and(n, 3))
  r.if(eq(q, 0), () => r.ret(s, c))
  r.if(eq(q, 1), () => r.ret(c, neg(s)))
  r.if(eq(q, 2), () => r.ret(neg(s), neg(c)))
  r.ret(neg(c), s)
}

/**
 * Sets n, y0 and y1 so that x − n·π/2 = y0 + y1 (|y0 + y1| ≤ π/4), for finite |x| > π/4 (`hx` its
 * high word, `k` that without the sign). Inline up to 2¹⁹·π/2; beyond, a call of `__rem_pio2_huge`.
 */
function remPio2(r: Routine, x: Var, hx: Var, k: Var, n: Var, y0: Var, y1: Var): void {
  r.if(
    lt(k, 0x4002d97c),
    () => {
      // |x| < 3π/4: n = ±1
      const one = (s: 1 | -1) => {
        const op = s === 1 ? sub : add
        const z = r.let(op(x, f(PIO2_1)))
        r.if(
          ne(k, 0x3ff921fb),
          () => {
            r.set(y0, op(z, f(PIO2_1T)))
            r.set(y1, op(sub(z, y0), f(PIO2_1T)))
          },
          () => {
            // x is near π/2: 33 more bits of π/2
            r.set(z, op(z, f(PIO2_2)))
            r.set(y0, op(z, f(PIO2_2T)))
            r.set(y1, op(sub(z, y0), f(PIO2_2T)))
          },
        )
        r.set(n, s)
      }
      r.if(
        gt(hx, 0),
        () => one(1),
        () => one(-1),
      )
    },
    () =>
      r.if(
        le(k, 0x413921fb),
        () => {
          // |x| ≤ 2¹⁹·π/2: n·π/2 subtracted in 33-bit pieces, as many as the cancellation needs
          const t = r.let(abs(x))
          // (n as a double by f64.trunc: the value the i32 truncation and conversion back give, for
          // this positive argument, so the reduction does not wait for the conversions)
          const fn = r.let(trunc(add(mul(t, f(INVPIO2)), f(0.5))))
          r.set(n, i32f(fn))
          const rr = r.let(sub(t, mul(fn, f(PIO2_1))))
          const w = r.let(mul(fn, f(PIO2_1T)))
          r.set(y0, sub(rr, w))
          // the cancellation is checked unless n < 32 and |x| differs from n·π/2 in its high word
          // (the doubles nearest n·π/2 have the high words of n times the double nearest π/2)
          r.if(or(ge(n, 32), eq(k, hi(mul(fn, f(PIO2_HI))))), () => {
            const j = r.let(shr(k, 20))
            const lost = () => sub(j, and(shr(hi(y0), 20), 0x7ff))
            r.if(gt(lost(), 16), () => {
              const step = (p: number, pt: number) => {
                const t2 = r.let(rr)
                r.set(w, mul(fn, f(p)))
                r.set(rr, sub(t2, w))
                r.set(w, sub(mul(fn, f(pt)), sub(sub(t2, rr), w)))
                r.set(y0, sub(rr, w))
              }
              step(PIO2_2, PIO2_2T)
              r.if(gt(lost(), 49), () => step(PIO2_3, PIO2_3T))
            })
          })
          r.set(y1, sub(sub(rr, y0), w))
          r.if(lt(hx, 0), () => {
            r.set(n, sub(0, n))
            r.set(y0, neg(y0))
            r.set(y1, neg(y1))
          })
        },
        () => r.callInto('__rem_pio2_huge', [x], [n, y0, y1]),
      ),
  )
}

/** `__2opi(k)`: word k − 2 of 2/π (32 bits, in an i64), 0 for k < 2. */
export function build2opi(r: Routine): void {
  const ws = twoOverPiWords()
  r.retTable(r.param(0), [l(0n), l(0n), ...ws.map((w) => l(BigInt(w)))], l(0n))
}

/**
 * `__rem_pio2_huge(x) → (n, y0, y1)` for finite |x| > 2¹⁹·π/2 (Payne and Hanek): with
 * x = m·2^e (m the 53-bit significand), x·2/π mod 4 is m·2^r times 224 bits of 2/π starting at
 * word ⌊(e − 2)/32⌋ (r = (e − 2) mod 32), read in fixed point with 222 fraction bits; the words
 * before contribute multiples of 4, those after less than 2⁻¹³⁸. The nearest integer is n and
 * the fraction, normalised to 128 bits, times π/2 is y0 + y1.
 */
export function buildRemPio2Huge(r: Routine): void {
  const x = r.param(0)
  const b = r.let(bits(x))
  const e = r.let(sub(and(wrap(shru(b, l(52n))), 0x7ff), 1075 + 2))
  const m = r.let(or(and(b, l(0xfffffffffffffn)), l(1n << 52n)))
  const j0 = r.let(shr(e, 5)),
    sh = r.let(extu(and(e, 31)))
  const MASK = l(0xffffffffn)
  // m·2^r in three 32-bit limbs
  const ms = [
    r.let(and(shl(m, sh), MASK)),
    r.let(and(shru(m, sub(l(32n), sh)), MASK)),
    r.let(shru(shru(m, l(32n)), sub(l(32n), sh))),
  ]
  const L = Array.from({ length: 7 }, () => r.var('i64', l(0n)))
  for (let k = 0; k < 7; k++) {
    // limb k of the window: word j0 + 6 − k of 2/π (index + 2 for the zero words before it)
    const v = r.let(r.call('__2opi', [add(j0, 8 - k)], 'i64'))
    for (let a = 0; a < 3 && k + a < 7; a++) {
      const p = r.let(mul(ms[a]!, v))
      r.set(L[k + a]!, add(L[k + a]!, and(p, MASK)))
      if (k + a + 1 < 7) r.set(L[k + a + 1]!, add(L[k + a + 1]!, shru(p, l(32n))))
    }
  }
  for (let k = 0; k < 6; k++) {
    r.set(L[k + 1]!, add(L[k + 1]!, shru(L[k]!, l(32n))))
    r.set(L[k]!, and(L[k]!, MASK))
  }
  const n = r.let(wrap(and(shru(L[6]!, l(30n)), l(3n))))
  // the top 128 of the 222 fraction bits
  const A = r.let(or(or(shl(and(L[6]!, l(0x3fffffffn)), l(34n)), shl(L[5]!, l(2n))), shru(L[4]!, l(30n))))
  const B = r.let(or(or(shl(and(L[4]!, l(0x3fffffffn)), l(34n)), shl(L[3]!, l(2n))), shru(L[2]!, l(30n))))
  // a fraction of a half or more rounds n up and leaves its complement, negative
  const up = r.let(wrap(shru(A, l(63n))))
  r.if(up, () => {
    r.set(n, add(n, 1))
    r.set(A, sub(sub(l(0n), A), extu(ne(B, l(0n)))))
    r.set(B, sub(l(0n), B))
  })
  const s = r.var('i64', l(0n))
  r.if(eq(A, l(0n)), () => {
    r.set(A, B)
    r.set(B, l(0n))
    r.set(s, l(64n))
  })
  const z = r.let(clz64(A))
  r.if(ne(z, l(0n)), () => {
    r.set(A, or(shl(A, z), shru(B, sub(l(64n), z))))
    r.set(B, shl(B, z))
    r.set(s, add(s, z))
  })
  const sc = r.let(wrap(s))
  const fhi = r.let(mul(f64u64(shru(A, l(11n))), pow2(sub(-53, sc))))
  const flo = r.let(mul(f64u64(or(shl(and(A, l(0x7ffn)), l(42n)), shru(B, l(22n)))), pow2(sub(-106, sc))))
  // (fhi + flo)·π/2 as a double-double: the product fhi·PIO2_HI exactly (Dekker), the rest rounded
  const p = r.let(mul(fhi, f(PIO2_HI)))
  const c = r.let(mul(fhi, f(134217729)))
  const ah = r.let(sub(c, sub(c, fhi))),
    al = r.let(sub(fhi, ah))
  const bh = splitHi(PIO2_HI),
    bl = PIO2_HI - bh
  const err = add(add(add(sub(mul(ah, f(bh)), p), mul(ah, f(bl))), mul(al, f(bh))), mul(al, f(bl)))
  const e2 = r.let(add(err, add(mul(fhi, f(PIO2_LO)), mul(flo, f(PIO2_HI)))))
  const y0 = r.let(add(p, e2))
  const y1 = r.let(sub(e2, sub(y0, p)))
  r.if(up, () => {
    r.set(y0, neg(y0))
    r.set(y1, neg(y1))
  })
  r.if(lt(b, l(0n)), () => r.ret(sub(0, n), neg(y0), neg(y1)))
  r.ret(n, y0, y1)
}

/** The high 26 bits of a double's significand (Veltkamp's split). */
function splitHi(a: number): number {
  const c = 134217729 * a
  return c - (c - a)
}
