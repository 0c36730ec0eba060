import {
  TenetError,
  type BackendSpec,
  type CompiledFunction,
  type CompiledProgram,
  type ResidentMemory,
  type CompileOptions,
  type DirectEntry,
  type FunctionDef,
  type Program,
} from '@tenet/ir'
import {
  CHECKED_PASSES,
  disabledPasses,
  hoistBounds,
  provenBounds,
  inlineSmallCalls,
  insertChecks,
  optimize,
  pairSeries,
  unrollCheckedSwaps,
} from '@tenet/ir/backend'
import {
  FAIL_VALUE_COUNT,
  FunctionEmitter,
  ModuleContext,
  elemInfo,
  ownEntry,
  passedThrough,
  returnedParam,
  thunk,
} from './codegen.js'
import { hoistedBoundsOnly } from './hoisted-bounds.js'
import { LANE_QUADS_MAX_VALUES } from './lane-quads.js'
import { inlineOnceCalls } from './once-calls.js'
import { dropRepeatedAsserts } from './repeated-asserts.js'
import { splitLoopTails } from './split-tails.js'
import { CHECKED_PASSES as CHECKED, disabledPasses as disabled, exactFunctions, impliedChecks } from '@tenet/ir/backend'
import { Bytes, Op, encodeModule, simdAvailable, type DefinedFunc } from './encoder.js'
import {
  RESULTS_BYTES,
  VIEW,
  allocateBlock,
  createMemory,
  grow,
  refresh,
  releaseBlocks,
  residentMemory,
  type MemoryState,
  type ProgramState,
} from './memory.js'
import type { MathChoice } from './math/index.js'
import { writeMathConstants } from './math/constants.js'

/**
 * A cached subarray of the memory (so copying an array back allocates nothing in steady
 * state: the same arguments land at the same place on every call).
 */
interface ViewCache {
  buffer: ArrayBuffer | null
  at: number
  n: number
  view: ArrayBufferView | null
}

/**
 * Arrays of at most this many elements are copied in and out of the memory by a loop in the
 * wrapper rather than by \`TypedArray.prototype.set\` (see \`bench/call.bench.mjs\`).
 */
const SMALL = 64

/**
 * Arrays of at least this many bytes are laid out in linear memory at \`COPY_AT\` within a page
 * (see \`place\`): large copies are where \`TypedArray.prototype.set\` runs as \`rep movsb\`.
 */
export const COPY_ALIGN_FROM = 4096

/**
 * Where in a 4 KiB page a large array argument's copy starts: half a page from where the C
 * allocator puts large buffers (16 bytes into a page: glibc's \`mmap\`ed chunks, which V8's
 * array buffers of 128 KiB and more are). A copy whose destination lies just after its source
 * modulo 4096 (by 1 to about 32 bytes) runs 4–12× slower on x86 (its
 * loads wait on the stores just issued, which look like the same addresses: 4K aliasing); packed
 * after one another at 8 bytes, the arguments fell there by chance (the sparse-dot arguments:
 * 204 µs a call for their copy in, 41–48 µs placed here, Node 20 on the 2-core EPYC). Copies back
 * (from the memory to the host array) go the other way, and are equally far from it.
 */
export const COPY_AT = 16 + 2048

/**
 * The wrapper's code that moves the heap top \`o\` to the next place within a page \`COPY_AT\`
 * bytes after where argument \`i\`'s elements start (its \`byteOffset\`, 8-aligned, past the
 * allocator's 16 bytes: a view into a large buffer at any offset, review 18e, whose copy to a
 * fixed \`COPY_AT\` ran 10–23× slower at byteOffsets near 2048) before array argument \`i\` (of
 * \`size\`-byte elements) is laid out there, if it is large (see \`COPY_ALIGN_FROM\`); nothing for
 * a smaller one (a few padding bytes on a small copy would buy nothing).
 */
function place(i: number, size: number): string {
  return `if (n${i} >= ${Math.ceil(COPY_ALIGN_FROM / size)}) o += ((${COPY_AT} + (p${i}.byteOffset & -8)) - o) & 4095; `
}

/**
 * The JS wrapper of one exported thunk: lays the array arguments out in linear memory from the
 * heap top, copies them in, calls, copies the arrays the function writes back, and reads the
 * scalar results. Generated per function, with positional parameters (no rest array per call).
 * `closed`: the module neither calls out to the caller's code nor grows the memory (see
 * \`wrapperBookkeeping\`).
 */
