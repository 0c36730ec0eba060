/**
 * A minimal WebAssembly binary writer: LEB128 numbers, value types, the opcodes the code
 * generator uses, and the module sections (types, imports, functions, memory, globals, exports,
 * code). Nothing here knows about Tenet.
 */

/** Value types, by their binary code. */
export const I32 = 0x7f,
  I64 = 0x7e,
  F32 = 0x7d,
  F64 = 0x7c,
  V128 = 0x7b
export type ValType = typeof I32 | typeof I64 | typeof F32 | typeof F64 | typeof V128

/** The opcodes used by the code generator (single-byte ones; `0xfc` prefixed ones are pairs). */
export const Op = {
  unreachable: 0x00,
  block: 0x02,
  loop: 0x03,
  if: 0x04,
  else: 0x05,
  end: 0x0b,
  br: 0x0c,
  br_if: 0x0d,
  return: 0x0f,
  call: 0x10,
  drop: 0x1a,
  select: 0x1b,
  local_get: 0x20,
  local_set: 0x21,
  local_tee: 0x22,
  global_get: 0x23,
  global_set: 0x24,
  i32_load: 0x28,
  f32_load: 0x2a,
  f64_load: 0x2b,
  i32_load8_u: 0x2d,
  i32_store: 0x36,
  f32_store: 0x38,
  f64_store: 0x39,
  i32_store8: 0x3a,
  memory_size: 0x3f,
  memory_grow: 0x40,
  i32_const: 0x41,
  i64_const: 0x42,
  i64_eqz: 0x50,
  f32_const: 0x43,
  f64_const: 0x44,
  i32_eqz: 0x45,
  i32_eq: 0x46,
  i32_ne: 0x47,
  i32_lt_s: 0x48,
  i32_lt_u: 0x49,
  i32_gt_s: 0x4a,
  i32_gt_u: 0x4b,
  i32_le_s: 0x4c,
  i32_le_u: 0x4d,
  i32_ge_s: 0x4e,
  i32_ge_u: 0x4f,
  i64_lt_s: 0x53,
  i64_gt_s: 0x55,
  i64_ge_s: 0x59,
  f32_eq: 0x5b,
  f32_ne: 0x5c,
  f32_lt: 0x5d,
  f32_gt: 0x5e,
  f32_le: 0x5f,
  f32_ge: 0x60,
  f64_eq: 0x61,
  f64_ne: 0x62,
  f64_lt: 0x63,
  f64_gt: 0x64,
  f64_le: 0x65,
  f64_ge: 0x66,
  i32_add: 0x6a,
  i32_sub: 0x6b,
  i32_mul: 0x6c,
  i32_div_s: 0x6d,
  i32_rem_s: 0x6f,
  i64_add: 0x7c,
  i64_mul: 0x7e,
  i64_sub: 0x7d,
  i32_and: 0x71,
  i32_or: 0x72,
  i32_xor: 0x73,
  i32_shl: 0x74,
  i32_shr_s: 0x75,
  i32_shr_u: 0x76,
  f32_abs: 0x8b,
  f32_neg: 0x8c,
  f32_ceil: 0x8d,
  f32_floor: 0x8e,
  f32_trunc: 0x8f,
  f32_nearest: 0x90,
  f32_sqrt: 0x91,
  f32_add: 0x92,
  f32_sub: 0x93,
  f32_mul: 0x94,
  f32_div: 0x95,
  f32_min: 0x96,
  f32_max: 0x97,
  f32_copysign: 0x98,
  f64_abs: 0x99,
  f64_neg: 0x9a,
  f64_ceil: 0x9b,
  f64_floor: 0x9c,
  f64_trunc: 0x9d,
  f64_nearest: 0x9e,
  f64_sqrt: 0x9f,
  f64_add: 0xa0,
  f64_sub: 0xa1,
  f64_mul: 0xa2,
  f64_div: 0xa3,
  f64_min: 0xa4,
  f64_max: 0xa5,
  f64_copysign: 0xa6,
  i32_wrap_i64: 0xa7,
  i64_extend_i32_s: 0xac,
  i64_extend_i32_u: 0xad,
  f64_reinterpret_i64: 0xbf,
  f32_convert_i32_s: 0xb2,
  f32_demote_f64: 0xb6,
  f64_convert_i32_s: 0xb7,
  f64_promote_f32: 0xbb,
  prefix_fc: 0xfc,
  prefix_fd: 0xfd,
} as const

