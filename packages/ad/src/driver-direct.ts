/**
 * The body of a generated gradient driver that calls the backend's programs without their JS
 * wrappers (\`CompiledFunction.direct\`: the wasm backend, for modules that neither call out nor
 * grow their memory). The driver keeps every array argument and gradient resident anyway, so the
 * wrapper's work (finding where each array lives, laying out, copying, counting calls, reading the
 * scalar results into \`results\`) was done twice; here the places of the arrays live in locals of
 * the driver, laid out again only when a length changes or the memory grew, and the scalar results
 * are read from the memory where the module left them.
 *
 * On scalar multiplication (\`s += x[0] * x[1]\`, a 4 ns objective) the wrapper was about 10 ns of
 * a 44 ns gradient call and the driver's bookkeeping about 18 ns (Node 20, loaded 2-core machine).
 */
import type { DirectEntry, Param } from '@tenet/ir'
import { MAX_ARRAY_LENGTH } from '@tenet/reversible'
import type { GradientSlot } from './transform.js'

/** One argument of a direct call: an expression, or a resident array by its place and length. */
export type DirectArg = { scalar: string } | { offset: string; length: string }

/**
 * The arguments of a direct call of `entry` (the heap start first: `heap`, the expression of its
 * `heapStart()`, for an entry that `grows`), or null when their kinds are not the entry's.
 */
export function directArgs(entry: DirectEntry, args: readonly DirectArg[], heap = '0'): string | null {
  if (args.length !== entry.kinds.length) return null
  const out: string[] = entry.grows ? [heap] : []
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (('scalar' in a ? 'scalar' : 'array') !== entry.kinds[i]) return null
    if ('scalar' in a) out.push(a.scalar)
    else out.push(a.offset, a.length)
  }
  return out.join(', ')
}

/**
 * The final value of scalar parameter \`i\` of a direct call of the entry named \`E\` (\`entry\`), whose
 * argument was \`arg\`: the value the call returned (\`r\` + \`E\`, see \`DirectEntry.returned\`), or
 * read from the memory view \`M\` (see \`DirectEntry.resultsAt\`).
 */
export function directResult(E: string, entry: DirectEntry, i: number, arg: string, type: string): string {
  if (i === entry.returned) return `r${E}`
  if (!entry.passedThrough[i]) return `M[${E}R + ${i}]`
  return type === 'i32' ? `(${arg} | 0)` : type === 'f32' ? `Math.fround(${arg})` : `${arg}`
}

/** A direct call of the entry named \`E\` (\`entry\`), its returned value kept in \`r\` + \`E\` (see \`directResult\`). */
function directCall(E: string, entry: DirectEntry, args: string): string {
  const keep = entry.returned >= 0 ? `r${E} = ` : ''
  return `${keep ? `let r${E} = 0; ` : ''}try { ${keep}${E}.call(${args}); } catch (e) { throw ${E}.error(e); }`
}

/** Whether a driver of these parameters and slots can use direct calls: no stacks, resident entries. */
export function directApplies(
  params: readonly Param[],
  slots: ReadonlyArray<GradientSlot | null>,
  entries: ReadonlyArray<DirectEntry | undefined>,
): entries is DirectEntry[] {
  return (
    entries.every((e) => e !== undefined) &&
    params.every((p) => p.type.kind !== 'stack') &&
    slots.every((s) => s?.kind !== 'stack')
  )
}