function makeWrapper(
  s: MemoryState,
  m: ProgramState,
  resultsAt: number,
  resident: ResidentMemory,
  f: FunctionDef,
  writes: boolean[],
  exported: { fn: Function },
  closed = false,
): CompiledFunction {
  const results = new Float64Array(Math.max(1, f.params.length))
  const caches: ViewCache[] = f.params.map(() => ({ buffer: null, at: -1, n: -1, view: null }))
  // a nested call (from a host function that wasm called) starts at the current heap top (where
  // the arrays are laid out, and where an open module's call puts it back: see \`wrapperBookkeeping\`)
  const hasArrays = f.params.some((p) => p.type.kind !== 'scalar')
  const lines: string[] =
    closed && !hasArrays ? [] : ['const start = s.depth === 0 ? s.heapBase : s.hp.value >>> 0;', 'let o = start;']
  const memo: string[] = []
  const callArgs: string[] = []
  const copyIn: string[] = [],
    copyOut: string[] = []
  const arrays: number[] = []
  f.params.forEach((p, i) => {
    if (p.type.kind === 'scalar') {
      callArgs.push(`p${i}`)
      return
    }
    const el = elemInfo((p.type as { elem: string }).elem)
    const V = VIEW[(p.type as { elem: string }).elem]!
    // the same typed array passed twice shares one region, as it shares memory on the cpu backend
    const same = arrays.filter(
      (j) => (f.params[j]!.type as { elem: string }).elem === (p.type as { elem: string }).elem,
    )
    // a resident array (a view of this memory, see \`residentMemory\`) is used where it is
    // \`buffer\` and \`byteOffset\` are slow getters (about 15 ns each here): the last resident
    // view seen in this position is remembered with its offset, valid while the memory has not
    // grown (a view's offset never changes; a grown memory gives \`s.buffer\` a new identity)
    // and the last array seen in this position that is not resident (its buffer never becomes
    // the memory's), so that a host array passed call after call is not asked for its buffer
    memo.push(`let k${i} = null, kb${i} = null, ko${i} = 0, h${i} = null;`)
    lines.push(`const n${i} = p${i}.length;`)
    lines.push(`let o${i}, r${i} = p${i} === k${i} && kb${i} === s.buffer;`)
    lines.push(
      `if (!r${i} && p${i} !== h${i}) { if (p${i}.buffer === s.buffer) { r${i} = true; k${i} = p${i}; kb${i} = s.buffer; ko${i} = p${i}.byteOffset; } else h${i} = p${i}; }`,
    )
    lines.push(
      `if (r${i}) o${i} = ko${i}; else ${same.map((j) => `if (p${i} === p${j}) o${i} = o${j}; else `).join('')}{ ${place(i, el.size)}o${i} = o; o += n${i} * ${el.size} + 7; o -= o % 8; }`,
    )
    arrays.push(i)
    // a small array is copied element by element (inlined by the JIT: \`set\` and \`subarray\`
    // are calls into the runtime costing tens of nanoseconds); a large one with \`set\`. A float32
    // array always with \`set\`, which copies the bits: an element read as a double quiets a
    // signalling NaN, and the element would come back changed though the program never wrote it
    const small = (p.type as { elem: string }).elem === 'f32' ? 0 : SMALL
    copyIn.push(
      `if (!r${i}) { const M = s.${V}, b = o${i} >>> ${el.shift}; if (n${i} <= ${small}) for (let j = 0; j < n${i}; j++) M[b + j] = p${i}[j]; else M.set(p${i}, b); }`,
    )
    if (writes[i])
      copyOut.push(
        `if (!r${i}) { const M = s.${V}, b = o${i} >>> ${el.shift}; if (n${i} <= ${small}) for (let j = 0; j < n${i}; j++) p${i}[j] = M[b + j]; else p${i}.set(view(c[${i}], M, b, n${i})); }`,
      )
    // (the length read before a grow, which detaches a resident view and zeroes its length)
    callArgs.push(`o${i}`, `n${i}`)
  })
  // a grown memory detaches the old buffer, and views of a detached buffer have length 0 (with
  // no array laid out, the heap top is inside the memory and no view is written before the call:
  // the check after it refreshes the views the results are read through)
  if (arrays.length) lines.push('if (o > s.bytes || s.U8.length === 0) grow(s, o);')
  lines.push(...copyIn)
  // (a closed module's entry takes no heap top: it never allocates)
  const returned = returnedParam(f, writes)
  // whether the wrapper reads the memory after the call: arrays copied back, or a scalar result
  const readsMemory =
    copyOut.length > 0 ||
    f.params.some((p, i) => p.type.kind === 'scalar' && i !== returned && !passedThrough(p, writes[i]))
  const { enter, epilogue } = wrapperBookkeeping(closed, readsMemory)
  if (enter) lines.push(enter)
  const callList = closed ? callArgs : ['o', ...callArgs]
  lines.push(
    `${returned >= 0 ? 'let ret;\n  ' : ''}try { ${returned >= 0 ? 'ret = ' : ''}x.fn(${callList.join(', ')}); } catch (e) { const err = m.failure(e); ${epilogue}${epilogue ? ' ' : ''}throw err; }`,
  )
  if (epilogue) lines.push(epilogue)
  lines.push(...copyOut)
  // a parameter the function never writes: its result is the argument as the call converted it
  const converted = (p: FunctionDef['params'][number], i: number) =>
    (p.type as { name: string }).name === 'i32'
      ? `p${i} | 0`
      : (p.type as { name: string }).name === 'f32'
        ? `Math.fround(p${i})`
        : `p${i}`
  f.params.forEach((p, i) => {
    if (p.type.kind !== 'scalar') return
    lines.push(
      `R[${i}] = ${i === returned ? 'ret' : passedThrough(p, writes[i]) ? converted(p, i) : `s.F64[${resultsAt / 8 + i}]`};`,
    )
  })
  const params = f.params.map((_, i) => `p${i}`).join(', ')
  const src = `${memo.join('\n')}\nreturn function wasmCall(${params}) {\n  ${lines.join('\n  ')}\n};`
  // (the state's buffer is the views' buffer: comparing with it spares the slow \`buffer\` getter)
  const view = (cache: ViewCache, mem: Float64Array, at: number, n: number): ArrayBufferView => {
    if (cache.buffer !== s.buffer || cache.at !== at || cache.n !== n) {
      cache.buffer = s.buffer
      cache.at = at
      cache.n = n
      cache.view = mem.subarray(at, at + n)
    }
    return cache.view!
  }
  const call = new Function('s', 'm', 'x', 'R', 'c', 'view', 'grow', 'refresh', src)(
    s,
    m,
    exported,
    results,
    caches,
    view,
    grow,
    refresh,
  ) as CompiledFunction
  Object.defineProperties(call, { results: { value: results }, resident: { value: resident } })
  return call
}