/** `0xfd`-prefixed (SIMD) sub-opcodes. */
export const OpFd = {
  v128_load: 0x00,
  /** i64x2.load32x2_s: two i32, each sign-extended to an i64 lane */
  i64x2_load32x2_s: 0x05,
  v128_load64_splat: 0x0a,
  v128_load64_lane: 0x57,
  v128_store: 0x0b,
  v128_const: 0x0c,
  i8x16_shuffle: 0x0d,
  i32x4_splat: 0x11,
  i64x2_splat: 0x12,
  f64x2_splat: 0x14,
  i64x2_extract_lane: 0x1d,
  i64x2_replace_lane: 0x1e,
  f64x2_extract_lane: 0x21,
  f64x2_replace_lane: 0x22,
  f64x2_eq: 0x47,
  f64x2_ne: 0x48,
  f64x2_lt: 0x49,
  f64x2_gt: 0x4a,
  f64x2_le: 0x4b,
  f64x2_ge: 0x4c,
  v128_not: 0x4d,
  v128_and: 0x4e,
  v128_andnot: 0x4f,
  v128_or: 0x50,
  v128_xor: 0x51,
  v128_bitselect: 0x52,
  v128_any_true: 0x53,
  i64x2_all_true: 0xc3,
  i32x4_mul: 0xb5,
  i64x2_neg: 0xc1,
  i64x2_extend_low_i32x4_s: 0xc7,
  i64x2_shl: 0xcb,
  i64x2_shr_s: 0xcc,
  i64x2_add: 0xce,
  i64x2_sub: 0xd1,
  i64x2_mul: 0xd5,
  i64x2_eq: 0xd6,
  i64x2_ne: 0xd7,
  i64x2_lt_s: 0xd8,
  i64x2_gt_s: 0xd9,
  i64x2_le_s: 0xda,
  i64x2_ge_s: 0xdb,
  f64x2_abs: 0xec,
  f64x2_neg: 0xed,
  f64x2_sqrt: 0xef,
  f64x2_add: 0xf0,
  f64x2_sub: 0xf1,
  f64x2_mul: 0xf2,
  f64x2_div: 0xf3,
  f64x2_min: 0xf4,
  f64x2_max: 0xf5,
  f64x2_convert_low_i32x4_s: 0xfe,
} as const

/** Whether this engine runs WebAssembly SIMD (a function returning `f64x2.splat(0)` validates). */
export const simdAvailable: boolean = (() => {
  try {
    return WebAssembly.validate(
      new Uint8Array([
        0x00,
        0x61,
        0x73,
        0x6d,
        0x01,
        0x00,
        0x00,
        0x00,
        0x01,
        0x05,
        0x01,
        0x60,
        0x00,
        0x01,
        V128,
        0x03,
        0x02,
        0x01,
        0x00,
        0x0a,
        0x0f,
        0x01,
        0x0d,
        0x00,
        0x44,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        0xfd,
        0x14,
        0x0b,
      ]),
    )
  } catch {
    return false
  }
})()

/** `0xfc`-prefixed sub-opcodes. */
export const OpFc = { i32_trunc_sat_f64_s: 0x02, i64_trunc_sat_f64_s: 0x06, memory_fill: 0x0b } as const

/** A growable byte buffer with the encodings of the binary format. */
export class Bytes {
  private buf = new Uint8Array(256)
  length = 0

