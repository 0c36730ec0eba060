/**
 * f32 transcendental functions for WGSL that stay within one ulp of the correctly rounded
 * result (what the cpu backend computes: `Math.fround(Math.f(x))`), written for this package.
 *
 * The device's built-in `sin`, `exp`, … only have WGSL's loose error bounds (SwiftShader's `exp`
 * is 5 ulp off, its `sin` 2·10⁻⁴ absolute). These routines evaluate in double-f32 ("two-float")
 * arithmetic where f32 alone cannot reach one ulp, and round once at the end:
 *
 * - error-free transforms use only correctly rounded `+ − ×` (WGSL requires them): TwoSum, and
 *   TwoProduct with operands split by **masking their bits** (no Veltkamp multiplication), so
 *   the result is the same whether or not a driver fuses a multiply and an add into an FMA;
 * - `sin`/`cos`/`tan` reduce their argument modulo π/2 with **integer** Payne–Hanek reduction
 *   (a 96-bit window of 2/π times the 24-bit significand, in u32 limbs): exact for every f32;
 * - `exp` (and `sinh`/`cosh`/`tanh`, `pow`) reduce by ln 2 with a three-part constant and sum a
 *   degree-8 Taylor polynomial whose leading terms are kept in double-f32;
 * - `log` (and `pow`) reduce the significand with a 23-entry table of reciprocals and sum the
 *   series of log1p to u⁷;
 * - `atan`/`atan2`/`asin`/`acos` reduce to atan of t with |t| ≤ 1/16 around the nine points j/8
 *   (a table of atan(j/8) in double-f32), from a double-f32 quotient;
 * - `/` and `sqrt` get one correction step from an exact residual (WGSL allows 2.5 ulp for `/`).
 *
 * Tables and split constants are computed here at load time from `Math` (double precision) and,
 * for 2/π, from BigInt arithmetic — nothing is copied. The package README lists the measured
 * errors; `precise-math.test.ts` measures them against `Math` on the device.
 *
 * Subnormal results are produced by scaling at the end; a device that flushes subnormals to zero
 * (WGSL allows it) returns 0 there.
 */

/** The double-f32 value of a double: [hi, lo] with hi = fround(x), lo = fround(x − hi). */
function split(x: number): [number, number] {
  const hi = Math.fround(x)
  return [hi, Math.fround(x - hi)]
}

/** A WGSL f32 literal of an exact f32 value (round-trips: the abstract float converts exactly). */
function lit(x: number): string {
  const v = Math.fround(x)
  if (Object.is(v, -0)) return '-0.0'
  const s = String(v)
  return /[.e]/.test(s) ? s : `${s}.0`
}

/** An f32 with the low `drop` bits of its significand cleared (so products with small integers are exact). */
function truncate(x: number, drop: number): number {
  const f = new Float32Array([x])
  const u = new Uint32Array(f.buffer)
  u[0] = u[0]! & ~((1 << drop) - 1)
  return f[0]!
}

/** π with `bits` fraction bits, as a BigInt scaled by 2^bits (Machin's formula). */
function piScaled(bits: number): bigint {
  const guard = 32n
  const one = 1n << (BigInt(bits) + guard)
  const atanInv = (k: bigint): bigint => {
    let sum = 0n,
      term = one / k,
      n = 1n,
      sign = 1n
    const k2 = k * k
    while (term !== 0n) {
      sum += sign * (term / n)
      term /= k2
      n += 2n
      sign = -sign
    }
    return sum
  }
  return (16n * atanInv(5n) - 4n * atanInv(239n)) >> guard
}

/**
 * The bits of 2/π after the binary point, MSB first, as 32-bit words, preceded by one word of
 * zeros (the integer bits): word 0 is 0, word 1 holds b₁…b₃₂ of 2/π = 0.b₁b₂….
 */
export function twoOverPiWords(words = 8): number[] {
  const bits = 32 * (words - 1)
  const pi = piScaled(bits + 64)
  const v = (1n << BigInt(2 * bits + 64 + 1)) / pi // 2/π · 2^bits (pi carries bits+64 fraction bits)
  const out = [0]
  for (let i = words - 2; i >= 0; i--) out.push(Number((v >> BigInt(32 * i)) & 0xffffffffn))
  return out
}

const LN2_HI = truncate(Math.LN2, 8) // 16 significant bits: k·LN2_HI is exact for |k| < 2^8
const LN2_MID = Math.fround(Math.LN2 - LN2_HI)
const LN2_LO = Math.fround(Math.LN2 - LN2_HI - LN2_MID)
const [PIO2_HI, PIO2_LO] = split(Math.PI / 2)
const [PI_HI, PI_LO] = split(Math.PI)

