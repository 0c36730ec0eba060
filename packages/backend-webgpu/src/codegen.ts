/**
 * Core IR → one WGSL compute shader. Each invocation runs the kernel's steps (a function, its
 * inverse, or a function followed by its adjoint) on one item of the batch: per-item values are
 * sliced out of their buffers by the item index, shared values are read by all. Calls are
 * inlined with their parameters bound to the caller's memory (WGSL has no recursion and no
 * pointers into storage buffers as parameters); names in the shader are generated, never taken
 * from the source.
 *
 * Run-time checks lower to one assert kind: the first failing invocation records its site, item
 * and a value in the error buffer and stops its loops; the host throws the site's error after
 * the dispatch (see `Site`).
 */
import {
  TenetStaticError,
  printExpr,
  type Arg,
  type BijectionSpec,
  type Dataview,
  type Expr,
  type FunctionDef,
  type Registry,
  type ScalarTypeName,
  type SourceLocation,
  type Stmt,
} from '@tenet/ir'
import { mathLibrary } from './precise-math.js'
import { f32Literal, fixedToInt, gpuScalar, i32Literal, storageType, wgslType, type GpuScalar } from './scalars.js'

/** How a kernel parameter is laid out in memory. */
export type ParamRole =
  /** One value per item: a buffer of n scalars, or n arrays of the same length L (item-major). */
  | 'item'
  /** Read by every item: a scalar or an array. */
  | 'shared'
  /** The gradient of a shared parameter: every item adds into it (see `Reduction`). */
  | 'shared-gradient'
  /** Written but never read (the adjoint's sink): updates are dropped. */
  | 'discard'

/**
 * How the gradients of shared parameters are summed over items: `tree` gives each item its own
 * partial row, summed by fixed-order per-workgroup trees (deterministic); `atomic` adds into one
 * buffer with compare-and-swap on the f32 bits (order varies run to run).
 */
export type Reduction = 'tree' | 'atomic'

/** One parameter of a kernel. */
export interface KernelParam {
  name: string
  role: ParamRole
  /** Scalar or array (the element type in `elem`). */
  shape: 'scalar' | 'array'
  elem: ScalarTypeName
  /** Whether the kernel writes it (per-item scalars are stored back only then). */
  written: boolean
}

/** A run-time check that failed: code and message as the other backends raise them. */
export interface Site {
  code: string
  message: (value: number) => string
  loc?: SourceLocation
}

/** A step of a kernel: call `fn` with the kernel parameters named in `args`. */
export interface KernelStep {
  fn: FunctionDef
  args: string[]
}

/** What the code generator needs. */
export interface KernelSpec {
  registry: Registry
  /** Functions that steps may call, by name, and their inverses. */
  functions: Map<string, FunctionDef>
  inverses: Map<string, FunctionDef>
  writes: Map<string, boolean[]>
  params: KernelParam[]
  steps: KernelStep[]
  checks: boolean
  tolerance: number
  reduction: Reduction
  workgroupSize: number
  /**
   * f32 transcendentals, `/` and `sqrt` by this package's routines, within one ulp of the
   * correctly rounded result (default), or by the device's built-ins (`false`: faster, with
   * WGSL's loose error bounds). See `precise-math.ts`.
   */
  precise?: boolean
}

/** A generated shader and how to bind and read it. */
export interface Kernel {
  code: string
  sites: Site[]
  /** Meta slot (u32 index into the uniform) of each array parameter's length, per item or in all (−1: scalar). */
  lengthSlot: number[]
  /** Meta slot of each parameter's offset (in elements) in its group's buffer (−1: no buffer). */
  offsetSlot: number[]
  /** The buffer group (binding g + 2) of each parameter (−1: none, the sink). */
  paramGroup: number[]
  /** The buffers: one per storage type and access. */
  groups: BufferGroup[]
  /** Number of u32 meta slots. */
  metaSize: number
}

/** One storage buffer of a kernel, holding the parameters of one element type and access. */
export interface BufferGroup {
  elem: 'f32' | 'i32' | 'u32' | 'atomic'
  readOnly: boolean
}

const fail = (code: string, msg: string, loc?: SourceLocation): never => {
  throw new TenetStaticError(code, msg, loc)
}

/** Where a scalar lives. */
type Place =
  | { kind: 'var'; v: string; s: GpuScalar }
  | { kind: 'value'; code: string; s: GpuScalar }
  | { kind: 'discard' }
  | { kind: 'elem'; arr: ArrayRef; index: string }
  | { kind: 'neg'; inner: Place; s: GpuScalar }
  | { kind: 'atomic'; buf: number; index: string; s: GpuScalar }

/** An array: a buffer slice [base, base + len). */
interface ArrayRef {
  buf: number
  base: string
  len: string
  s: GpuScalar
  atomic: boolean
  readOnly: boolean
  name: string
}

type Binding = { kind: 'scalar'; place: Place } | { kind: 'array'; arr: ArrayRef }

