/**
 * The binary digits of 2/π that the argument reduction of huge trigonometric arguments needs
 * (Payne and Hanek's method), computed once from π with BigInt arithmetic (Machin's formula),
 * and the high words of the doubles nearest n·π/2.
 */

/** arctan(1/q) · 2^scale, truncated, by its alternating series. */
function arctanInv(q: bigint, scale: bigint): bigint {
  const q2 = q * q
  let term = (1n << scale) / q
  let sum = term
  for (let k = 1n; term !== 0n; k++) {
    term /= q2
    const t = term / (2n * k + 1n)
    sum += k % 2n === 1n ? -t : t
  }
  return sum
}

let cached: number[] | undefined

/**
 * The first `WORDS` 32-bit words of the fraction of 2/π (2/π = Σ w_j·2^(−32(j+1))), enough for
 * any double argument: the reduction of x = m·2^e reads words from ⌊(e − 2)/32⌋ on, seven of them.
 */
export function twoOverPiWords(): number[] {
  if (cached) return cached
  const bits = 32n * BigInt(WORDS)
  const scale = bits + 96n // guard bits against the series' truncation
  // π = 16·arctan(1/5) − 4·arctan(1/239)
  const pi = 16n * arctanInv(5n, scale) - 4n * arctanInv(239n, scale)
  const frac = (2n << (scale + bits)) / pi // 2/π · 2^bits (2/π < 1: all fraction bits)
  const out: number[] = []
  for (let j = 0; j < WORDS; j++) out.push(Number((frac >> (bits - 32n * BigInt(j + 1))) & 0xffffffffn))
  cached = out
  return out
}

/** Words of 2/π kept: enough for the largest exponent (e = 971: words up to 30 + 7). */
export const WORDS = 40