/** Reciprocals r_j ≈ 1/(1 + j/32), j = −9…13, and −log r_j in double-f32. */
const LOG_J0 = -9,
  LOG_J1 = 13
const LOG_R = Array.from({ length: LOG_J1 - LOG_J0 + 1 }, (_, i) =>
  i + LOG_J0 === 0 ? 1 : Math.fround(1 / (1 + (i + LOG_J0) / 32)),
)
const LOG_NEG = LOG_R.map((r) => split(-Math.log(r)))
/** atan(j/8), j = 0…8, in double-f32. */
const ATAN_TAB = Array.from({ length: 9 }, (_, j) => split(Math.atan(j / 8)))

const arr = (xs: number[]): string => xs.map(lit).join(', ')

/** The double-f32 kernel: error-free transforms and double-f32 arithmetic (vec2: hi, lo). */
const CORE = `
const TM_LN2_HI: f32 = ${lit(LN2_HI)};
const TM_LN2_MID: f32 = ${lit(LN2_MID)};
const TM_LN2_LO: f32 = ${lit(LN2_LO)};
const TM_PIO2 = vec2<f32>(${lit(PIO2_HI)}, ${lit(PIO2_LO)});
const TM_PI = vec2<f32>(${lit(PI_HI)}, ${lit(PI_LO)});
fn tm_nan() -> f32 { return bitcast<f32>(tenet_nan); }
fn tm_inf() -> f32 { return bitcast<f32>(tenet_pinf); }
fn tm_is_nan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn tm_is_inf(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }
// a + b behind a condition the compiler cannot decide (tenet_opaque is false at run time), so
// that it cannot rewrite (a + b) - a as b: SwiftShader's JIT does when a is a constant
fn tm_sum(a: f32, b: f32) -> f32 { return select(a + b, 0.0, tenet_opaque); }
// the same guard for any value whose rounding error is computed later (a quotient, a root):
// without it a compiler may rewrite b · (a / b) as a, or sqrt(x) · sqrt(x) as x
fn tm_opq(a: f32) -> f32 { return select(a, 0.0, tenet_opaque); }
fn tm_two_sum(a: f32, b: f32) -> vec2<f32> {
  let s = tm_sum(a, b);
  let bb = s - a;
  return vec2<f32>(s, (a - (s - bb)) + (b - bb));
}
fn tm_fast_two_sum(a: f32, b: f32) -> vec2<f32> {
  let s = tm_sum(a, b);
  return vec2<f32>(s, b - (s - a));
}
// the top 12 significant bits, by masking (exact, and no multiplication a driver could fuse)
fn tm_hi12(a: f32) -> f32 { return bitcast<f32>(bitcast<u32>(a) & 0xfffff000u); }
fn tm_two_prod(a: f32, b: f32) -> vec2<f32> {
  let p = select(a * b, 0.0, tenet_opaque);
  let ah = tm_hi12(a);
  let al = a - ah;
  let bh = tm_hi12(b);
  let bl = b - bh;
  let e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
  // the error term only where every partial product is a normal number (subnormals may be
  // flushed, WGSL allows it) and p is finite; elsewhere it is dropped
  let ok = abs(p) < 3.0e38 && min(abs(p), min(abs(a), abs(b))) > 7.888609052210118e-31;
  return vec2<f32>(p, select(0.0, e, ok));
}
fn tm_add(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  let s = tm_two_sum(a.x, b.x);
  return tm_fast_two_sum(s.x, s.y + (a.y + b.y));
}
fn tm_mul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  let p = tm_two_prod(a.x, b.x);
  return tm_fast_two_sum(p.x, p.y + (a.x * b.y + a.y * b.x));
}
fn tm_mul_f(a: vec2<f32>, b: f32) -> vec2<f32> {
  let p = tm_two_prod(a.x, b);
  return tm_fast_two_sum(p.x, p.y + a.y * b);
}
// a / b for normal finite a, b: the device quotient of the scaled operands, corrected by the exact residual
fn tm_div_f(a: f32, b: f32) -> f32 {
  let fa = frexp(a);
  let fb = frexp(b);
  let q0 = tm_opq(fa.fract / fb.fract);
  let p = tm_two_prod(q0, fb.fract);
  let r = (fa.fract - p.x) - p.y;
  return tm_ldexp(q0 + r / fb.fract, fa.exp - fb.exp);
}
// a / b for double-f32 a, b with b.x normal and finite: both scaled to [0.5, 1) first, so that the
// device's division (WGSL allows 2.5 ulp; a GPU may return 0 for a divisor above 2^126) and the
// residuals stay in range; the quotient is corrected twice by exact residuals
fn tm_div(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  if (a.x == 0.0) { return vec2<f32>(a.x / b.x, 0.0); }
  let fa = frexp(a.x);
  let fb = frexp(b.x);
  let an = vec2<f32>(fa.fract, tm_ldexp(a.y, -fa.exp));
  let bn = vec2<f32>(fb.fract, tm_ldexp(b.y, -fb.exp));
  let q1 = tm_opq(an.x / bn.x);
  let r = tm_add(an, -tm_mul_f(bn, q1));
  let q2 = tm_opq(r.x / bn.x);
  let r2 = tm_add(r, -tm_mul_f(bn, q2));
  let q = tm_fast_two_sum(q1, q2 + r2.x / bn.x);
  let e = fa.exp - fb.exp;
  return vec2<f32>(tm_ldexp(q.x, e), tm_ldexp(q.y, e));
}
fn tm_sqrt2(a: vec2<f32>) -> vec2<f32> {
  if (a.x <= 0.0) { return vec2<f32>(0.0, 0.0); }
  let s = tm_opq(sqrt(a.x));
  let p = tm_two_prod(s, s);
  return tm_fast_two_sum(s, (((a.x - p.x) - p.y) + a.y) / (2.0 * s));
}
// x · 2^k for k in [-252, 254] (two exact scalings; one rounding if the result is subnormal).
// The first product is kept apart: a compiler that multiplied the two powers first would
// overflow (2^128) or underflow where x · 2^k is finite and normal
fn tm_pow2(k: i32) -> f32 { return bitcast<f32>(u32(k + 127) << 23u); }
fn tm_ldexp(x: f32, k: i32) -> f32 {
  let k1 = k / 2;
  return tm_opq(x * tm_pow2(k1)) * tm_pow2(k - k1);
}
`