/** A \`DirectEntry\` as the backend holds it (its \`dispose\` replaces \`call\`). */
type MutableEntry = { -readonly [K in keyof DirectEntry]: DirectEntry[K] }

/**
 * The entry of one exported thunk without its wrapper (see \`DirectEntry\` of \`@tenet/ir\`): for
 * a module that runs none of the caller's code, so that no other call can start while one is
 * under way and the wrapper's count of the calls is nothing anyone reads. A \`closed\` module's
 * calls also use no heap and never grow the memory: the caller only passes the places of its
 * arrays. Those of a module that allocates array ancillas (\`grows\`) start their heap where the
 * wrapper's would (\`heapStart\`: the heap base, or the heap top in a call nested in another
 * module's), and after one that grew the memory the caller takes the views again (\`memory\`),
 * as the wrapper does. A trap leaves the heap top where the call left it, which the next call at
 * top level sets again (nested, the enclosing function puts its own mark back when it returns).
 * One object shape for every entry (the caller's \`call\` site stays monomorphic per entry).
 */
function directEntry(
  s: MemoryState,
  m: ProgramState,
  resultsAt: number,
  f: FunctionDef,
  writes: boolean[],
  fn: Function,
  grows: boolean,
): MutableEntry {
  return {
    call: fn as (...args: unknown[]) => void,
    error: (e: unknown): Error => m.failure(e),
    memory: (): Float64Array => {
      if (s.U8.length === 0) refresh(s)
      return s.F64
    },
    resultsAt: resultsAt / 8,
    passedThrough: f.params.map((p, i) => passedThrough(p, writes[i])),
    returned: returnedParam(f, writes),
    kinds: f.params.map((p) => (p.type.kind === 'array' ? 'array' : 'scalar')),
    disposed: false,
    grows,
    heapStart: (): number => (s.depth === 0 ? s.heapBase : (s.hp.value as number) >>> 0),
  }
}

/**
 * What a wrapper does around the call besides it: \`enter\` before (or nothing), \`epilogue\` after
 * it and in the catch clause (twice, rather than in a \`finally\`: a \`finally\` cost about 8 ns
 * per call in V8 (Node 20), a third of the whole call of a small function).
 *
 * In general a wrapper counts the calls under way (\`s.depth\`: a call made from a host function
 * that wasm called starts at the current heap top, and resident arrays cannot be allocated
 * meanwhile), puts the heap top back after a nested call, and refreshes the views when the call
 * grew the memory. A call of a \`closed\` module runs no code of the caller's before it returns
 * and never grows the memory, so nothing can see a count it kept: it leaves the count as it is.
 * Nor does it move the heap top (its entries take none, and it allocates nothing), so there is
 * nothing to put back; only when it is nested in another call (which may have grown the memory
 * before it called out) and then reads the memory (\`readsMemory\`: arrays copied back, scalar
 * results stored there) does it refresh stale views first. A closed call of scalars whose results
 * are all returned or passed through does nothing around the call (the single-z Bessel series:
 * the wrapper costs about 0.5 ns over calling its entry directly; Node 20, CPU time).
 */
function wrapperBookkeeping(closed: boolean, readsMemory: boolean): { enter: string; epilogue: string } {
  if (closed) return { enter: '', epilogue: readsMemory ? 'if (s.depth > 0 && s.U8.length === 0) refresh(s);' : '' }
  return { enter: 's.depth++;', epilogue: 'if (--s.depth > 0) s.hp.value = start; if (s.U8.length === 0) refresh(s);' }
}

/**
 * With run-time checks on, passes `pair-series` (checked: each lane's copy keeps its checks, and
 * finishes before the next lane goes on past its loop) and `unroll-swaps` of `@tenet/ir`, on the
 * program whose asserts are placed, as the cpu backend runs them. Without checks the map loops of
 * series run in f64x2 lanes instead (\`map-lanes.ts\`), and `optimize` unrolls the swap loops; with
 * checks on neither applied, and a batch of series ran one chain of divisions at a time (the
 * Bessel batch with checks: 3.8× the plain-TS objective, where the cpu backend's paired code ran
 * 2.7×). Returns its argument unchanged with checks off, or where a pass is switched off.
 */