  private ensure(n: number): void {
    if (this.length + n <= this.buf.length) return
    let size = this.buf.length * 2
    while (size < this.length + n) size *= 2
    const next = new Uint8Array(size)
    next.set(this.buf.subarray(0, this.length))
    this.buf = next
  }
  byte(b: number): this {
    this.ensure(1)
    this.buf[this.length++] = b & 0xff
    return this
  }
  bytes(bs: ArrayLike<number>): this {
    this.ensure(bs.length)
    for (let i = 0; i < bs.length; i++) this.buf[this.length++] = bs[i]! & 0xff
    return this
  }
  /** Unsigned LEB128. */
  u32(v: number): this {
    v >>>= 0
    do {
      let b = v & 0x7f
      v >>>= 7
      if (v !== 0) b |= 0x80
      this.byte(b)
    } while (v !== 0)
    return this
  }
  /** Signed LEB128 of a 32-bit integer. */
  s32(v: number): this {
    v |= 0
    for (;;) {
      const b = v & 0x7f
      v >>= 7
      if ((v === 0 && (b & 0x40) === 0) || (v === -1 && (b & 0x40) !== 0)) return this.byte(b)
      this.byte(b | 0x80)
    }
  }
  /** Signed LEB128 of a 64-bit integer. */
  s64(v: bigint): this {
    for (;;) {
      const b = Number(v & 0x7fn)
      v >>= 7n
      if ((v === 0n && (b & 0x40) === 0) || (v === -1n && (b & 0x40) !== 0)) return this.byte(b)
      this.byte(b | 0x80)
    }
  }
  f64(v: number): this {
    const d = new DataView(new ArrayBuffer(8))
    d.setFloat64(0, v, true)
    return this.bytes(new Uint8Array(d.buffer))
  }
  f32(v: number): this {
    const d = new DataView(new ArrayBuffer(4))
    d.setFloat32(0, v, true)
    return this.bytes(new Uint8Array(d.buffer))
  }
  name(s: string): this {
    const b = new TextEncoder().encode(s)
    return this.u32(b.length).bytes(b)
  }
  /** Appends another buffer prefixed with its length (a section or a function body). */
  sized(inner: Bytes): this {
    return this.u32(inner.length).bytes(inner.view())
  }
  /** A 5-byte unsigned LEB128 placeholder, filled in later by `patchU32`. */
  padU32(): this {
    return this.bytes([0x80, 0x80, 0x80, 0x80, 0x00])
  }
  /** Overwrites a `padU32` placeholder at `at` with `v` (still 5 bytes, a valid LEB128). */
  patchU32(at: number, v: number): void {
    for (let i = 0; i < 5; i++) this.buf[at + i] = ((v >>> (7 * i)) & 0x7f) | (i < 4 ? 0x80 : 0)
  }
  /** Overwrites the byte at \`at\` (a one-byte placeholder, e.g. the LEB128 of a small constant). */
  patchByte(at: number, b: number): void {
    this.buf[at] = b & 0xff
  }
  view(): Uint8Array {
    return this.buf.subarray(0, this.length)
  }
}

/** A function type. */
export interface FuncType {
  params: ValType[]
  results: ValType[]
}

/** An imported function. */
export interface ImportedFunc {
  module: string
  name: string
  type: FuncType
}

/** A defined function: its type, extra locals, and its body (without the final `end`). */
export interface DefinedFunc {
  type: FuncType
  locals: ValType[]
  prologue?: Bytes
  body: Bytes
  export?: string
  /** Its name in the module's name section (what profiles and stack traces show). */
  name?: string
}

/** A mutable i32 global (or f64 global, \`f64\`) with its initial value, optionally exported. */
export interface GlobalI32 {
  init: number
  export?: string
  /** An f64 global rather than an i32 one. */
  f64?: boolean
}

/** The parts of a module; function indices count imports first. */
export interface ModuleParts {
  imports: ImportedFunc[]
  functions: DefinedFunc[]
  /** Initial memory size in 64 KiB pages; the memory is exported as `memory`. */
  memoryPages: number
  globals: GlobalI32[]
  /**
   * Import the memory (\`mem.memory\`) and a mutable i32 global (\`mem.hp\`, global 0, before the
   * defined ones) instead of defining a memory: modules that import one memory share it.
   */
  importMemory?: boolean
}