/** exp and expm1 of a double-f32 argument. */
const EXP = `
struct TmExp { k: i32, v: vec2<f32>, m1: vec2<f32> }
// e^x = 2^k (v.x + v.y) with v in [0.7, 1.42]; m1 = e^r - 1 for the reduced r. Needs |x.x| < 105.
fn tm_exp_core(x: vec2<f32>) -> TmExp {
  let kf = round(x.x * 1.44269504088896341);
  var r = tm_two_sum(x.x - kf * TM_LN2_HI, x.y);
  r = tm_add(r, -tm_two_prod(kf, TM_LN2_MID));
  r = tm_fast_two_sum(r.x, r.y - kf * TM_LN2_LO);
  let t = r.x;
  // e^r - 1 = t + t^2/2 (exact, double-f32) + t^3 P(t) + the low part of r
  let w = tm_two_prod(t, t);
  let c = t * t * t * (${lit(1 / 6)} + t * (${lit(1 / 24)} + t * (${lit(1 / 120)} + t * (${lit(1 / 720)} + t * (${lit(1 / 5040)} + t * ${lit(1 / 40320)})))));
  let h = tm_two_sum(t, 0.5 * w.x);
  let m1 = tm_fast_two_sum(h.x, h.y + (((r.y + r.y * t) + 0.5 * w.y) + c));
  let one = tm_two_sum(1.0, m1.x);
  return TmExp(i32(kf), tm_fast_two_sum(one.x, one.y + m1.y), m1);
}
// e^x as f32 for a double-f32 x (overflow to inf, underflow to 0)
fn tm_exp2f(x: vec2<f32>) -> f32 {
  if (x.x > 89.5) { return tm_inf(); }
  if (x.x < -104.0) { return 0.0; }
  let e = tm_exp_core(x);
  return tm_ldexp(e.v.x, e.k);
}
// e^x as double-f32, for |x| < 87 (normal range)
fn tm_exp_df(x: vec2<f32>) -> vec2<f32> {
  let e = tm_exp_core(x);
  let s = tm_pow2(e.k);
  return vec2<f32>(e.v.x * s, e.v.y * s);
}
// e^x - 1 as double-f32, for |x| < 87
fn tm_expm1_df(x: vec2<f32>) -> vec2<f32> {
  let e = tm_exp_core(x);
  if (e.k == 0) { return e.m1; }
  let s = tm_pow2(e.k);
  return tm_add(vec2<f32>(e.v.x * s, e.v.y * s), vec2<f32>(-1.0, 0.0));
}
`