function checkedSeries(
  p: { program: Program; inverses: Map<string, FunctionDef> },
  options: CompileOptions,
): { program: Program; inverses: Map<string, FunctionDef>; paired: number } {
  if (!options.checks) return { ...p, paired: 0 }
  const paired =
    CHECKED_PASSES.has('pair-series') && !disabledPasses.has('pair-series')
      ? pairSeries(p.program, p.inverses, {
          unrollSwaps: CHECKED_PASSES.has('unroll-swaps') && !disabledPasses.has('unroll-swaps'),
          checked: true,
          hoistCalls: CHECKED_PASSES.has('hoist-lane-calls') && !disabledPasses.has('hoist-lane-calls'),
        })
      : p
  // (the functions and inverses whose loops the pass grouped: it returns the others as they were)
  const count =
    [...paired.program.functions].filter(([n, f]) => f !== p.program.functions.get(n)).length +
    [...paired.inverses].filter(([n, f]) => f !== p.inverses.get(n)).length
  return { ...unrollCheckedSwaps(paired.program, paired.inverses, options), paired: count }
}

/**
 * Compiles a checked program and its inverses to one WebAssembly module (compiled and
 * instantiated synchronously). Each function is called like the cpu backend's: positional
 * arguments, typed arrays updated in place, scalar results in `results`.
 */
