/** Test helpers: a seeded generator, host values of a type, and central finite differences. */
import type { Type } from './types.js'

/** A small seeded PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** A random host value of a type; `len` gives array lengths by nesting depth. */
export function randomValue(t: Type, r: () => number, len: (depth: number) => number, depth = 0): unknown {
  switch (t.kind) {
    case 'R':
      return r() * 2 - 1
    case 'B':
      return r() < 0.5
    case 'tuple':
      return t.items.map((i) => randomValue(i, r, len, depth))
    case 'array': {
      const n = len(depth)
      if (t.elem.kind === 'R') return Float64Array.from({ length: n }, () => r() * 2 - 1)
      return Array.from({ length: n }, () => randomValue(t.elem, r, len, depth + 1))
    }
    case 'fun':
      throw new Error('no random functions')
  }
}

/** Every real leaf of a host value, as [get, set] accessors. */
export function leaves(x: unknown, out: Array<{ get: () => number; set: (v: number) => void }> = []) {
  if (x instanceof Float64Array) {
    for (let i = 0; i < x.length; i++)
      out.push({
        get: () => x[i]!,
        set: (v) => {
          x[i] = v
        },
      })
  } else if (Array.isArray(x)) {
    x.forEach((item, i) => {
      if (typeof item === 'number')
        out.push({
          get: () => x[i] as number,
          set: (v) => {
            x[i] = v
          },
        })
      else leaves(item, out)
    })
  }
  return out
}

/** Flattens a host value's real leaves (gradients and arguments alike). */
export function flat(x: unknown): number[] {
  if (typeof x === 'number') return [x]
  if (x instanceof Float64Array) return Array.from(x)
  if (Array.isArray(x)) return x.flatMap(flat)
  return []
}

/**
 * Central finite differences of f at args (scalar arguments are perturbed through a wrapper):
 * the gradient flattened in argument order.
 */
export function finiteDifferences(f: (...a: unknown[]) => number, args: unknown[], h = 1e-6): number[] {
  const boxed = args.map((a) => (typeof a === 'number' ? [a] : a))
  const call = () => f(...boxed.map((b, i) => (typeof args[i] === 'number' ? (b as number[])[0] : b)))
  const out: number[] = []
  for (const b of boxed) {
    for (const l of leaves(b)) {
      const x0 = l.get()
      l.set(x0 + h)
      const fp = call()
      l.set(x0 - h)
      const fm = call()
      l.set(x0)
      out.push((fp - fm) / (2 * h))
    }
  }
  return out
}

/** max |a − b| / max(1, |b|) elementwise. */
export function maxScaledError(a: number[], b: number[]): number {
  if (a.length !== b.length) return Infinity
  let e = 0
  for (let i = 0; i < a.length; i++) e = Math.max(e, Math.abs(a[i]! - b[i]!) / Math.max(1, Math.abs(b[i]!)))
  return e
}