/** log of a positive finite f32, as double-f32. */
const LOG = `
var<private> TM_LOG_R: array<f32, ${LOG_R.length}> = array<f32, ${LOG_R.length}>(${arr(LOG_R)});
var<private> TM_LOG_NEG_HI: array<f32, ${LOG_R.length}> = array<f32, ${LOG_R.length}>(${arr(LOG_NEG.map((p) => p[0]))});
var<private> TM_LOG_NEG_LO: array<f32, ${LOG_R.length}> = array<f32, ${LOG_R.length}>(${arr(LOG_NEG.map((p) => p[1]))});
fn tm_log_df(x: f32) -> vec2<f32> {
  var b = bitcast<u32>(x);
  var e = 0i;
  if (b < 0x00800000u) { b = bitcast<u32>(x * 8388608.0); e = -23; }
  e += i32(b >> 23u) - 127;
  var m = bitcast<f32>((b & 0x007fffffu) | 0x3f800000u);
  if (m > 1.41421356) { m = m * 0.5; e += 1; }
  let j = clamp(i32(round((m - 1.0) * 32.0)), ${LOG_J0}, ${LOG_J1});
  let i = u32(j - (${LOG_J0}));
  let p = tm_two_prod(m, TM_LOG_R[i]);
  let u = tm_fast_two_sum(p.x - 1.0, p.y);
  let h = u.x;
  let w = tm_two_prod(h, h);
  let c = h * h * h * (${lit(1 / 3)} - h * (0.25 - h * (0.2 - h * (${lit(1 / 6)} - h * ${lit(1 / 7)}))));
  var s = tm_two_sum(h, -0.5 * w.x);
  s = tm_fast_two_sum(s.x, s.y + (((u.y - 0.5 * w.y) - h * u.y) + c));
  let ef = f32(e);
  var a = tm_two_sum(ef * TM_LN2_HI, TM_LOG_NEG_HI[i]);
  a = tm_add(a, tm_two_prod(ef, TM_LN2_MID));
  a = tm_fast_two_sum(a.x, a.y + (ef * TM_LN2_LO + TM_LOG_NEG_LO[i]));
  return tm_add(a, s);
}
`

/** Payne–Hanek reduction and the sin/cos kernels. */
const TWO_OVER_PI = twoOverPiWords(8)
const TRIG = `
var<private> TM_2OPI: array<u32, 8> = array<u32, 8>(${TWO_OVER_PI.map((w) => `0x${w.toString(16)}u`).join(', ')});
// m (< 2^24) times w: (low word, high word)
fn tm_mul24x32(m: u32, w: u32) -> vec2<u32> {
  let a0 = m & 0xffffu;
  let a1 = m >> 16u;
  let w0 = w & 0xffffu;
  let w1 = w >> 16u;
  let m1 = a0 * w1;
  let m2 = a1 * w0;
  var lo = a0 * w0;
  var hi = a1 * w1 + (m1 >> 16u) + (m2 >> 16u);
  let s1 = lo + (m1 << 16u);
  hi += select(0u, 1u, s1 < lo);
  let s2 = s1 + (m2 << 16u);
  hi += select(0u, 1u, s2 < s1);
  return vec2<u32>(s2, hi);
}
fn tm_window(i: u32, o: u32) -> u32 {
  if (o == 0u) { return TM_2OPI[i]; }
  return (TM_2OPI[i] << o) | (TM_2OPI[i + 1u] >> (32u - o));
}
struct TmReduced { q: u32, r: vec2<f32> }
// |x| = (q + r/(π/2)) mod 4 with |r| <= π/4, for finite x (exact integer reduction for |x| >= π/4)
fn tm_reduce(ax: f32) -> TmReduced {
  if (ax <= 0.785398163) { return TmReduced(0u, vec2<f32>(ax, 0.0)); }
  let b = bitcast<u32>(ax);
  let m = (b & 0x007fffffu) | 0x00800000u;
  let e = i32(b >> 23u) - 150;          // ax = m · 2^e
  let p = u32(e + 30);                  // position of bit b_(e-1) of 2/π in the table
  let wi = p >> 5u;
  let o = p & 31u;
  let w0 = tm_window(wi, o);
  let w1 = tm_window(wi + 1u, o);
  let w2 = tm_window(wi + 2u, o);
  let p2 = tm_mul24x32(m, w2);
  let p1 = tm_mul24x32(m, w1);
  let p0 = tm_mul24x32(m, w0);
  // c = m · (w0 w1 w2), 128 bits in c3 c2 c1 c0; |x|·2/π ≈ c · 2^-94
  let c0 = p2.x;
  let c1 = p2.y + p1.x;
  let k1 = select(0u, 1u, c1 < p2.y);
  let c2a = p1.y + p0.x;
  let k2 = select(0u, 1u, c2a < p1.y);
  let c2 = c2a + k1;
  let k3 = select(0u, 1u, c2 < c2a);
  var q = ((p0.y + k2 + k3) << 2u) | (c2 >> 30u);
  var f1 = (c2 << 2u) | (c1 >> 30u);
  var f2 = (c1 << 2u) | (c0 >> 30u);
  var f3 = c0 << 2u;
  var neg = false;
  if ((f1 & 0x80000000u) != 0u) {
    // fraction >= 1/2: take fraction - 1 (negate the 96-bit value) and the next quadrant
    neg = true;
    q += 1u;
    f1 = ~f1; f2 = ~f2; f3 = ~f3;
    f3 += 1u;
    if (f3 == 0u) { f2 += 1u; if (f2 == 0u) { f1 += 1u; } }
  }
  var sh = 0i;
  if (f1 == 0u) { f1 = f2; f2 = f3; f3 = 0u; sh += 32; }
  if (f1 == 0u) { f1 = f2; f2 = f3; f3 = 0u; sh += 32; }
  let z = countLeadingZeros(f1);
  if (z != 0u) {
    f1 = (f1 << z) | (f2 >> (32u - z));
    f2 = (f2 << z) | (f3 >> (32u - z));
  }
  sh += i32(z);
  // the fraction is (f1 f2) · 2^-(64+sh), top bit of f1 set: 24 + 24 bits of it as double-f32
  let hi = f32(f1 >> 8u);
  let lo = f32(((f1 & 0xffu) << 16u) | (f2 >> 16u));
  let fr = tm_fast_two_sum(tm_ldexp(hi, -32 - sh + 8), tm_ldexp(lo, -48 - sh));
  var r = tm_mul(fr, TM_PIO2);
  if (neg) { r = -r; }
  return TmReduced(q & 3u, r);
}
fn tm_sin_k(r: vec2<f32>) -> vec2<f32> {
  let h = r.x;
  let h2 = h * h;
  let tail = h * h2 * (${lit(-1 / 6)} + h2 * (${lit(1 / 120)} + h2 * (${lit(-1 / 5040)} + h2 * (${lit(1 / 362880)} + h2 * ${lit(-1 / 39916800)}))));
  return tm_fast_two_sum(h, (r.y - 0.5 * h2 * r.y) + tail);
}
fn tm_cos_k(r: vec2<f32>) -> vec2<f32> {
  let h = r.x;
  let h2 = h * h;
  let w = tm_two_prod(h, h);
  let a = tm_two_sum(1.0, -0.5 * w.x);
  let tail = h2 * h2 * (${lit(1 / 24)} + h2 * (${lit(-1 / 720)} + h2 * (${lit(1 / 40320)} + h2 * (${lit(-1 / 3628800)} + h2 * ${lit(1 / 479001600)}))));
  return tm_fast_two_sum(a.x, a.y + (((-0.5 * w.y) - h * r.y) + tail));
}
`