export function compileToWasm(
  checked: Program,
  checkedInverses: Map<string, FunctionDef>,
  options: CompileOptions,
  wasmOptions: WasmOptions = {},
  memory: MemoryState = createMemory(),
): WasmProgram {
  // (small callees inlined everywhere, then the calls each function makes once, with checks on
  // those of exact functions only after the passes: see once-calls.ts)
  const small = inlineSmallCalls(checked, checkedInverses, options.checks)
  const exact = options.checks ? exactFunctions(small.program.functions.values()) : new Set<string>()
  const inlined = inlineOnceCalls(small.program, small.inverses, (callee) => !exact.has(callee))
  const optimizedAll = optimize(inlined.program, inlined.inverses, options)
  // (without checks: the costly accumulation ending a loop's body in a loop of its own, see \`split-tails.ts\`)
  const tails =
    !options.checks && (wasmOptions.splitTails ?? true)
      ? splitLoopTails(optimizedAll.program, optimizedAll.inverses)
      : { ...optimizedAll, count: 0 }
  const optimized = { ...optimizedAll, program: tails.program, inverses: tails.inverses }
  // the run-time checks as asserts, placed last, the loops' bounds checks hoisted before them
  // (see `insert-checks.ts` and `hoist-bounds.ts` of `@tenet/ir`)
  // (without checks, with `hoistBounds`: only the bounds checks that hoisting moves out of loops,
  // see \`hoisted-bounds.ts\`; by default each access is guarded where it is)
  const asserted = options.checks
    ? insertChecks(optimized.program, optimized.inverses, options)
    : wasmOptions.hoistBounds
      ? hoistedBoundsOnly(optimized.program, optimized.inverses, options)
      : optimized
  // (with checks: the alias checks that cannot fail left out, see \`proven-bounds.ts\` of
  // \`@tenet/ir\`; not its bounds proofs, which made Horner's checked loop about 13% slower here)
  const proved =
    options.checks && CHECKED.has('proven-bounds') && !disabled.has('proven-bounds')
      ? provenBounds(asserted.program, asserted.inverses, options, false)
      : asserted
  // (not nests: see `hoist-bounds.ts` of `@tenet/ir`)
  const bounded = hoistBounds(proved.program, proved.inverses, options, true, false)
  // (with checks: those that an earlier check decided left out, see \`implied-checks.ts\` of
  // \`@tenet/ir\`; then passes `pair-series` and `unroll-swaps` on the asserts, as the cpu backend
  // runs them in this order: see \`checkedSeries\`)
  const hoisted = checkedSeries(withoutImpliedChecks(bounded, options), options)
  // (with checks: the asserts that repeat one that already passed left out, see \`repeated-asserts.ts\`)
  const asserts =
    options.checks && (wasmOptions.skipRepeatedAsserts ?? true)
      ? dropRepeatedAsserts(hoisted.program, hoisted.inverses)
      : hoisted
  // (with checks: the calls of exact functions that are still made once, inlined now, their checks
  // placed: see once-calls.ts)
  const { program, inverses } = exact.size
    ? inlineOnceCalls(asserts.program, asserts.inverses, (callee) => exact.has(callee))
    : asserts
  const ctx = new ModuleContext(
    program,
    options,
    (wasmOptions.simd ?? true) && simdAvailable,
    wasmOptions.math ?? 'auto',
  )
  ctx.inverses = inverses
  ctx.twins = wasmOptions.twins ?? false
  ctx.rangeVersions = wasmOptions.rangeVersions ?? true
  ctx.pairRanges = wasmOptions.pairRanges ?? true
  ctx.foldBounds = wasmOptions.foldBounds ?? true
  ctx.peelOnes = wasmOptions.peelOnes ?? true
  ctx.quads = wasmOptions.laneQuads ?? true
  ctx.quadValues = wasmOptions.laneQuadValues ?? LANE_QUADS_MAX_VALUES
  const fns = [...program.functions.values()]
  // what is this program's own in the memory it shares: the record of an out-of-range access
  // (its globals, below), its resident blocks, and its results area when the shared one is too small
  const s = memory
  const own = { blocks: new Set() } as unknown as ProgramState
  const resultBytes = 8 * Math.max(1, ...fns.map((f) => f.params.length))
  const resultsAt = resultBytes <= RESULTS_BYTES ? 0 : allocateBlock(s, own, resultBytes).at
  const defined: DefinedFunc[] = []
  // (named in the module's name section: a profile shows `f`, `f~` for its inverse, `f (call)`
  // for the thunk the wrapper calls, \`f\` for a function that is its own entry, and the math
  // routines by their names)
  const emitted: Array<DefinedFunc & { resultsFrom: number }> = []
  for (const f of fns) {
    emitted.push(
      new FunctionEmitter(ctx, f, false).emit(),
      new FunctionEmitter(ctx, inverses.get(f.name)!, true).emit(),
    )
  }
  // (known once every function is emitted: what the module imports, whether it grows the memory;
  // the math routines emitted below import only built-in arithmetic and never allocate)
  const callsOut = ctx.callsOut
  const closed = !callsOut && !ctx.grows
  // the functions (and inverses) some function calls: the others of a closed module are their
  // own exported entries (see \`ownEntry\`), and their slots hold a stub nothing calls
  const called = new Set(ctx.calls.flatMap((c) => (c.kind === 'fn' && c.target < emitted.length ? [c.target] : [])))
  const exportedFns: DefinedFunc[] = []
  let ownEntries = 0
  fns.forEach((f, k) => {
    const writes = program.writes.get(f.name)
    for (const inverse of [false, true]) {
      const j = 2 * k + (inverse ? 1 : 0)
      const g = inverse ? inverses.get(f.name)! : f
      const name = `${f.name}${inverse ? '~' : ''}`
      const exportName = `${inverse ? 'B' : 'F'}${k}`
      if (closed && !called.has(j)) {
        defined.push({
          type: emitted[j]!.type,
          locals: [],
          body: new Bytes().byte(Op.unreachable),
          name: `${name} (in its entry)`,
        })
        ownEntries++
        exportedFns.push({ ...ownEntry(emitted[j]!, g, exportName, resultsAt, writes), name })
      } else {
        const { resultsFrom: _, ...fn } = emitted[j]!
        defined.push({ ...fn, name })
        exportedFns.push({ ...thunk(ctx, g, inverse, exportName, resultsAt, writes, !closed), name: `${name} (call)` })
      }
    }
  })
  defined.push(...exportedFns)
  // the math routines the functions call (each once), after the functions and thunks
  const routines = ctx.math.functions()
  const routineNames = ctx.math.names()
  // (the routines read their double constants from the table at MATH_CONSTANTS_AT: see
  // \`math/constants.ts\`; copied in whole, it holds every constant built so far)
  writeMathConstants(s.memory)
  routines.forEach((r, i) => defined.push({ ...r, name: routineNames[i] }))
  ctx.patchCalls()
  const bytes = encodeModule({
    imports: ctx.imports,
    functions: defined,
    memoryPages: 1,
    // the memory and the heap top (global 0) are imported; then the record of an out-of-range
    // access (see OOB_SITE)
    importMemory: true,
    globals: [
      { init: -1, export: 'oob' },
      { init: 0, export: 'oobIndex' },
      { init: 0, export: 'oobLength' },
      // the record of a failed run-time check (see FAIL_SITE)
      { init: -1, export: 'failed' },
      ...Array.from({ length: FAIL_VALUE_COUNT }, (_, i) => ({ init: 0, f64: true, export: `failed${i}` })),
    ],
  })
  const env: Record<string, Function> = {}
  ctx.importFns.forEach((fn, i) => {
    env[`i${i}`] = fn
  })
  if ((!callsOut && ctx.callsOut) || (closed && ctx.grows))
    throw new Error('wasm backend: a math routine imported a host function or allocated')
  const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), {
    m: env,
    mem: { memory: s.memory, hp: s.hp },
  })
  let exports = instance.exports as Record<string, unknown>
  ctx.memory = s.memory
  const oob = exports.oob as WebAssembly.Global
  own.oob = oob
  own.outOfBounds = (): Error => {
    const site = oob.value as number
    oob.value = -1
    try {
      return ctx.fail(site, [
        (exports.oobIndex as WebAssembly.Global).value as number,
        (exports.oobLength as WebAssembly.Global).value as number,
      ])
    } catch (e) {
      return e as Error
    }
  }
  const failed = exports.failed as WebAssembly.Global
  const failedValues = Array.from({ length: FAIL_VALUE_COUNT }, (_, i) => exports[`failed${i}`] as WebAssembly.Global)
  own.failure = (e: unknown): Error => {
    if (oob.value >= 0) return own.outOfBounds()
    const site = failed.value as number
    if (site < 0) return e as Error
    failed.value = -1
    try {
      return ctx.fail(
        site,
        failedValues.map((g) => g.value as number),
      )
    } catch (e) {
      return e as Error
    }
  }
  if (s.U8.length === 0) refresh(s)
  const resident = residentMemory(s, own)
  const cache = new Map<string, CompiledFunction>()
  const index = new Map(fns.map((f, k) => [f.name, k]))
  // the exported functions the wrappers call, replaced on \`dispose\` (so that nothing keeps the instance)
  const thunks: Array<{ fn: Function }> = []
  const entries: MutableEntry[] = []
  const gone = (): never => {
    throw new TenetError('call/disposed', 'this module was disposed: compile it again to call its functions')
  }
  const compiled: WasmProgram = {
    closed,
    lanePairs: ctx.lanePairs,
    runElements: ctx.runElements,
    carriedStores: ctx.carriedStores,
    unzeroedTables: ctx.unzeroedTables,
    hoistedAllocs: ctx.hoistedAllocs,
    mapLanes: ctx.mapLanes,
    laneQuads: ctx.laneQuads,
    blockPairs: ctx.blockPairs,
    gatheredBlocks: ctx.gatheredBlocks,
    laneSincosReused: ctx.laneSincosReused,
    laneValuesReused: ctx.laneValuesReused,
    loopUniform: ctx.loopUniform,
    uniformPowers: ctx.uniformPowers,
    twinLocals: ctx.twinLocals,
    rangeVersions: ctx.rangeVersionLoops,
    pairRanges: ctx.pairRangeLoops,
    foldedBounds: ctx.foldedBounds,
    peeledLoops: ctx.peeledLoops,
    mathRoutines: ctx.math.names(),
    ownEntries,
    checkedSeries: hoisted.paired,
    splitTails: tails.count,
    dispose() {
      if (own.disposed) return
      for (const t of thunks) t.fn = gone
      for (const d of entries) {
        d.call = gone
        d.disposed = true
      }
      own.disposed = true
      // the memory is shared with the backend's other programs: this one's blocks go back to it
      releaseBlocks(s, own)
      dropped?.unregister(own)
      cache.clear()
      index.clear()
      exports = {}
      ctx.memory = undefined
    },
    get(name, inverse) {
      const key = (inverse ? '~' : '') + name
      let c = cache.get(key)
      if (!c) {
        const k = index.get(name)
        if (own.disposed) gone()
        if (k === undefined) throw new Error(`wasm backend: no function \`${name}\``)
        const f = inverse ? inverses.get(name)! : program.functions.get(name)!
        const exported = { fn: exports[`${inverse ? 'B' : 'F'}${k}`] as Function }
        thunks.push(exported)
        c = makeWrapper(s, own, resultsAt, resident, f, program.writes.get(name)!, exported, closed)
        if (!callsOut) {
          const entry = directEntry(s, own, resultsAt, f, program.writes.get(name)!, exported.fn, !closed)
          entries.push(entry)
          Object.defineProperty(c, 'direct', { value: entry })
        }
        cache.set(key, c)
      }
      return c
    },
  }
  // a program dropped without \`dispose\` gives its blocks back once nothing reaches it: not its
  // wrappers, not its resident arrays
  dropped?.register(own, { s, own: own.blocks }, own)
  return compiled
}