const PRELUDE = `
// branch-free: records the first failed check of this invocation (site + 1 and a value)
fn tenet_check(ok: bool, site: u32, value: i32) {
  let first = (!ok) & (tenet_bad == 0u);
  tenet_bad = select(tenet_bad, site + 1u, first);
  tenet_bad_value = select(tenet_bad_value, value, first);
}
fn tenet_m(i: u32) -> u32 { return tenet_meta[i / 4u][i % 4u]; }
// Math.trunc(x) | 0: values beyond the i32 range wrap modulo 2^32, NaN and infinities give 0
fn tenet_f2i(x: f32) -> i32 {
  if (abs(x) < 2147483648.0) { return i32(trunc(x)); }
  let b = bitcast<u32>(x);
  let e = i32((b >> 23u) & 0xffu) - 150;
  if (e >= 105) { return 0; }
  var r = 0u;
  if (e < 32) { r = ((b & 0x7fffffu) | 0x800000u) << u32(e); }
  if (x < 0.0) { return -bitcast<i32>(r); }
  return bitcast<i32>(r);
}
// Math.pow(a, b) | 0 for integers (exact while |a^b| < 2^53)
fn tenet_ipow(a: i32, b: i32) -> i32 {
  if (b < 0) {
    if (a == 1) { return 1; }
    if (a == -1) { return select(1, -1, (b & 1) != 0); }
    return 0;
  }
  var r = 1;
  var x = a;
  var e = b;
  while (e > 0) {
    if ((e & 1) != 0) { r = r * x; }
    x = x * x;
    e = e >> 1;
  }
  return r;
}
// a fixed-point grid integer from a real value: round half away from zero
fn tenet_fx_round(t: f32) -> f32 {
  if (abs(t) >= 8388608.0) { return t; }
  return sign(t) * floor(abs(t) + 0.5);
}
fn tenet_near(a: f32, b: f32, tol: f32) -> bool { return (a == b) | (abs(a - b) <= tol * max(1.0, abs(b))); }
`

/** Generates the WGSL of a kernel. */
export function generateKernel(spec: KernelSpec): Kernel {
  return new Generator(spec).run()
}

class Generator {
  private lines: string[] = []
  private indent = 1
  private counter = 0
  private readonly sites: Site[] = []
  private readonly helpers = new Map<string, string>()
  private checking: boolean
  private readonly callStack: string[] = []
  private readonly lengthSlot: number[] = []
  private readonly offsetSlot: number[] = []
  private readonly paramGroup: number[] = []
  private readonly groups: BufferGroup[] = []
  private metaSize = 1

  constructor(private readonly spec: KernelSpec) {
    this.checking = spec.checks
  }

  /** A new local name: `_` then a letter and a number, never a WGSL keyword or type (`i32`). */
  private fresh(p: string): string {
    return `_${p}${this.counter++}`
  }
  private line(s: string): void {
    this.lines.push('  '.repeat(this.indent) + s)
  }
  private site(code: string, loc: SourceLocation | undefined, message: (value: number) => string): number {
    this.sites.push({ code, message, ...(loc ? { loc } : {}) })
    return this.sites.length - 1
  }
  private scalar(t: ScalarTypeName | undefined, loc?: SourceLocation): GpuScalar {
    if (t === undefined) return fail('webgpu/internal', 'an expression has no type (run check() first)', loc)
    return gpuScalar(this.spec.registry, t, loc)
  }

  run(): Kernel {
    const { params, workgroupSize: wg } = this.spec
    const decls: string[] = []
    const top = new Map<string, Binding>()
    const load: string[] = []
    const store: string[] = []
    // one binding per storage type and access (WebGPU allows few storage buffers per shader; the
    // gradient kernel of a function with many parameters has twice as many): each parameter is a
    // slice of its group's buffer, at an offset the host puts in the meta uniform
    const groupOf = new Map<string, number>()
    params.forEach((p, i) => {
      if (p.role === 'discard') {
        this.paramGroup[i] = -1
        this.offsetSlot[i] = -1
        this.lengthSlot[i] = -1
        top.set(p.name, { kind: 'scalar', place: { kind: 'discard' } })
        return
      }
      const s = gpuScalar(this.spec.registry, p.elem)
      const ro = p.role === 'shared' || (p.role === 'item' && !p.written)
      const atomic = p.role === 'shared-gradient' && this.spec.reduction === 'atomic'
      const key = atomic ? 'atomic<u32>' : `${storageType(s)}/${ro ? 'read' : 'read_write'}`
      let g = groupOf.get(key)
      if (g === undefined) {
        g = this.groups.length
        groupOf.set(key, g)
        this.groups.push({ elem: atomic ? 'atomic' : storageType(s), readOnly: ro })
        decls.push(
          `@group(0) @binding(${g + 2}) var<storage, ${ro ? 'read' : 'read_write'}> buf${g}: array<${atomic ? 'atomic<u32>' : storageType(s)}>;`,
        )
      }
      this.paramGroup[i] = g
      const off = `tenet_m(${(this.offsetSlot[i] = this.metaSize++)}u)`
      if (p.shape === 'array') {
        const slot = this.metaSize++
        this.lengthSlot[i] = slot
        const len = `i32(tenet_m(${slot}u))`
        const perItem = p.role === 'item' || (p.role === 'shared-gradient' && !atomic)
        const base = perItem ? `(${off} + tenet_item * tenet_m(${slot}u))` : off
        top.set(p.name, { kind: 'array', arr: { buf: g, base, len, s, atomic, readOnly: ro, name: p.name } })
        return
      }
      this.lengthSlot[i] = -1
      if (p.role === 'shared') {
        top.set(p.name, { kind: 'scalar', place: { kind: 'value', code: this.fromStorage(s, `buf${g}[${off}]`), s } })
      } else if (atomic) {
        top.set(p.name, { kind: 'scalar', place: { kind: 'atomic', buf: g, index: off, s } })
      } else {
        // a per-item scalar (or the item's partial of a shared gradient) lives in a register
        const v = this.fresh('p')
        const init = p.role === 'shared-gradient' ? '0.0f' : this.fromStorage(s, `buf${g}[${off} + tenet_item]`)
        load.push(`var ${v}: ${wgslType(s)} = ${init};`)
        if (p.written || p.role === 'shared-gradient')
          store.push(`buf${g}[${off} + tenet_item] = ${this.toStorage(s, v)};`)
        top.set(p.name, { kind: 'scalar', place: { kind: 'var', v, s } })
      }
    })
    for (const l of load) this.line(l)
    for (const step of this.spec.steps) {
      const env = new Map<string, Binding>()
      step.fn.params.forEach((p, k) => {
        const b = top.get(step.args[k]!)
        if (!b)
          fail('webgpu/internal', `kernel step \`${step.fn.name}\` names an unknown parameter \`${step.args[k]}\``)
        env.set(p.name, b!)
      })
      this.line('{')
      this.indent++
      this.block(step.fn.body, env)
      this.indent--
      this.line('}')
    }
    for (const l of store) this.line(l)
    const metaVec = Math.max(1, Math.ceil(this.metaSize / 4))
    const math = mathLibrary([...this.lines, ...this.helpers.values()].join('\n'), this.spec.precise ?? true)
    const code = [
      `@group(0) @binding(0) var<uniform> tenet_meta: array<vec4<u32>, ${metaVec}>;`,
      '@group(0) @binding(1) var<storage, read_write> tenet_err: array<atomic<u32>, 4>;',
      ...decls,
      'var<private> tenet_item: u32;',
      'var<private> tenet_bad: u32;',
      'var<private> tenet_bad_value: i32;',
      '// false at run time, but the compiler cannot know it (see the math routines)',
      'var<private> tenet_opaque: bool;',
      '// non-finite constants as run-time values (a constant expression may not be infinite)',
      'var<private> tenet_pinf: u32 = 0x7f800000u;',
      'var<private> tenet_ninf: u32 = 0xff800000u;',
      'var<private> tenet_nan: u32 = 0x7fc00000u;',
      PRELUDE,
      math,
      ...this.helpers.values(),
      `@compute @workgroup_size(${wg})`,
      'fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {',
      `  let item = gid.x + gid.y * nwg.x * ${wg}u;`,
      '  if (item >= tenet_m(0u)) { return; }',
      '  tenet_item = item;',
      '  tenet_opaque = tenet_m(0u) == 0xffffffffu;',
      ...this.lines,
      '  if (tenet_bad != 0u && atomicAdd(&tenet_err[0], 1u) == 0u) {',
      '    atomicStore(&tenet_err[1], tenet_bad - 1u);',
      '    atomicStore(&tenet_err[2], tenet_item);',
      '    atomicStore(&tenet_err[3], bitcast<u32>(tenet_bad_value));',
      '  }',
      '}',
      '',
    ].join('\n')
    return {
      code,
      sites: this.sites,
      lengthSlot: this.lengthSlot,
      offsetSlot: this.offsetSlot,
      paramGroup: this.paramGroup,
      groups: this.groups,
      metaSize: this.metaSize,
    }
  }