/** What \`directDriverBody\` needs to know of a driver (see \`makeDriver\` in driver.ts). */
export interface DirectDriverSpec {
  params: readonly Param[]
  slots: ReadonlyArray<GradientSlot | null>
  loss: number
  /** The entry of the program that computes the gradient (forward tangent, fused or adjoint). */
  A: DirectEntry
  /** The entry of the forward program, for two sweeps (null: one run of \`A\`). */
  F: DirectEntry | null
  /** \`fused\`: one run of the fused program; \`forward\`: one run of the tangent; \`two\`: \`F\` then the adjoint. */
  mode: 'fused' | 'forward' | 'two'
  /** The fused program's loss parameter (mode \`fused\`). */
  lossSlot: number
  /** Mode \`forward\`: the input seeded with 1, the index of each parameter's tangent (−1: none), whether its gradient is f32. */
  forward?: { input: number; tangentAt: readonly number[]; f32: boolean }
  isScratch: readonly boolean[]
  hasFromHost: readonly boolean[]
  hasToHost: readonly boolean[]
  /** Per parameter: the typed array constructor's name (arrays), or how its result reads back (scalars). */
  ctors: ReadonlyArray<string | undefined>
  readBack: ReadonlyArray<'bool' | 'int' | 'float' | null>
  /** Which parameters \`f\` writes (undefined: unknown, all read back). */
  written: readonly boolean[] | undefined
  /** The uncompute check: which parameters to compare after the sweep (null: none). */
  checkWritten: readonly boolean[] | null
  /** Below this many elements, copies and zeroing run as loops (see \`SHORT\` in driver.ts). */
  short: number
  /** The arrays of the aliasing guard (\`OverlapGuard.arrays\`; undefined: none), tested by \`ctx.overlap\`. */
  overlap?: readonly number[] | undefined
}

/**
 * The line of a generated driver (arguments \`a0\`, \`a1\`, … and \`OVS\` = \`ctx.overlap.seen\` in
 * scope) that tests the aliasing rule: one reference comparison per array of \`arrays\` (those of
 * its pairs) while they are those of the last call found apart, the guard's whole test otherwise
 * (see \`OverlapGuard\` of \`@tenet/reversible\`).
 */
export function overlapLines(arrays: readonly number[] | undefined, n: number): string[] {
  if (!arrays?.length) return []
  // (the arguments as an array literal, made on that path only: passing \`arguments\` made V8
  // allocate the arguments object on every call)
  const all = Array.from({ length: n }, (_, i) => `a${i}`).join(', ')
  return [`if (${arrays.map((i, k) => `a${i} !== OVS[${k}]`).join(' || ')}) ctx.overlap.check([${all}]);`]
}

/**
 * The source of a direct driver (evaluated with \`ctx\`, \`token\`, \`isDetached\`, \`EA\`, \`EF\`,
 * \`disposedModule\`, \`zeroOf\` and \`copyOf\` of short-arrays.ts in scope), or null where the entries' parameters are not laid out as the driver
 * would pass them. The checks of the arguments and the errors are those of the driver with
 * wrappers; nothing is copied into the memory before they pass.
 */