/** Gives back the blocks of programs that were dropped (see \`compileToWasm\`). */
const dropped =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry<{ s: MemoryState; own: Set<{ at: number; bytes: number }> }>(({ s, own }) => {
        for (const b of own) s.free.push(b)
        own.clear()
      })
    : undefined

/** A program compiled by the wasm backend. */
export interface WasmProgram extends CompiledProgram {
  /**
   * Whether the module neither imports a function that runs the caller's code (a host function,
   * a plugin primitive or bijection) nor grows the memory, so that its wrappers keep no count of
   * the calls under way (see \`wrapperBookkeeping\`; a diagnostic).
   */
  readonly closed: boolean
  /** How many pairs of updates run as one f64x2 update, in all functions and inverses (a diagnostic). */
  readonly lanePairs: number
  /** How many elements runs of straight-line updates keep in locals, in all functions and inverses (see \`runElements\` of \`@tenet/ir/backend\`; a diagnostic). */
  readonly runElements: number
  /** How many loop-carried elements loops keep in their locals only, their stores dropped, in all functions and inverses (see \`deadCarriedStores\` of \`@tenet/ir/backend\`; a diagnostic). */
  readonly carriedStores: number
  /** How many array allocations skip their zeroing, their tables' \`init\` updates emitted as zero plus the value (see \`ZeroingSite\` in the code generator; a diagnostic). */
  readonly unzeroedTables: number
  /** How many array allocations take their memory once before their loop, in all functions and inverses (see \`hoistAllocs\` in the code generator; a diagnostic). */
  readonly hoistedAllocs: number
  /** How many map loops run two iterations at a time in lanes, in all functions and inverses (see \`map-lanes.ts\`; a diagnostic). */
  readonly mapLanes: number
  /** How many of those map loops run two pairs at a time, their series as one joint loop, in all functions and inverses (see \`lane-quads.ts\`; a diagnostic). */
  readonly laneQuads: number
  /** How many pairs of adjacent block elements map loops load and store as whole v128s, in all functions and inverses (see \`blockElementPairs\` in \`map-lanes.ts\`; a diagnostic). */
  readonly blockPairs: number
  /** How many gathered blocks (reads \`a[x + c]\` through a varying offset x of a map body, see \`gatheredBlocks\` in \`map-lanes.ts\`) map loops read from their lanes' bases, in all functions and inverses (a diagnostic). */
  readonly gatheredBlocks: number
  /** How many sin/cos calls of map loops in lanes read the values an earlier branch of the same condition computed, in all functions and inverses (see \`lane-memo.ts\`; a diagnostic). */
  readonly laneSincosReused: number
  /** How many f64 divisions and math calls of map loops in lanes read the values an earlier branch of the same condition computed, in all functions and inverses (see \`lane-memo.ts\`; a diagnostic). */
  readonly laneValuesReused: number
  /** How many loop-uniform names varying loops of map lanes keep in scalar locals (see \`loopUniform\` in \`map-lanes.ts\`; a diagnostic). */
  readonly loopUniform: number
  /** How many powers \`x ** y\` with a uniform exponent known only at run time map lanes emit with y's cases (2, 1, other) decided once for both lanes, in all functions and inverses (see \`uniformPower\` in the code generator; a diagnostic). */
  readonly uniformPowers: number
  /** How many f64 locals are held as one lane of an f64x2 local with their twin, in all functions and inverses (see \`twins.ts\`; a diagnostic). */
  readonly twinLocals: number
  /** How many loops check their affine indices once at their start and run unguarded when all are in range, in all functions and inverses (see \`range-versions.ts\`; a diagnostic). */
  readonly rangeVersions: number
  /** How many paired loops check their guarded affine indices once before their pairs, which then run unguarded (see \`WasmOptions.pairRanges\`; a diagnostic). */
  readonly pairRanges: number
  /** How many bounds asserts the loads of the statements after them took over, in all functions and inverses (see \`folded-bounds.ts\`; a diagnostic). */
  readonly foldedBounds: number
  /** How many counting loops from 1 run their first iteration on its own, in all functions and inverses (see \`peel-ones.ts\`; a diagnostic). */
  readonly peeledLoops: number
  /** The math routines the module computes itself (\`sin\`, \`exp\`, …, and their helpers; a diagnostic). */
  readonly mathRoutines: readonly string[]
  /** How many functions and inverses are their own exported entries, called without a thunk (see \`ownEntry\`; a diagnostic). */
  readonly ownEntries: number
  /** With run-time checks on, how many functions and inverses run a map loop of series a few elements at a time (pass \`pair-series\`, see \`checkedSeries\`; a diagnostic). */
  readonly checkedSeries: number
  /** Without run-time checks, how many loops had the costly accumulation that ends their body split off into a loop of its own (see \`split-tails.ts\`; a diagnostic). */
  readonly splitTails: number
}