  private fromStorage(s: GpuScalar, code: string): string {
    return s.kind === 'bool' ? `(${code} != 0u)` : code
  }
  private toStorage(s: GpuScalar, code: string): string {
    return s.kind === 'bool' ? `select(0u, 1u, ${code})` : code
  }

  // ---------- arrays ----------

  private loadElem(a: ArrayRef, index: string, loc?: SourceLocation): string {
    if (a.atomic)
      fail(
        'webgpu/shared-gradient-read',
        `the gradient \`${a.name}\` of a shared parameter is read here; with the atomic reduction each item may only add to it (use reduction: 'tree')`,
        loc,
      )
    if (!this.checking) return this.fromStorage(a.s, `buf${a.buf}[${a.base} + u32(${index})]`)
    const site = this.bounds(a, loc)
    const name = `tenet_ld${a.buf}`
    if (!this.helpers.has(name)) {
      this.helpers.set(
        name,
        `fn ${name}(base: u32, len: i32, i: i32, site: u32) -> ${storageType(a.s)} {\n  let ok = u32(i) < u32(len);\n  tenet_check(ok, site, i);\n  return buf${a.buf}[base + select(0u, u32(i), ok)];\n}`,
      )
    }
    return this.fromStorage(a.s, `${name}(${a.base}, ${a.len}, ${index}, ${site}u)`)
  }

  private storeElem(a: ArrayRef, index: string, value: string, loc?: SourceLocation): void {
    if (a.readOnly) fail('webgpu/internal', `\`${a.name}\` is read-only in this kernel`, loc)
    const v = this.toStorage(a.s, value)
    if (!this.checking) {
      this.line(`buf${a.buf}[${a.base} + u32(${index})] = ${v};`)
      return
    }
    const site = this.bounds(a, loc)
    const name = `tenet_st${a.buf}`
    if (!this.helpers.has(name)) {
      this.helpers.set(
        name,
        `fn ${name}(base: u32, len: i32, i: i32, site: u32, v: ${storageType(a.s)}) {\n  let ok = u32(i) < u32(len);\n  tenet_check(ok, site, i);\n  if (ok) { buf${a.buf}[base + u32(i)] = v; }\n}`,
      )
    }
    this.line(`${name}(${a.base}, ${a.len}, ${index}, ${site}u, ${v});`)
  }

  private atomicAdd(buf: number, index: string, value: string): void {
    const name = `tenet_aadd${buf}`
    if (!this.helpers.has(name)) {
      // compare-and-swap on the bits of an f32: retried until no other item changed it meanwhile
      this.helpers.set(
        name,
        `fn ${name}(i: u32, v: f32) {\n  var old = atomicLoad(&buf${buf}[i]);\n  loop {\n    let r = atomicCompareExchangeWeak(&buf${buf}[i], old, bitcast<u32>(bitcast<f32>(old) + v));\n    if (r.exchanged) { break; }\n    old = r.old_value;\n  }\n}`,
      )
    }
    this.line(`${name}(${index}, ${value});`)
  }