export function directDriverBody(d: DirectDriverSpec): string | null {
  const { params, slots } = d
  const n = params.length
  const arrays = params.flatMap((p, i) => (p.type.kind === 'array' ? [i] : []))
  const grads = arrays.filter((i) => slots[i]?.kind === 'array')
  const scalarType = (i: number) => (params[i]!.type as { name: string }).name
  const vals: DirectArg[] = params.map((p, i) =>
    p.type.kind === 'array' ? { offset: `O${i}`, length: `N${i}` } : { scalar: `v${i}` },
  )
  const gradArgs: DirectArg[] = params.flatMap((_, i): DirectArg[] => {
    const s = slots[i]
    if (!s) return []
    if (s.kind === 'array') return [{ offset: `P${i}`, length: `N${i}` }]
    return [{ scalar: i === d.loss ? '1' : '0' }]
  })
  // the arguments of the gradient program, and each scalar one's type (for a result passed through)
  let argsA: DirectArg[]
  let typesA: string[]
  const gradTypes = params.flatMap((_, i) => {
    const s = slots[i]
    return s ? [s.kind === 'scalar' ? (s.type as { name: string }).name : ''] : []
  })
  const valTypes = params.map((p, i) => (p.type.kind === 'scalar' ? scalarType(i) : ''))
  if (d.mode === 'forward') {
    const fw = d.forward!
    const tangents = params.flatMap((_, i) => (fw.tangentAt[i]! >= 0 ? [i] : []))
    argsA = [...vals, ...tangents.map((i) => ({ scalar: i === fw.input ? '1' : '0' }))]
    typesA = [...valTypes, ...tangents.map((i) => scalarType(i))]
  } else if (d.mode === 'fused') {
    argsA = [...vals, ...gradArgs, { scalar: '0' }, { scalar: '0' }]
    typesA = [...valTypes, ...gradTypes, 'f64', 'f64']
  } else {
    argsA = [...vals, ...gradArgs, { scalar: '0' }]
    typesA = [...valTypes, ...gradTypes, 'f64']
  }
  const callA = directArgs(d.A, argsA, 'EA.heapStart()')
  const callF = d.F ? directArgs(d.F, vals, 'EF.heapStart()') : ''
  if (callA === null || callF === null) return null
  const resultA = (i: number) => directResult('EA', d.A, i, (argsA[i] as { scalar: string }).scalar, typesA[i]!)
  const toHost = (i: number, x: string) => (d.hasToHost[i] ? `T${i}(${x})` : x)

  // \`run\` checks the arguments; \`work\` (made per layout, see below) does the rest
  const checks: string[] = []
  const lines: string[] = []
  checks.push(`if (arguments.length !== ${n}) ctx.bad(-1, arguments.length);`)
  checks.push('if (ctx.disposed) ctx.bad(-2, token);')
  checks.push(`if (EA.disposed${d.F ? ' || EF.disposed' : ''}) disposedModule();`)
  params.forEach((p, i) => {
    if (p.type.kind === 'scalar') {
      if (p.type.name === 'bool') {
        checks.push(`if (typeof a${i} !== 'boolean') ctx.bad(${i}, a${i});`)
        lines.push(`let v${i} = a${i};`)
      } else {
        checks.push(`if (typeof a${i} !== 'number') ctx.bad(${i}, a${i});`)
        lines.push(`let v${i} = ${d.hasFromHost[i] ? `H${i}(a${i})` : `a${i}`};`)
      }
    } else
      checks.push(
        `if (!(a${i} instanceof C${i}) || a${i}.length === 0 && isDetached(a${i}) || a${i}.length > ${MAX_ARRAY_LENGTH}) ctx.bad(${i}, a${i});`,
      )
  })
  checks.push(...overlapLines(d.overlap, n))
  // laid out again after \`release\` (which sets \`moved\`), when the memory grew (every view then has
  // length 0, \`M\` too) or a length changed
  const args = params.map((_, i) => `a${i}`).join(', ')
  lines.unshift(
    `if (ctx.moved || M.length === 0${arrays.map((i) => ` || a${i}.length !== N${i}`).join('')}) { work = layout(${args}); return work(${args}); }`,
  )
  // the scratch arguments' values live in the gradient block (zeroed with the gradients below)
  const scratch = d.mode === 'forward' ? [] : arrays.filter((i) => d.isScratch[i])
  const block = d.mode === 'forward' ? [] : [...grads, ...scratch]
  for (const i of arrays) {
    const v = `V${i}`
    if (scratch.includes(i)) continue
    lines.push(
      d.isScratch[i]
        ? `${v}.fill(0);`
        : d.hasFromHost[i]
          ? `for (let j = 0; j < N${i}; j++) ${v}[j] = H${i}(a${i}[j]);`
          : `if (N${i} < ${d.short}) CP${i}(${v}, a${i}); else tset.call(${v}, a${i});`,
    )
  }
  // (one \`fill\` of the block zeroes the gradients and the scratch values, four fills' calls fewer
  // for the graph embedding's four scratch arrays; loops over the views where they are short)
  const zeroed = [...grads.map((i) => [`G${i}`, `N${i}`]), ...scratch.map((i) => [`V${i}`, `N${i}`])]
  if (block.length)
    lines.push(
      `if (${zeroed.map(([, n]) => n).join(' + ')} < ${d.short}) { ${zeroed.map(([v]) => `Z${v}(${v});`).join(' ')} } else tfill.call(GZ, 0);`,
    )
  // a call that grew the memory (an entry that \`grows\`) detached every view: lay out again and
  // run again, from the caller's arguments, which nothing changed (the same heap then fits)
  const regrown = (E: DirectEntry | null) =>
    E?.grows ? [`if (M.length === 0) { work = layout(${args}); return work(${args}); }`] : []
  if (d.mode === 'two') {
    lines.push(directCall('EF', d.F!, callF))
    lines.push(...regrown(d.F))
    params.forEach((_, i) => {
      const how = d.readBack[i]
      if (how === null || how === undefined || d.written?.[i] === false) return
      const r = directResult('EF', d.F!, i, `v${i}`, scalarType(i))
      lines.push(`v${i} = ${how === 'bool' ? `${r} !== 0` : how === 'int' ? `${r} | 0` : r};`)
    })
    lines.push(`LS[0] = ${toHost(d.loss, `v${d.loss}`)};`)
  }
  lines.push(directCall('EA', d.A, callA))
  lines.push(...regrown(d.A))
  if (d.mode === 'forward') {
    const fw = d.forward!
    lines.push(`LS[0] = ${toHost(d.loss, resultA(d.loss))};`)
    lines.push(`S[${d.loss}] = 1;`)
    const g = resultA(fw.tangentAt[d.loss]!)
    lines.push(`S[${fw.input}] = ${fw.f32 ? `Math.fround(${g})` : g};`)
  } else {
    if (d.mode === 'fused') lines.push(`LS[0] = ${toHost(d.loss, resultA(d.lossSlot))};`)
    if (d.checkWritten) {
      // the sweep recomputed the inputs of every argument that f writes: compare them with the
      // caller's values (as the driver with wrappers does)
      params.forEach((p, i) => {
        if (!d.checkWritten![i]) return
        if (p.type.kind === 'scalar' && p.type.name !== 'bool') {
          lines.push(
            `{ const r = ${toHost(i, resultA(i))}; if (!(r === a${i} || Math.abs(r - a${i}) <= ctx.tol * Math.max(1, Math.abs(a${i})))) ctx.uncomputed(${i}, -1, r, a${i}); }`,
          )
        } else if (p.type.kind === 'array' && d.isScratch[i]) {
          lines.push(
            `{ const w = V${i}, t = ctx.tol; for (let j = 0; j < w.length; j++) { const r = w[j]; if (r !== 0 && !(Math.abs(r) <= t)) ctx.uncomputed(${i}, j, r, 0); } }`,
          )
        } else if (p.type.kind === 'array') {
          const got = d.hasToHost[i] ? `T${i}(w[j])` : 'w[j]'
          lines.push(
            `{ const w = V${i}, t = ctx.tol; for (let j = 0; j < a${i}.length; j++) { const r = ${got}, x = a${i}[j]; if (r !== x && !(Math.abs(r - x) <= t * Math.max(1, Math.abs(x)))) ctx.uncomputed(${i}, j, r, x); } }`,
          )
        }
      })
    }
    params.forEach((_, i) => {
      const s = slots[i]
      if (s?.kind === 'scalar') lines.push(`S[${i}] = ${resultA(s.index)};`)
    })
  }
  // the layout: allocations first (each may grow the memory, detaching every earlier view), then
  // the views, which \`laidOut\` closes over: a closure whose variables are never assigned, which
  // V8 specialises to them (constant views: no loads of their maps, lengths and data pointers per
  // call; about 7 ns of a 22 ns scalar-mul gradient where they lived in variables that \`layout\`
  // assigned, Node 20, loaded 2-core machine). A grown memory detaches them, which deoptimises
  // that code (V8's detaching protector), and \`M.length\` is then 0.
  const layout: string[] = []
  for (const i of arrays)
    if (!scratch.includes(i))
      layout.push(
        `{ const r = ctx.res[${i}]; if (r === undefined || r.length !== a${i}.length) ctx.resize(${i}, a${i}.length); else r.array; }`,
      )
  if (block.length)
    layout.push(
      `ctx.gradients([${params.map((_, i) => (grads.includes(i) ? `a${i}.length` : '-1')).join(', ')}], [${params.map((_, i) => (scratch.includes(i) ? `a${i}.length` : '-1')).join(', ')}]);`,
    )
  layout.push('const M = EA.memory();')
  if (block.length) layout.push('const GZ = ctx.gz;')
  for (const i of arrays)
    layout.push(
      `const V${i} = ctx.values[${i}] = ${scratch.includes(i) ? `ctx.sv[${i}]` : `ctx.res[${i}].array`}, O${i} = V${i}.byteOffset, N${i} = a${i}.length;`,
    )
  for (const i of d.mode === 'forward' ? [] : grads)
    layout.push(
      `const G${i} = ctx.gv[${i}], P${i} = G${i}.byteOffset;${d.isScratch[i] ? '' : ` ctx.buffers[${i}] = G${i};`}`,
    )
  // the straight-line copies and zeroings of short arrays, made for their lengths (see short-arrays.ts)
  const copies = arrays.filter((i) => !scratch.includes(i) && !d.isScratch[i] && !d.hasFromHost[i])
  for (const i of copies) layout.push(`const CP${i} = copyOf(${JSON.stringify(d.ctors[i])}, N${i});`)
  for (const [v, n] of block.length ? zeroed : []) layout.push(`const Z${v} = zeroOf(${v}[Symbol.toStringTag], ${n});`)
  layout.push('ctx.moved = false;')
  const state = [
    'M',
    ...(block.length ? ['GZ'] : []),
    ...arrays.flatMap((i) => [`V${i}`, `O${i}`, `N${i}`]),
    ...(d.mode === 'forward' ? [] : grads).flatMap((i) => [`G${i}`, `P${i}`]),
    ...copies.map((i) => `CP${i}`),
    ...(block.length ? zeroed.map(([v]) => `Z${v}`) : []),
  ].join(', ')
  layout.push(`return laidOut(${state});`)
  const ctors = arrays.map((i) => `, C${i} = ${d.ctors[i]}`).join('')
  const conversions = params
    .map(
      (_, i) =>
        `${d.hasFromHost[i] ? `, H${i} = ctx.fromHost[${i}]` : ''}${d.hasToHost[i] ? `, T${i} = ctx.toHost[${i}]` : ''}`,
    )
    .join('')
  return [
    '"use strict";',
    // (the host conversions as constants, which V8 inlines: see driver.ts)
    `const OVS = ctx.overlap?.seen, S = ctx.scalars, LS = ctx.loss, EAR = EA.resultsAt${d.F ? ', EFR = EF.resultsAt' : ''}${conversions}${ctors};`,
    // (the builtins themselves, called with `call`: a constant target for the JIT, where `V.set`
    // and `GZ.fill` were property loads that the optimised driver made through the generic LoadIC)
    'const TA = Object.getPrototypeOf(Uint8Array.prototype), tset = TA.set, tfill = TA.fill;',
    `function layout(${args}) {\n  ${layout.join('\n  ')}\n}`,
    `function laidOut(${state}) {\n  return function laid(${args}) {\n    ${lines.join('\n    ')}\n  };\n}`,
    // (null until the first call lays out: the call site in \`run\` then only ever sees closures of
    // \`laidOut\`, and while the layout stays, only one, which V8 inlines with its views as constants;
    // a first function called there once made the site polymorphic, and the gradient ran at
    // 14 ns or at 30 ns from one process to the next)
    'let work = null;',
    `return function run(${args}) {\n  ${checks.join('\n  ')}\n  if (work === null) work = layout(${args});\n  work(${args});\n};`,
  ].join('\n')
}