/** atan of a quotient of two non-negative double-f32 values, in [0, π/2]. */
const ATAN = `
var<private> TM_ATAN_HI: array<f32, 9> = array<f32, 9>(${arr(ATAN_TAB.map((p) => p[0]))});
var<private> TM_ATAN_LO: array<f32, 9> = array<f32, 9>(${arr(ATAN_TAB.map((p) => p[1]))});
// atan(q) for 0 <= q <= 1
fn tm_atan01(q: vec2<f32>) -> vec2<f32> {
  let j = clamp(i32(round(q.x * 8.0)), 0, 8);
  let c = f32(j) * 0.125;
  let num = tm_add(q, vec2<f32>(-c, 0.0));
  let den = tm_add(vec2<f32>(1.0, 0.0), tm_mul_f(q, c));
  let t = tm_div(num, den);
  let h = t.x;
  let h2 = h * h;
  let tail = h * h2 * (${lit(-1 / 3)} + h2 * (0.2 + h2 * (${lit(-1 / 7)} + h2 * ${lit(1 / 9)})));
  return tm_add(vec2<f32>(TM_ATAN_HI[j], TM_ATAN_LO[j]), tm_fast_two_sum(h, t.y + tail));
}
// atan(y/x) for y, x >= 0 (not both 0)
fn tm_atan_ratio(y: vec2<f32>, x: vec2<f32>) -> vec2<f32> {
  if (y.x <= x.x) {
    if (y.x == 0.0) { return vec2<f32>(0.0, 0.0); }
    // atan(q) = q to 2^-80 for q < 2^-40: the quotient alone, scaled so that nothing underflows on the way
    if (y.x < x.x * 9.094947017729282e-13) { return vec2<f32>(tm_div_f(y.x, x.x), 0.0); }
    return tm_atan01(tm_div(y, x));
  }
  if (x.x == 0.0) { return TM_PIO2; }
  return tm_add(TM_PIO2, -tm_atan01(tm_div(x, y)));
}
// sqrt(1 - a^2) for 0 <= a <= 1, as double-f32
fn tm_cosine_of(a: f32) -> vec2<f32> {
  return tm_sqrt2(tm_mul(tm_two_sum(1.0, -a), tm_two_sum(1.0, a)));
}
`

