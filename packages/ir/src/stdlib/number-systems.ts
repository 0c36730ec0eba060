import type { NumberSystemSpec } from '../plugin.js'

const notBijective = (name: string) => (op: string) =>
  op === '*=' || op === '/='
    ? `\`${op}\` is not reversible on ${name} (multiplying by zero loses information); use a logarithmic number (\`ulog\`), or \`+=\`/\`-=\``
    : `\`${op}\` is not an update of ${name}`

/** IEEE double precision, the default scalar type. `+=`/`-=` are treated as reversible. */
export const f64: NumberSystemSpec = {
  specificationVersion: 'v1',
  name: 'f64',
  description:
    'IEEE-754 double precision (the default); rounding in +=/-= (and *=//=, which check for a zero factor) is ignored, as in the papers',
  // `*=`/`/=` by a nonzero finite factor (checked at run time, `runtime/zero-factor`): reversible
  // up to rounding, as NiLang's MulEq on floats
  bijectiveUpdates: ['+=', '-=', '*=', '/='],
  rejectUpdate: notBijective('f64'),
  update: (op, a, b) => (op === '*=' ? a * b : a / b),
  exact: false,
  float: true,
  arrayType: 'Float64Array',
}

/** IEEE single precision: every write is rounded with `Math.fround`. */
export const f32: NumberSystemSpec = {
  specificationVersion: 'v1',
  name: 'f32',
  description: 'IEEE-754 single precision, rounded with Math.fround at every write',
  bijectiveUpdates: ['+=', '-='],
  rejectUpdate: notBijective('f32'),
  exact: false,
  float: true,
  arrayType: 'Float32Array',
  fromHost: Math.fround,
  hostArraysExact: true,
  round: { evaluate: Math.fround, cpu: (x) => `Math.fround(${x})` },
}

/** 32-bit two's-complement integers: arithmetic wraps, so `+=`/`-=`/`^=` are exact bijections. */
export const i32: NumberSystemSpec = {
  specificationVersion: 'v1',
  name: 'i32',
  description: '32-bit integers; + - * wrap modulo 2^32 (as in Int32Array), so updates are exactly reversible',
  bijectiveUpdates: ['+=', '-=', '^='],
  rejectUpdate: notBijective('i32'),
  exact: true,
  float: false,
  integer: true,
  arrayType: 'Int32Array',
  fromHost: (x) => x | 0,
  hostArraysExact: true,
  round: { evaluate: (x) => x | 0, cpu: (x) => `((${x}) | 0)` },
}

/** Booleans: only `^=` (xor) updates them. */
export const bool: NumberSystemSpec = {
  specificationVersion: 'v1',
  name: 'bool',
  description: 'booleans; only ^= (xor) is an update',
  bijectiveUpdates: ['^='],
  rejectUpdate: (op) => `\`${op}\` is not an update of bool; use \`^=\` (xor)`,
  exact: true,
  float: false,
  arrayType: 'Uint8Array',
}