  private bounds(a: ArrayRef, loc?: SourceLocation): number {
    return this.site('runtime/out-of-bounds', loc, (v) => `index ${v} is out of bounds for \`${a.name}\``)
  }

  // ---------- places ----------

  private placeOf(dv: Dataview | Arg, env: Map<string, Binding>): Place {
    switch (dv.kind) {
      case 'var': {
        const b = env.get(dv.name)
        if (!b || b.kind !== 'scalar') return fail('webgpu/internal', `\`${dv.name}\` is not a scalar here`, dv.loc)
        return b.place
      }
      case 'index': {
        const b = env.get(dv.array.name)
        if (!b || b.kind !== 'array')
          return fail('webgpu/internal', `\`${dv.array.name}\` is not an array here`, dv.loc)
        const ix = this.fresh('ix')
        this.line(`let ${ix} = ${this.expr(dv.index, env)};`)
        return { kind: 'elem', arr: b.arr, index: ix }
      }
      case 'neg': {
        const inner = this.placeOf(dv.target, env)
        return { kind: 'neg', inner, s: this.scalar(dv.type, dv.loc) }
      }
      default:
        return fail(
          'webgpu/unsupported',
          `the webgpu backend cannot write to \`${printExpr(dv as Expr)}\` (fields are not supported)`,
          dv.loc,
        )
    }
  }

  private readPlace(p: Place, loc?: SourceLocation): string {
    switch (p.kind) {
      case 'var':
        return p.v
      case 'value':
        return p.code
      case 'discard':
        return fail('webgpu/internal', "a discarded parameter (the adjoint's sink) is read", loc)
      case 'elem':
        return this.loadElem(p.arr, p.index, loc)
      case 'neg':
        return `(-(${this.readPlace(p.inner, loc)}))`
      case 'atomic':
        return fail(
          'webgpu/shared-gradient-read',
          "the gradient of a shared parameter is read here; with the atomic reduction each item may only add to it (use reduction: 'tree')",
          loc,
        )
    }
  }

  private writePlace(p: Place, value: string, loc?: SourceLocation): void {
    switch (p.kind) {
      case 'var':
        this.line(`${p.v} = ${value};`)
        return
      case 'value':
        fail('webgpu/internal', 'a read-only value is written', loc)
        return
      case 'discard':
        return
      case 'elem':
        this.storeElem(p.arr, p.index, value, loc)
        return
      case 'neg':
        this.writePlace(p.inner, `(-(${value}))`, loc)
        return
      case 'atomic':
        fail(
          'webgpu/shared-gradient-read',
          'the gradient of a shared parameter is overwritten here; with the atomic reduction each item may only add to it',
          loc,
        )
    }
  }

  /** Adds `value` (delta, sign applied) into an atomic place; false when `p` is not one. */
  private atomicUpdate(p: Place, value: string, sign: 1 | -1): boolean {
    if (p.kind === 'atomic') {
      this.atomicAdd(p.buf, p.index, sign > 0 ? value : `-(${value})`)
      return true
    }
    if (p.kind === 'elem' && p.arr.atomic) {
      let index = `${p.arr.base} + u32(${p.index})`
      if (this.checking) {
        const site = this.bounds(p.arr)
        this.line(`tenet_check(!(${p.index} < 0 || ${p.index} >= ${p.arr.len}), ${site}u, ${p.index});`)
        index = `${p.arr.base} + u32(clamp(${p.index}, 0, max(${p.arr.len} - 1, 0)))`
      }
      this.atomicAdd(p.arr.buf, index, sign > 0 ? value : `-(${value})`)
      return true
    }
    if (p.kind === 'neg') return this.atomicUpdate(p.inner, value, sign > 0 ? -1 : 1)
    return false
  }

  // ---------- expressions ----------

  /** The value of a literal-only i32/bool expression, folded with JS semantics (WGSL rejects overflow in constants). */
  private constant(e: Expr): number | boolean | undefined {
    switch (e.kind) {
      case 'num':
        return e.type === 'i32' ? e.value | 0 : undefined
      case 'bool':
        return e.value
      case 'unary': {
        const a = this.constant(e.arg)
        if (a === undefined) return undefined
        if (e.op === '!') return typeof a === 'boolean' ? !a : undefined
        return e.type === 'i32' && typeof a === 'number' ? -a | 0 : undefined
      }
      case 'binary': {
        if (e.type !== 'i32' && e.type !== 'bool') return undefined
        const a = this.constant(e.left),
          b = this.constant(e.right)
        if (a === undefined || b === undefined) return undefined
        if (typeof a === 'boolean' || typeof b === 'boolean') {
          if (typeof a !== 'boolean' || typeof b !== 'boolean') return undefined
          switch (e.op) {
            case '&&':
            case '&':
              return a && b
            case '||':
            case '|':
              return a || b
            case '^':
            case '!=':
              return a !== b
            case '==':
              return a === b
            default:
              return undefined
          }
        }
        switch (e.op) {
          case '+':
            return (a + b) | 0
          case '-':
            return (a - b) | 0
          case '*':
            return Math.imul(a, b)
          case '%':
            return (a % b) | 0
          case '**':
            return Math.pow(a, b) | 0
          case '^':
            return a ^ b
          case '&':
            return a & b
          case '|':
            return a | b
          case '<':
            return a < b
          case '<=':
            return a <= b
          case '>':
            return a > b
          case '>=':
            return a >= b
          case '==':
            return a === b
          case '!=':
            return a !== b
          default:
            return undefined
        }
      }
      case 'call': {
        if (e.callee !== 'div' || e.type !== 'i32') return undefined
        const a = this.constant(e.args[0]!),
          b = this.constant(e.args[1]!)
        if (typeof a !== 'number' || typeof b !== 'number') return undefined
        return Math.trunc(a / b) | 0
      }
      default:
        return undefined
    }
  }

