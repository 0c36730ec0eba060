/**
 * The math routines' floating-point constants, kept in linear memory instead of in the code.
 *
 * A wasm `f64.const` of a double without a simple bit pattern becomes, in V8's x64 code, a 64-bit
 * immediate moved into a general register and from there into an xmm register (plus a
 * `movddup` for an f64x2 splat): two or three instructions per use, through the integer-to-vector
 * transfer, which the routines' polynomials pay for every coefficient on every call. A load from
 * memory is one instruction (`movsd` / `movddup xmm, [base + offset]`). So while a routine's body
 * is built (`withPool`), each finite nonzero double literal of the builder (`f` of `builder.ts`,
 * `vf` of `vector.ts`) is given a slot of one table shared by all routines of all modules, and is
 * read from there (`f64.load` / `v128.load64_splat` at a constant address). The table lives at a
 * fixed place of every memory of this backend (`MATH_CONSTANTS_AT`, just above the results area:
 * `createMemory` starts the heap above it), so a routine's bytes stay the same in every module and
 * are built once; `writeMathConstants` copies the table into a memory each time a module is
 * compiled into it (the table only grows, its slots never move). A load gives the literal's double
 * bit for bit, so the routines' results do not change. Zeros, infinities and NaN (cheap to make, or
 * rare) stay literals, and so does any literal once the table is full.
 */

/** Byte address of the table in every memory of the backend: the end of the results area (\`RESULTS_BYTES\` of \`memory.ts\`; a test checks that they agree). */
export const MATH_CONSTANTS_AT = 32768
/** Bytes reserved for the table (8 per double). */
export const MATH_CONSTANTS_BYTES = 4096

const table: number[] = []
const slots = new Map<number, number>()
let pooling = 0

/** Runs `build` (a routine's body being written) with its double literals read from the table. */
export function withPool<R>(build: () => R): R {
  pooling++
  try {
    return build()
  } finally {
    pooling--
  }
}

/**
 * The byte address of double `v`'s slot in the table, or undefined where `v` stays a literal
 * (not in `withPool`, zero, not finite, or the table full).
 */
export function constantAddress(v: number): number | undefined {
  if (pooling === 0 || v === 0 || !Number.isFinite(v)) return undefined
  let k = slots.get(v)
  if (k === undefined) {
    if (8 * (table.length + 1) > MATH_CONSTANTS_BYTES) return undefined
    k = table.push(v) - 1
    slots.set(v, k)
  }
  return MATH_CONSTANTS_AT + 8 * k
}

/** Copies the table (every slot given so far) into `memory` at `MATH_CONSTANTS_AT`. */
export function writeMathConstants(memory: WebAssembly.Memory): void {
  if (table.length > 0) new Float64Array(memory.buffer, MATH_CONSTANTS_AT, table.length).set(table)
}

/** The number of doubles in the table (for tests). */
export const mathConstantCount = (): number => table.length