/** Options of the wasm backend (see `createWasmBackend`). */
export interface WasmOptions {
  /**
   * Whether two consecutive f64 updates doing the same arithmetic (such as the directions of a
   * tangent) run as one f64x2 update, where the engine has WebAssembly SIMD (default true). The
   * results are the same bit for bit either way.
   */
  simd?: boolean
  /**
   * Where the transcendental functions (`sin`, `exp`, `pow`, `**`, …) are computed: `'auto'`
   * (the default) in the module for those that measured faster there, `'module'` all in the
   * module, `'import'` all by calls out to JS's `Math` (see the README for the choice and the
   * accuracy of the routines).
   */
  math?: MathChoice
  /**
   * Without run-time checks, whether the bounds checks of loop-affine indices are hoisted before
   * their loops (see `hoisted-bounds.ts`) instead of guarding each access (default false). Off by
   * default because it measured slower where it matters: the graph-embedding gradient and Hessian
   * (whose updates pair into f64x2 lanes) took 1.3–1.8× as long and the BA Jacobian about 1.1×,
   * with no measurable gain on the GMM gradient (quick suite, 2-core machine). Results are the
   * same; an index out of range fails before its loop instead of at the access.
   */
  hoistBounds?: boolean
  /**
   * Without run-time checks, with SIMD: whether twin statements (the same update on two sets of
   * locals, such as the two rows of a vector-mode adjoint) are scheduled next to each other and
   * their locals held as the lanes of f64x2 locals, so that each twin pair runs as one f64x2 update
   * (default false: on the bundle-adjustment block Jacobian, whose two adjoint rows are such twins,
   * it measured no faster, 0.98–1.05× in one process, the block program being bound by the latency
   * of its chain rather than by its arithmetic; see \`twins.ts\` and the README). The results are
   * the same bit for bit either way.
   */
  twins?: boolean
  /**
   * Without run-time checks: whether a loop of step ±1 checks the indices of its accesses that are
   * affine in its variable once at its start, for its whole range, and then runs a copy of itself
   * without their guards, running as it is (every access guarded) when one would be out of range
   * (default true; see \`range-versions.ts\`). The results, and the errors, are the same either
   * way: an index out of range fails in the same iteration, at the same access.
   */
  rangeVersions?: boolean
  /**
   * Without run-time checks: whether a counting loop whose body ends with the accumulation of a
   * costly pure value into a scalar (\`slse += log(s[p]) + …\`) runs that accumulation in a loop of
   * its own after the rest of the body, where it proves the same values and errors result (default
   * true; see \`split-tails.ts\`). The results are the same bit for bit either way.
   */
  splitTails?: boolean
  /**
   * With run-time checks: whether an assert that repeats one that already passed on every path to
   * it (the same check and condition, nothing it reads written since) is left out (default true;
   * see \`repeated-asserts.ts\`). The results and the errors are the same either way.
   */
  skipRepeatedAsserts?: boolean
  /**
   * With run-time checks: whether a bounds assert just before a statement is left out where the
   * statement's head loads that element, under the same guard, exactly once, the load then
   * guarding itself with the assert's failure site (default true; see \`folded-bounds.ts\`). The
   * results and the errors (code, message, location, and which check fails first) are the same
   * either way.
   */
  foldBounds?: boolean
  /**
   * Whether a counting loop from 1 whose body multiplies or divides by its variable runs its first
   * iteration on its own, with the variable the constant 1 (default true; see \`peel-ones.ts\`).
   * The same statements run with the same values either way.
   */
  peelOnes?: boolean
  /**
   * Without run-time checks, with SIMD: whether a paired loop (two iterations as one f64x2 update)
   * that still guards its affine indices — an inner loop of a loop with a range version, whose
   * copies version nothing inside them, or any paired loop without \`rangeVersions\` — checks them
   * once, for its whole range, before its paired iterations, and runs those unguarded; when one is
   * out of range, or the loop is too short to pay, the scalar loop runs every iteration, guarded
   * (default true). The results are the same either way; a loop that fails then fails where the
   * scalar code fails, having written what it writes (without the check, its guarded pairs may
   * stop one iteration earlier).
   */
  pairRanges?: boolean
  /**
   * Without run-time checks, with SIMD: whether a map loop in lanes whose body runs a series (a
   * \`while\` with a condition that differs between iterations, such as a batch of Bessel series)
   * runs four iterations at a time, two pairs of lanes whose series run as one joint loop, so that
   * two chains of dependent divisions are in flight instead of one (default true; see
   * \`lane-quads.ts\`). The results are the same bit for bit either way.
   */
  laneQuads?: boolean
  /**
   * The most varying names (read or written) a series' \`while\` may touch for lane quads (default
   * \`LANE_QUADS_MAX_VALUES\`, 6): two copies of the loop must keep their lanes in registers, and
   * bigger series (the Bessel series' tangent and its adjoint's) ran slower as quads than as pairs.
   */
  laneQuadValues?: number
}

