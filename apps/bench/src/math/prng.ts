/**
 * A small seeded pseudo-random generator (xoshiro128** seeded through splitmix32), so that every
 * generated instance is reproducible on any machine without a data download.
 */
export interface Rng {
  /** Uniform in [0, 1). */
  uniform(): number
  /** Standard normal (Box–Muller; the second value is kept for the next call). */
  normal(): number
  /** Uniform integer in [0, n). */
  int(n: number): number
}

function splitmix32(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x9e3779b9) >>> 0
    let z = state
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0
    return (z ^ (z >>> 16)) >>> 0
  }
}

export function createRng(seed: number): Rng {
  const init = splitmix32(seed)
  let s0 = init()
  let s1 = init()
  let s2 = init()
  let s3 = init()
  if ((s0 | s1 | s2 | s3) === 0) s0 = 1
  const nextU32 = (): number => {
    const result = Math.imul(rotl(Math.imul(s1, 5) >>> 0, 7), 9) >>> 0
    const t = (s1 << 9) >>> 0
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = rotl(s3, 11)
    s0 >>>= 0
    s1 >>>= 0
    s2 >>>= 0
    return result
  }
  let spare: number | undefined
  const uniform = (): number => {
    // 53 random bits
    const hi = nextU32() >>> 5
    const lo = nextU32() >>> 6
    return (hi * 67108864 + lo) / 9007199254740992
  }
  return {
    uniform,
    normal() {
      if (spare !== undefined) {
        const v = spare
        spare = undefined
        return v
      }
      let u = 0
      while (u === 0) u = uniform()
      const v = uniform()
      const r = Math.sqrt(-2 * Math.log(u))
      spare = r * Math.sin(2 * Math.PI * v)
      return r * Math.cos(2 * Math.PI * v)
    },
    int(n: number) {
      return Math.floor(uniform() * n)
    },
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0
}