/** One routine: its WGSL and the other routines (and blocks) it needs. */
interface Routine {
  code: string
  deps: string[]
}

const BLOCKS: Record<string, Routine> = {
  core: { code: CORE, deps: [] },
  exp: { code: EXP, deps: ['core'] },
  log: { code: LOG, deps: ['core'] },
  trig: { code: TRIG, deps: ['core'] },
  atan: { code: ATAN, deps: ['core'] },
}

/** The precise routines, by the name the stdlib's WGSL lowerings call. */
const PRECISE: Record<string, Routine> = {
  tenet_exp: {
    deps: ['exp'],
    code: `fn tenet_exp(x: f32) -> f32 {
  if (tm_is_nan(x)) { return x; }
  return tm_exp2f(vec2<f32>(x, 0.0));
}`,
  },
  tenet_log: {
    deps: ['log'],
    code: `fn tenet_log(x: f32) -> f32 {
  if (tm_is_nan(x) || x < 0.0) { return tm_nan(); }
  if (x == 0.0) { return -tm_inf(); }
  if (tm_is_inf(x)) { return x; }
  return tm_log_df(x).x;
}`,
  },
  tenet_pow: {
    deps: ['exp', 'log'],
    code: `// Math.pow on f32: exp(p · log|x|) in double-f32, with Math.pow's special cases
fn tenet_pow(x: f32, p: f32) -> f32 {
  if (p == 0.0) { return 1.0; }
  if (tm_is_nan(x) || tm_is_nan(p)) { return tm_nan(); }
  let ax = abs(x);
  if (tm_is_inf(p)) {
    if (ax == 1.0) { return tm_nan(); }
    return select(0.0, tm_inf(), (ax > 1.0) == (p > 0.0));
  }
  let integer = p == trunc(p);
  let odd = integer && abs(p) < 16777216.0 && (i32(p) & 1) != 0;
  let negative = bitcast<u32>(x) >= 0x80000000u;
  if (negative && !integer && ax != 0.0 && !tm_is_inf(x)) { return tm_nan(); }
  var r: f32;
  if (ax == 0.0) { r = select(tm_inf(), 0.0, p > 0.0); }
  else if (tm_is_inf(x)) { r = select(0.0, tm_inf(), p > 0.0); }
  else if (p == 1.0) { r = ax; }
  else {
    let z = tm_mul_f(tm_log_df(ax), p);
    r = tm_exp2f(z);
  }
  return select(r, -r, negative && odd);
}`,
  },
  tenet_sin: {
    deps: ['trig'],
    code: `fn tenet_sin(x: f32) -> f32 {
  if (tm_is_nan(x) || tm_is_inf(x)) { return tm_nan(); }
  if (x == 0.0) { return x; }
  let a = tm_reduce(abs(x));
  var v: vec2<f32>;
  if ((a.q & 1u) == 0u) { v = tm_sin_k(a.r); } else { v = tm_cos_k(a.r); }
  let s = select(v.x, -v.x, (a.q & 2u) != 0u);
  return select(s, -s, x < 0.0);
}`,
  },
  tenet_cos: {
    deps: ['trig'],
    code: `fn tenet_cos(x: f32) -> f32 {
  if (tm_is_nan(x) || tm_is_inf(x)) { return tm_nan(); }
  let a = tm_reduce(abs(x));
  var v: vec2<f32>;
  if ((a.q & 1u) == 0u) { v = tm_cos_k(a.r); } else { v = tm_sin_k(a.r); }
  return select(v.x, -v.x, ((a.q + 1u) & 2u) != 0u);
}`,
  },
  tenet_tan: {
    deps: ['trig'],
    code: `fn tenet_tan(x: f32) -> f32 {
  if (tm_is_nan(x) || tm_is_inf(x)) { return tm_nan(); }
  if (x == 0.0) { return x; }
  let a = tm_reduce(abs(x));
  let s = tm_sin_k(a.r);
  let c = tm_cos_k(a.r);
  var t: f32;
  if ((a.q & 1u) == 0u) { t = tm_div(s, c).x; } else { t = -tm_div(c, s).x; }
  return select(t, -t, x < 0.0);
}`,
  },
  tenet_atan: {
    deps: ['atan'],
    code: `fn tenet_atan(x: f32) -> f32 {
  if (tm_is_nan(x)) { return x; }
  if (x == 0.0) { return x; }
  let ax = abs(x);
  var r: f32;
  if (tm_is_inf(x)) { r = TM_PIO2.x; } else { r = tm_atan_ratio(vec2<f32>(ax, 0.0), vec2<f32>(1.0, 0.0)).x; }
  return select(r, -r, x < 0.0);
}`,
  },
  tenet_atan2: {
    deps: ['atan'],
    code: `fn tenet_atan2(y: f32, x: f32) -> f32 {
  if (tm_is_nan(x) || tm_is_nan(y)) { return tm_nan(); }
  var ay = abs(y);
  var ax = abs(x);
  let xneg = bitcast<u32>(x) >= 0x80000000u;
  let yneg = bitcast<u32>(y) >= 0x80000000u;
  var a: vec2<f32>;
  if (tm_is_inf(ax) || tm_is_inf(ay)) {
    ay = select(0.0, 1.0, tm_is_inf(ay));
    ax = select(0.0, 1.0, tm_is_inf(ax));
  } else if (ay != 0.0 && ay < ax * 9.094947017729282e-13) {
    // atan(q) = q to 2^-80: the quotient of the unscaled values (scaling could push y below the normal range)
    a = vec2<f32>(tm_div_f(ay, ax), 0.0);
    if (xneg) { a = tm_add(TM_PI, -a); }
    return select(a.x, -a.x, yneg);
  } else if (ay != 0.0 || ax != 0.0) {
    // scale both so that the larger is in [0.5, 1): the quotient then neither overflows nor loses bits
    let k = -frexp(max(ax, ay)).exp;
    ay = tm_ldexp(ay, k);
    ax = tm_ldexp(ax, k);
  }
  if (ay == 0.0) { a = vec2<f32>(0.0, 0.0); } else { a = tm_atan_ratio(vec2<f32>(ay, 0.0), vec2<f32>(ax, 0.0)); }
  if (xneg) { a = tm_add(TM_PI, -a); }
  return select(a.x, -a.x, yneg);
}`,
  },
  tenet_asin: {
    deps: ['atan'],
    code: `fn tenet_asin(x: f32) -> f32 {
  let ax = abs(x);
  if (tm_is_nan(x) || ax > 1.0) { return tm_nan(); }
  if (x == 0.0) { return x; }
  let r = tm_atan_ratio(vec2<f32>(ax, 0.0), tm_cosine_of(ax)).x;
  return select(r, -r, x < 0.0);
}`,
  },
  tenet_acos: {
    deps: ['atan'],
    code: `fn tenet_acos(x: f32) -> f32 {
  let ax = abs(x);
  if (tm_is_nan(x) || ax > 1.0) { return tm_nan(); }
  if (ax == 0.0) { return TM_PIO2.x; }
  let a = tm_atan_ratio(tm_cosine_of(ax), vec2<f32>(ax, 0.0));
  if (x < 0.0) { return tm_add(TM_PI, -a).x; }
  return a.x;
}`,
  },
  tenet_sinh: {
    deps: ['exp'],
    code: `fn tenet_sinh(x: f32) -> f32 {
  if (tm_is_nan(x) || x == 0.0 || tm_is_inf(x)) { return x; }
  let ax = abs(x);
  var r: f32;
  if (ax < 88.0) {
    // (e^a - e^-a)/2 = (m + m/(m + 1))/2 with m = e^a - 1: no cancellation for small a
    let m = tm_expm1_df(vec2<f32>(ax, 0.0));
    let s = tm_add(m, tm_div(m, tm_add(m, vec2<f32>(1.0, 0.0))));
    r = 0.5 * s.x;
  } else {
    r = tm_exp2f(tm_add(vec2<f32>(ax, 0.0), vec2<f32>(-TM_LN2_HI, -TM_LN2_MID)));
  }
  return select(r, -r, x < 0.0);
}`,
  },
  tenet_cosh: {
    deps: ['exp'],
    code: `fn tenet_cosh(x: f32) -> f32 {
  if (tm_is_nan(x)) { return x; }
  let ax = abs(x);
  if (tm_is_inf(x)) { return ax; }
  if (ax < 88.0) {
    let e = tm_exp_df(vec2<f32>(ax, 0.0));
    return 0.5 * tm_add(e, tm_div(vec2<f32>(1.0, 0.0), e)).x;
  }
  return tm_exp2f(tm_add(vec2<f32>(ax, 0.0), vec2<f32>(-TM_LN2_HI, -TM_LN2_MID)));
}`,
  },
  tenet_tanh: {
    deps: ['exp'],
    code: `fn tenet_tanh(x: f32) -> f32 {
  if (tm_is_nan(x) || x == 0.0) { return x; }
  let ax = abs(x);
  var r = 1.0;
  if (ax < 10.0) {
    // e^{2a} - 1 over e^{2a} + 1
    let m = tm_expm1_df(vec2<f32>(2.0 * ax, 0.0));
    r = tm_div(m, tm_add(m, vec2<f32>(2.0, 0.0))).x;
  }
  return select(r, -r, x < 0.0);
}`,
  },
  tenet_div: {
    deps: ['core'],
    code: `// a / b within half an ulp plus a little: the device quotient corrected by its exact residual
fn tenet_div(a: f32, b: f32) -> f32 {
  let q = a / b;
  let ea = bitcast<u32>(a) & 0x7f800000u;
  let eb = bitcast<u32>(b) & 0x7f800000u;
  if (ea == 0u || eb == 0u || ea == 0x7f800000u || eb == 0x7f800000u) { return q; }
  return tm_div_f(a, b);
}`,
  },
  tenet_sqrt: {
    deps: ['core'],
    code: `// sqrt within half an ulp plus a little: the device root corrected by its exact residual
fn tenet_sqrt(x: f32) -> f32 {
  let ex = bitcast<u32>(x) & 0x7f800000u;
  if (x <= 0.0 || ex == 0u || ex == 0x7f800000u) { return sqrt(x); }
  let f = frexp(x);
  let odd = (f.exp & 1) != 0;
  let m = select(f.fract, f.fract * 2.0, odd);
  let e = select(f.exp, f.exp - 1, odd);
  let s = tm_opq(sqrt(m));
  let p = tm_two_prod(s, s);
  return tm_ldexp(s + ((m - p.x) - p.y) / (2.0 * s), e / 2);
}`,
  },
}