/** A wasm backend plugin with these options (`wasmBackend` is the one with the defaults). */
export function createWasmBackend(wasmOptions: WasmOptions = {}): BackendSpec {
  // one linear memory for every program this backend compiles (made with the first one)
  let memory: MemoryState | undefined
  return {
    specificationVersion: 'v1',
    name: 'wasm',
    priority: 5,
    capabilities: {
      f64: true,
      recursion: true,
      exceptions: true,
      f32: true,
      // stacks are not lowered (README): programs with `stack<T>` are rejected at compile time
      stacks: false,
      checks: true,
      gradient: true,
      hessian: true,
      // two tangent directions per f64x2 instruction (lane pairs): 20 columns ran 10–20% faster
      // than 8 on the graph-embedding Hessians (k = 2…10, 20–100 columns)
      hessianWidth: 20,
      // the block Jacobians' stores (a SWAP of each entry with its dead derivative) run in map
      // lanes too (see \`map-lanes.ts\`), and save zeroing the output
      jacobianStores: true,
      synchronous: true,
    },
    description:
      'WebAssembly module generation (f64/f32/i32/bool; arrays copied through linear memory per call unless resident)',
    isAvailable: () => typeof WebAssembly === 'object',
    doCompile: (program, inverses, options) =>
      compileToWasm(program, inverses, options, wasmOptions, (memory ??= createMemory())),
  }
}

/**
 * The wasm backend plugin: one WebAssembly module per program (f64, f32, i32 and bool values;
 * transcendental functions computed in the module, see `WasmOptions.math`). Register it and compile with `backend: 'wasm'`.
 */
export const wasmBackend: BackendSpec = createWasmBackend()

/** Pass \`implied-checks\` of \`@tenet/ir\` with run-time checks on (unless switched off). */
function withoutImpliedChecks(
  p: { program: Program; inverses: Map<string, FunctionDef> },
  options: CompileOptions,
): { program: Program; inverses: Map<string, FunctionDef> } {
  return options.checks && CHECKED.has('implied-checks') && !disabled.has('implied-checks')
    ? impliedChecks(p.program, p.inverses, options)
    : p
}