const typeKey = (t: FuncType): string => `${t.params.join(',')}:${t.results.join(',')}`

/** Encodes a module. */
export function encodeModule(parts: ModuleParts): Uint8Array {
  const types: FuncType[] = []
  const typeIndex = new Map<string, number>()
  const typeOf = (t: FuncType): number => {
    const k = typeKey(t)
    let i = typeIndex.get(k)
    if (i === undefined) {
      i = types.length
      types.push(t)
      typeIndex.set(k, i)
    }
    return i
  }
  const importTypes = parts.imports.map((f) => typeOf(f.type))
  const funcTypes = parts.functions.map((f) => typeOf(f.type))

  const out = new Bytes().bytes([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00])
  const section = (id: number, fill: (b: Bytes) => void) => {
    const b = new Bytes()
    fill(b)
    out.byte(id).sized(b)
  }
  section(1, (b) => {
    b.u32(types.length)
    for (const t of types) {
      b.byte(0x60).u32(t.params.length).bytes(t.params).u32(t.results.length).bytes(t.results)
    }
  })
  const shared = parts.importMemory === true
  if (parts.imports.length || shared) {
    section(2, (b) => {
      b.u32(parts.imports.length + (shared ? 2 : 0))
      parts.imports.forEach((f, i) => b.name(f.module).name(f.name).byte(0x00).u32(importTypes[i]!))
      // the memory (limits: at least one page, no maximum) and the heap top
      if (shared) b.name('mem').name('memory').byte(0x02).byte(0x00).u32(1)
      if (shared) b.name('mem').name('hp').byte(0x03).byte(I32).byte(0x01)
    })
  }
  section(3, (b) => {
    b.u32(funcTypes.length)
    for (const t of funcTypes) b.u32(t)
  })
  if (!shared) section(5, (b) => b.u32(1).byte(0x00).u32(parts.memoryPages))
  if (parts.globals.length) {
    section(6, (b) => {
      b.u32(parts.globals.length)
      for (const g of parts.globals)
        if (g.f64) b.byte(F64).byte(0x01).byte(Op.f64_const).f64(g.init).byte(Op.end)
        else b.byte(I32).byte(0x01).byte(Op.i32_const).s32(g.init).byte(Op.end)
    })
  }
  section(7, (b) => {
    const exports: Array<[string, number, number]> = [['memory', 0x02, 0]]
    parts.functions.forEach((f, i) => {
      if (f.export) exports.push([f.export, 0x00, parts.imports.length + i])
    })
    parts.globals.forEach((g, i) => {
      if (g.export) exports.push([g.export, 0x03, i + (shared ? 1 : 0)])
    })
    b.u32(exports.length)
    for (const [name, kind, index] of exports) b.name(name).byte(kind).u32(index)
  })
  section(10, (b) => {
    b.u32(parts.functions.length)
    for (const f of parts.functions) {
      const body = new Bytes()
      // locals, run-length encoded
      const runs: Array<[number, ValType]> = []
      for (const t of f.locals) {
        const last = runs[runs.length - 1]
        if (last && last[1] === t) last[0]++
        else runs.push([1, t])
      }
      body.u32(runs.length)
      for (const [n, t] of runs) body.u32(n).byte(t)
      if (f.prologue) body.bytes(f.prologue.view())
      body.bytes(f.body.view()).byte(Op.end)
      b.sized(body)
    }
  })
  // the custom "name" section: function names for profiles and stack traces (imports by their
  // import names, defined functions where they have one)
  const names: Array<[number, string]> = parts.imports.map((f, i) => [i, `${f.module}.${f.name}`])
  parts.functions.forEach((f, i) => {
    if (f.name) names.push([parts.imports.length + i, f.name])
  })
  section(0, (b) => {
    b.name('name')
    const sub = new Bytes()
    sub.u32(names.length)
    for (const [i, n] of names) sub.u32(i).name(n)
    b.byte(1).sized(sub)
  })
  return out.view().slice()
}