  expr(e: Expr, env: Map<string, Binding>): string {
    if (e.kind !== 'num' && e.kind !== 'bool') {
      const c = this.constant(e)
      if (typeof c === 'boolean') return c ? 'true' : 'false'
      if (typeof c === 'number') return i32Literal(c)
    }
    switch (e.kind) {
      case 'num':
        return this.literal(e.value, this.scalar(e.type, e.loc), e.loc)
      case 'bool':
        return e.value ? 'true' : 'false'
      case 'var': {
        const b = env.get(e.name)
        if (!b) return fail('webgpu/internal', `unknown name \`${e.name}\``, e.loc)
        if (b.kind === 'array') return fail('webgpu/unsupported', `the array \`${e.name}\` is used as a value`, e.loc)
        return this.readPlace(b.place, e.loc)
      }
      case 'index': {
        const b = env.get(e.array.name)
        if (!b || b.kind !== 'array') return fail('webgpu/internal', `\`${e.array.name}\` is not an array here`, e.loc)
        return this.loadElem(b.arr, this.expr(e.index, env), e.loc)
      }
      case 'field':
        return fail('webgpu/unsupported', `the webgpu backend does not support fields (\`.${e.field}\`)`, e.loc)
      case 'unary': {
        const a = this.expr(e.arg, env)
        return e.op === '!' ? `(!${a})` : `(-(${a}))`
      }
      case 'binary':
        return this.binary(e, env)
      case 'call':
        return this.call(e, env)
    }
  }

  private literal(v: number, s: GpuScalar, loc?: SourceLocation): string {
    switch (s.kind) {
      case 'f32':
        return f32Literal(v)
      case 'i32':
        return i32Literal(v)
      case 'bool':
        return v ? 'true' : 'false'
      case 'fixed': {
        const k = fixedToInt(v, s)
        if (k === undefined)
          return fail(
            'runtime/fixed-overflow',
            `${s.name} overflow: the constant ${v} is outside the range of ${s.name}`,
            loc,
          )
        return i32Literal(k)
      }
    }
  }

  private fixedCheck(s: Extract<GpuScalar, { kind: 'fixed' }>, code: string, loc?: SourceLocation): string {
    const name = `tenet_fx_${s.name}`
    if (!this.helpers.has(name)) {
      const site = this.site(
        'runtime/fixed-overflow',
        loc,
        (v) =>
          `${s.name} overflow: a result (${v} · 2^-${s.fractionBits}) is outside the range (−2^${s.integerBits}, 2^${s.integerBits}) of ${s.name}; an update that wrapped around could not be undone`,
      )
      const bound = 2 ** (s.integerBits + s.fractionBits)
      this.helpers.set(
        name,
        `fn ${name}(r: i32) -> i32 {\n  tenet_check(abs(r) < ${bound}i, ${site}u, r);\n  return r;\n}`,
      )
    }
    return `${name}(${code})`
  }

  private binary(e: Extract<Expr, { kind: 'binary' }>, env: Map<string, Binding>): string {
    const a = this.expr(e.left, env),
      b = this.expr(e.right, env)
    switch (e.op) {
      case '&&':
      case '||':
      case '<':
      case '<=':
      case '>':
      case '>=':
      case '==':
      case '!=':
        return `(${a} ${e.op} ${b})`
    }
    const s = this.scalar(e.type, e.loc)
    if (s.kind === 'bool') {
      if (e.op === '^') return `(${a} != ${b})`
      return `(${a} ${e.op} ${b})`
    }
    if (s.kind === 'fixed') {
      if (e.op === '+' || e.op === '-') return this.fixedCheck(s, `${a} ${e.op} ${b}`, e.loc)
      return fail(
        'webgpu/unsupported',
        `\`${e.op}\` on the fixed-point type \`${s.name}\` is not supported on webgpu (only + and - are exact there)`,
        e.loc,
      )
    }
    if (s.kind === 'i32') {
      if (e.op === '**') return `tenet_ipow(${a}, ${b})`
      if (e.op === '/') return fail('webgpu/internal', '`/` of integers (the checker makes it an f64 division)', e.loc)
      return `(${a} ${e.op} ${b})`
    }
    // f32
    if (e.op === '**') {
      if (e.right.kind === 'num' && e.right.value === 2) return `((${a}) * (${a}))`
      return `tenet_pow(${a}, ${e.right.type === 'f32' ? b : `f32(${b})`})`
    }
    if (e.op === '/') return `tenet_div(${a}, ${b})`
    return `(${a} ${e.op} ${b})`
  }

  /** The f32 value of an expression of representation `s` (code `c`). */
  private toF32(s: GpuScalar, c: string): string {
    switch (s.kind) {
      case 'f32':
        return c
      case 'i32':
        return `f32(${c})`
      case 'bool':
        return `select(0.0f, 1.0f, ${c})`
      case 'fixed':
        return `(f32(${c}) * ${f32Literal(2 ** -s.fractionBits)})`
    }
  }

