/**
 * Straight-line copies and zeroings of typed arrays of one length, for the generated gradient
 * drivers (driver.ts, driver-direct.ts). A driver lays its arrays out for the lengths of a call
 * and keeps them while the lengths stay; for those short ones it takes a function made here for
 * that length, \`z[0] = 0; z[1] = 0;\` rather than a loop, and calls it from code that V8 inlines it
 * into (the function is a constant of the driver's closure). A loop of two elements cost about
 * 2 ns of an 8 ns scalar-mul gradient on the cpu backend and 2.5 ns of a 13 ns one on wasm, and
 * about twice that in a process where some array buffer has been detached, such as one whose
 * WebAssembly memory grew (V8's detaching protector is then invalid and every loop bound and
 * element access checks the buffer; Node 20, loaded 2-core machine, in-process A/B). Long arrays
 * get a function that calls the \`fill\` and \`set\` builtins (memset, memcpy).
 *
 * One function per element type and length, shared by every driver: its text names the type,
 * because V8 keeps one type feedback for all functions of one text (\`new Function\` caches by
 * text), and a function that saw two array types would index both generically.
 */
// (a cycle with driver.ts, which imports this module: `SHORT` is read at call time only)
import { SHORT } from './driver.js'

const made = new Map<string, Function>()

function make(key: string, params: string, body: string): Function {
  let f = made.get(key)
  if (!f) {
    f = new Function(`"use strict"; // ${key}\nreturn function (${params}) {\n${body}\n};`)() as Function
    made.set(key, f)
  }
  return f
}

/** \`(z) => z.fill(0)\` for typed arrays of constructor \`ctor\` (a name of \`CTORS\`) and length n, straight-line below \`SHORT\`. */
export function zeroOf(ctor: string, n: number): (z: unknown) => void {
  if (n >= SHORT) return make(`zero ${ctor}`, 'z', 'z.fill(0);') as (z: unknown) => void
  return make(`zero ${ctor} ${n}`, 'z', Array.from({ length: n }, (_, j) => `z[${j}] = 0;`).join(' ')) as (
    z: unknown,
  ) => void
}

/** \`(d, s) => d.set(s)\` for typed arrays of constructor \`ctor\` and length n, straight-line below \`SHORT\` (not float32). */
export function copyOf(ctor: string, n: number): (d: unknown, s: unknown) => void {
  // (float32 always with \`set\`, which copies the bits: an element read as a double quiets a
  // signalling NaN, so a straight-line copy would not be an exact copy)
  if (n >= SHORT || ctor === 'Float32Array')
    return make(`copy ${ctor}`, 'd, s', 'd.set(s);') as (d: unknown, s: unknown) => void
  return make(`copy ${ctor} ${n}`, 'd, s', Array.from({ length: n }, (_, j) => `d[${j}] = s[${j}];`).join(' ')) as (
    d: unknown,
    s: unknown,
  ) => void
}