/** The device built-ins behind the same names (`precise: false`). */
const FAST: Record<string, string> = {
  tenet_exp: 'fn tenet_exp(x: f32) -> f32 { return exp(x); }',
  tenet_log: 'fn tenet_log(x: f32) -> f32 { return log(x); }',
  tenet_sin: 'fn tenet_sin(x: f32) -> f32 { return sin(x); }',
  tenet_cos: 'fn tenet_cos(x: f32) -> f32 { return cos(x); }',
  tenet_tan: 'fn tenet_tan(x: f32) -> f32 { return tan(x); }',
  tenet_atan: 'fn tenet_atan(x: f32) -> f32 { return atan(x); }',
  tenet_atan2: 'fn tenet_atan2(y: f32, x: f32) -> f32 { return atan2(y, x); }',
  tenet_asin: 'fn tenet_asin(x: f32) -> f32 { return asin(x); }',
  tenet_acos: 'fn tenet_acos(x: f32) -> f32 { return acos(x); }',
  tenet_sinh: 'fn tenet_sinh(x: f32) -> f32 { return sinh(x); }',
  tenet_cosh: 'fn tenet_cosh(x: f32) -> f32 { return cosh(x); }',
  tenet_tanh: 'fn tenet_tanh(x: f32) -> f32 { return tanh(x); }',
  tenet_div: 'fn tenet_div(a: f32, b: f32) -> f32 { return a / b; }',
  tenet_sqrt: 'fn tenet_sqrt(x: f32) -> f32 { return sqrt(x); }',
  tenet_pow: `// Math.pow on f32 with the device's pow: a negative base with an integer exponent is defined
fn tenet_pow(x: f32, p: f32) -> f32 {
  if (p == 0.0) { return 1.0; }
  if (p == 1.0) { return x; }
  if (p == 2.0) { return x * x; }
  if (x == 0.0) { return select(bitcast<f32>(tenet_pinf), 0.0, p > 0.0); }
  if (x < 0.0) {
    if (p != trunc(p)) { return bitcast<f32>(tenet_nan); }
    let r = pow(-x, p);
    return select(r, -r, abs(p % 2.0) == 1.0);
  }
  return pow(x, p);
}`,
}

/** The names of the math routines a shader may call (the stdlib's WGSL lowerings use them). */
export const MATH_ROUTINES: readonly string[] = Object.keys(FAST)

/**
 * The WGSL of the math routines that `code` calls, precise (default) or the device's built-ins,
 * with what they need, in dependency order.
 */
export function mathLibrary(code: string, precise: boolean): string {
  const used = MATH_ROUTINES.filter((n) => new RegExp(`\\b${n}\\(`).test(code))
  if (!precise) return used.map((n) => FAST[n]!).join('\n')
  const out: string[] = []
  const seen = new Set<string>()
  const visit = (name: string, table: Record<string, Routine>): void => {
    if (seen.has(name)) return
    seen.add(name)
    const r = table[name]!
    for (const d of r.deps) visit(d, BLOCKS)
    out.push(r.code)
  }
  for (const n of used) visit(n, PRECISE)
  return out.join('\n')
}