  private call(e: Extract<Expr, { kind: 'call' }>, env: Map<string, Binding>): string {
    const name = e.callee
    if (name.startsWith('$host'))
      return fail('webgpu/unsupported', 'a host (JavaScript) function cannot run on the GPU', e.loc)
    const argS = () => this.scalar(e.args[0]!.type as ScalarTypeName, e.loc)
    switch (name) {
      case 'f64':
        return fail(
          'webgpu/f64',
          'the webgpu backend has no f64: WGSL has no 64-bit floats (`f64(...)` converts to f64)',
          e.loc,
        )
      case 'f32':
        return this.toF32(argS(), this.expr(e.args[0]!, env))
      case 'i32': {
        const s = argS(),
          x = this.expr(e.args[0]!, env)
        if (s.kind === 'i32') return x
        if (s.kind === 'bool') return `select(0i, 1i, ${x})`
        if (s.kind === 'fixed') return `${this.fxTrunc(s.fractionBits)}(${x})`
        return `tenet_f2i(${x})`
      }
      case 'div': {
        const a = this.expr(e.args[0]!, env),
          b = this.expr(e.args[1]!, env)
        const t = this.fresh('d')
        this.line(`let ${t} = ${b};`)
        return `select((${a}) / ${t}, 0i, ${t} == 0i)`
      }
      case 'len': {
        const b = env.get((e.args[0] as { name: string }).name)
        if (!b || b.kind !== 'array') return fail('webgpu/internal', '`len` of a non-array', e.loc)
        return b.arr.len
      }
      case 'convert': {
        const to = this.scalar(e.type, e.loc),
          from = argS()
        const x = this.expr(e.args[0]!, env)
        if (to.kind === 'fixed') {
          if (from.kind === 'fixed' && from.fractionBits === to.fractionBits) return x
          if (from.kind === 'i32') return this.fixedCheck(to, `(${x}) * ${2 ** to.fractionBits}i`, e.loc)
          return this.fixedCheck(
            to,
            `tenet_f2i(tenet_fx_round(${this.toF32(from, x)} * ${f32Literal(2 ** to.fractionBits)}))`,
            e.loc,
          )
        }
        if (to.kind === 'f32') return this.toF32(from, x)
        if (to.kind === 'i32') return from.kind === 'i32' ? x : `tenet_f2i(${this.toF32(from, x)})`
        return fail('webgpu/unsupported', `conversion to ${e.type} on webgpu`, e.loc)
      }
      case 'zeros':
        return fail('webgpu/unsupported', 'local arrays (`zeros(n)`) are not supported on webgpu', e.loc)
    }
    const spec = this.spec.registry.pure(name)
    const emit = spec.emit?.wgsl
    if (!emit) {
      const have = Object.keys(spec.emit ?? {}).filter((k) => (spec.emit as Record<string, unknown>)[k])
      const derivative = /^__tenet_d_(.+)_\d+$/.exec(name)
      const hint = derivative
        ? `; it is a derivative of \`${derivative[1]}\`, whose \`partials\` are a JS function: give \`${derivative[1]}\` \`partialExprs\` so its adjoint is code the GPU runs`
        : '; give it `emit.wgsl`'
      return fail(
        'webgpu/no-lowering',
        `no WGSL lowering for primitive \`${name}\` on backend \`webgpu\` (it has: ${have.length ? have.join(', ') : 'none'}${hint})`,
        e.loc,
      )
    }
    const rs = this.scalar(e.type, e.loc)
    const args = e.args.map((a) => {
      const s = this.scalar(a.type as ScalarTypeName, a.loc)
      const x = this.expr(a, env)
      return s.kind === 'fixed' ? this.toF32(s, x) : x
    })
    const v = `(${emit(...args)})`
    if (rs.kind === 'fixed')
      return this.fixedCheck(rs, `tenet_f2i(tenet_fx_round(${v} * ${f32Literal(2 ** rs.fractionBits)}))`, e.loc)
    return v
  }

  /** The helper that truncates a fixed-point grid integer with F fraction bits toward zero (as `Math.trunc`). */
  private fxTrunc(f: number): string {
    const name = `tenet_fx_trunc_${f}`
    if (!this.helpers.has(name))
      this.helpers.set(
        name,
        `fn ${name}(k: i32) -> i32 {\n  if (k >= 0) { return k >> ${f}u; }\n  return -((-k) >> ${f}u);\n}`,
      )
    return name
  }

  // ---------- statements ----------

  private block(body: Stmt[], env: Map<string, Binding>): void {
    const scoped = new Map(env)
    for (const s of body) this.stmt(s, scoped)
  }

  private distinct(pairs: Array<[Expr, Expr]> | undefined, env: Map<string, Binding>, loc?: SourceLocation): void {
    if (!pairs || !this.checking) return
    for (const [a, b] of pairs) {
      const site = this.site(
        'runtime/alias',
        loc,
        (i) =>
          `\`[${printExpr(a)}]\` and \`[${printExpr(b)}]\` are the same element (index ${i}), so the statement would read the memory it writes`,
      )
      const x = this.expr(a, env)
      this.line(`tenet_check(!(${x} == ${this.expr(b, env)}), ${site}u, ${x});`)
    }
  }

  private stmt(s: Stmt, env: Map<string, Binding>): void {
    switch (s.kind) {
      case 'update': {
        this.distinct(s.distinct, env, s.loc)
        const target = this.placeOf(s.target, env)
        if (target.kind === 'discard') return
        const t = this.scalar((s.target as { type?: ScalarTypeName }).type, s.loc)
        const v = this.expr(s.value, env)
        if ((s.op === '+=' || s.op === '-=') && this.atomicUpdate(target, v, s.op === '+=' ? 1 : -1)) return
        const old = this.readPlace(target, s.loc)
        let code: string
        switch (s.op) {
          case '+=':
          case '-=':
            code = t.kind === 'fixed' ? this.fixedCheck(t, `${old} ${s.op[0]} ${v}`, s.loc) : `${old} ${s.op[0]} ${v}`
            break
          case '^=':
            code = t.kind === 'bool' ? `${old} != ${v}` : `${old} ^ ${v}`
            break
          default:
            return void fail('webgpu/unsupported', `\`${s.op}\` is not supported on webgpu`, s.loc)
        }
        this.writePlace(target, code, s.loc)
        return
      }
      case 'callstmt':
        return this.callStmt(s, env)
      case 'alloc': {
        if (s.value.kind === 'emptystack' || s.type?.kind !== 'scalar') {
          return void fail(
            'webgpu/unsupported',
            `only scalar ancillas run on webgpu (\`${s.name}\` is ${s.value.kind === 'emptystack' ? 'a stack' : 'an array'})`,
            s.loc,
          )
        }
        const sc = this.scalar(s.type.name, s.loc)
        const v = this.fresh('v')
        this.line(`var ${v}: ${wgslType(sc)} = ${this.expr(s.value, env)};`)
        env.set(s.name, { kind: 'scalar', place: { kind: 'var', v, s: sc } })
        return
      }
      case 'dealloc': {
        if (s.value.kind === 'emptystack')
          return void fail('webgpu/unsupported', 'stacks are not supported on webgpu', s.loc)
        const b = env.get(s.name)
        if (this.checking && b?.kind === 'scalar') {
          const sc = this.scalar(
            (s.type as { name?: string } | undefined)?.name ?? (b.place as { s?: GpuScalar }).s?.kind,
            s.loc,
          )
          const cur = this.readPlace(b.place, s.loc)
          const want = this.fresh('w')
          this.line(`let ${want} = ${this.expr(s.value, env)};`)
          const ok =
            sc.kind === 'f32' ? `tenet_near(${cur}, ${want}, ${f32Literal(this.spec.tolerance)})` : `${cur} == ${want}`
          const shown = printExpr(s.value)
          const site = this.site(
            'runtime/dealloc',
            s.loc,
            (v) => `cannot deallocate \`${s.name}\`: it does not hold ${shown} (value bits ${v})`,
          )
          const bits = sc.kind === 'f32' ? `bitcast<i32>(${cur})` : sc.kind === 'bool' ? `select(0i, 1i, ${cur})` : cur
          this.line(`tenet_check(!(!(${ok})), ${site}u, ${bits});`)
        }
        env.delete(s.name)
        return
      }
      case 'if': {
        const c = this.fresh('c')
        this.line(`let ${c} = ${this.expr(s.pre, env)};`)
        this.line(`if (${c}) {`)
        this.indent++
        this.block(s.then, env)
        this.indent--
        if (s.else.length) {
          this.line('} else {')
          this.indent++
          this.block(s.else, env)
          this.indent--
        }
        this.line('}')
        if (this.checking) {
          const post = s.post ?? s.pre
          const site = this.site(
            'runtime/post-condition',
            s.loc,
            (p) =>
              `the post-condition \`${printExpr(post)}\`${s.post ? '' : ' (`~`: the pre-condition again)'} of this \`if\` does not match the pre-condition (${p !== 0})`,
          )
          this.line(`tenet_check(!(${this.expr(post, env)} != ${c}), ${site}u, select(0i, 1i, ${c}));`)
        }
        return
      }
      case 'while': {
        if (this.checking) {
          const site = this.site(
            'runtime/post-condition',
            s.loc,
            () => `the post-condition \`${printExpr(s.post)}\` of this \`while\` must be false when the loop starts`,
          )
          this.line(`tenet_check(!(${this.expr(s.post, env)}), ${site}u, 0i);`)
        }
        this.line('loop {')
        this.indent++
        this.line('if (tenet_bad != 0u) { break; }')
        this.line(`if (!(${this.expr(s.pre, env)})) { break; }`)
        this.block(s.body, env)
        if (this.checking) {
          const site = this.site(
            'runtime/post-condition',
            s.loc,
            () => `the post-condition \`${printExpr(s.post)}\` of this \`while\` must be true after every iteration`,
          )
          this.line(`tenet_check(!(!(${this.expr(s.post, env)})), ${site}u, 0i);`)
        }
        this.indent--
        this.line('}')
        return
      }
      case 'for':
        return this.forStmt(s, env)
      case 'push':
      case 'pop':
        return void fail('webgpu/unsupported', 'stacks (push/pop) are not supported on webgpu', s.loc)
      case 'safe':
        return void fail('webgpu/unsupported', '`@safe` host side effects cannot run on the GPU', s.loc)
      case 'unchecked': {
        const saved = this.checking
        this.checking = false
        for (const x of s.body) this.stmt(x, env)
        this.checking = saved
        return
      }
      default:
        return void fail('webgpu/internal', `\`${s.kind}\` is not core IR (preprocess first)`, s.loc)
    }
  }

  private forStmt(s: Extract<Stmt, { kind: 'for' }>, env: Map<string, Binding>): void {
    const a = this.fresh('a'),
      b = this.fresh('b'),
      st = this.fresh('s'),
      n = this.fresh('n'),
      k = this.fresh('k')
    this.line(`let ${a} = ${this.expr(s.start, env)};`)
    this.line(`let ${b} = ${this.expr(s.stop, env)};`)
    this.line(`let ${st} = ${s.step ? this.expr(s.step, env) : '1i'};`)
    if (s.step && s.step.kind !== 'num') {
      const site = this.site('runtime/zero-step', s.loc, () => 'the loop step is 0')
      this.line(`tenet_check(!(${st} == 0i), ${site}u, 0i);`)
    }
    const gap = s.inclusive ? '' : ' - 1i'
    this.line(`var ${n} = 0i;`)
    this.line(
      `if (${st} > 0i) { if (${a} ${s.inclusive ? '<=' : '<'} ${b}) { ${n} = (${b} - ${a}${gap}) / ${st} + 1i; } } else if (${st} < 0i) { if (${a} ${s.inclusive ? '>=' : '>'} ${b}) { ${n} = (${a} - ${b}${gap}) / (-${st}) + 1i; } }`,
    )
    this.line(`for (var ${k} = 0i; ${k} < ${n}; ${k}++) {`)
    this.indent++
    this.line('if (tenet_bad != 0u) { break; }')
    const iv = this.fresh('i')
    this.line(`let ${iv} = ${a} + ${s.reverse ? `(${n} - 1i - ${k})` : k} * ${st};`)
    const inner = new Map(env)
    inner.set(s.variable, { kind: 'scalar', place: { kind: 'value', code: iv, s: { kind: 'i32' } } })
    this.block(s.body, inner)
    this.indent--
    this.line('}')
    if (this.checking) {
      const site = this.site(
        'runtime/loop-range',
        s.loc,
        () => `the loop range changed while the loop ran; a reversible loop must leave its range unchanged`,
      )
      this.line(
        `tenet_check(!(${this.expr(s.start, env)} != ${a} || ${this.expr(s.stop, env)} != ${b} || ${s.step ? this.expr(s.step, env) : '1i'} != ${st}), ${site}u, 0i);`,
      )
    }
  }

  private callStmt(s: Extract<Stmt, { kind: 'callstmt' }>, env: Map<string, Binding>): void {
    this.distinct(s.distinct, env, s.loc)
    if (s.target === 'bijection') return this.bijection(s, env)
    if (this.callStack.includes(`${s.callee}/${s.inverse}`)) {
      return void fail(
        'webgpu/recursion',
        `\`${s.callee}\` calls itself: the webgpu backend inlines every call, and WGSL has no recursion`,
        s.loc,
      )
    }
    const callee = s.inverse ? this.spec.inverses.get(s.callee) : this.spec.functions.get(s.callee)
    if (!callee)
      return void fail('webgpu/internal', `no function \`${s.callee}\`${s.inverse ? ' (inverse)' : ''}`, s.loc)
    const writes = this.spec.writes.get(s.callee) ?? callee.params.map(() => true)
    const inner = new Map<string, Binding>()
    callee.params.forEach((p, i) => {
      const a = s.args[i]!
      if (p.type.kind === 'array') {
        const b = env.get((a as { name: string }).name)
        if (!b || b.kind !== 'array')
          fail('webgpu/internal', `argument ${i + 1} of \`${s.callee}\` is not an array`, s.loc)
        inner.set(p.name, b!)
        return
      }
      if (p.type.kind === 'stack') fail('webgpu/unsupported', 'stacks are not supported on webgpu', s.loc)
      const bound = a.kind === 'var' ? env.get(a.name) : undefined
      if (bound?.kind === 'scalar' && bound.place.kind === 'discard') {
        inner.set(p.name, bound)
        return
      }
      if (writes[i]) {
        inner.set(p.name, { kind: 'scalar', place: this.placeOf(a, env) })
      } else {
        const sc = this.scalar((p.type as { name: string }).name, s.loc)
        const v = this.fresh('t')
        this.line(
          `let ${v} = ${a.kind === 'neg' ? this.readPlace(this.placeOf(a, env), s.loc) : this.expr(a as Expr, env)};`,
        )
        inner.set(p.name, { kind: 'scalar', place: { kind: 'value', code: v, s: sc } })
      }
    })
    this.callStack.push(`${s.callee}/${s.inverse}`)
    this.line('{')
    this.indent++
    this.block(callee.body, inner)
    this.indent--
    this.line('}')
    this.callStack.pop()
  }

  private bijection(s: Extract<Stmt, { kind: 'callstmt' }>, env: Map<string, Binding>): void {
    let spec: BijectionSpec = this.spec.registry.bijection(s.callee)
    if (s.inverse && spec.inverse !== 'self') spec = this.spec.registry.bijection(spec.inverse)
    const emit = spec.emit?.wgsl
    if (!emit) {
      const have = Object.keys(spec.emit ?? {}).filter((k) => (spec.emit as Record<string, unknown>)[k])
      return void fail(
        'webgpu/no-lowering',
        `no WGSL lowering for primitive \`${spec.name}\` on backend \`webgpu\` (it has: ${have.length ? have.join(', ') : 'none'}; give it \`emit.wgsl\`)`,
        s.loc,
      )
    }
    const places = s.args.map((a, i) => (spec.roles[i] === 'inout' ? this.placeOf(a, env) : undefined))
    const fixedArg = s.args.find((a) => this.scalar((a as { type?: string }).type, s.loc).kind === 'fixed')
    if (fixedArg && spec.name !== 'SWAP' && spec.name !== 'NEG') {
      return void fail(
        'webgpu/unsupported',
        `\`${spec.name}\` on a fixed-point value is not supported on webgpu (only SWAP and NEG act on its grid integer exactly)`,
        s.loc,
      )
    }
    const temps = s.args.map((a, i) => {
      const t = this.fresh('t')
      const p = places[i]
      this.line(
        `let ${t} = ${p ? this.readPlace(p, s.loc) : a.kind === 'neg' ? this.readPlace(this.placeOf(a, env), s.loc) : this.expr(a as Expr, env)};`,
      )
      return t
    })
    const vals = emit(...temps)
    let j = 0
    s.args.forEach((_, i) => {
      const p = places[i]
      if (!p) return
      this.writePlace(p, vals[j++]!, s.loc)
    })
  }
}

export type { Dataview }
