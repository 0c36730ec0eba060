/**
 * `blockJacobian`: the Jacobians of a function written for one block of data (one observation of
 * bundle adjustment, one residual of a least-squares problem), evaluated over many blocks laid out
 * one after another, by one compiled loop per chunk of blocks instead of one driver call per
 * block or sweeps over the whole problem.
 *
 * The per-block derivative program is chosen by counting, as `jacobian` does (`jacobianCost`):
 * - reverse: f forwards, then its vector-mode adjoint `f$adj<w>` carrying w output rows at once
 *   (the output seeds are lanes), both inlined into one body, so each block's adjoint runs right
 *   after its forward run while its values are in registers and cache;
 * - forward: f's tangent at width w, carrying w input columns at once.
 * Without run-time checks, updates nothing reads afterwards are dropped from the block program
 * (the adjoint's uncomputation of values; see `dropDeadUpdatesIn`). The block program is then
 * batched (`batchOverBlocks`): `for $b in 0..$n { block $b }`, compiled once with f's backend,
 * checks and tolerance.
 *
 * Resident buffers: on a backend with its own memory (wasm, `CompiledFunction.resident`), the
 * driver's chunk buffers — each argument's chunk, the workspaces, the derivative arrays and the
 * chunk of Jacobian blocks — live in that memory, so the compiled call copies nothing in or out:
 * the driver copies each argument's chunk in once per chunk (again per sweep only for the arrays
 * the program writes), and the chunk's Jacobian blocks out once, after every sweep.
 */
import type { Dataview, Expr, FunctionDef, ResidentArray, Stmt, Type } from '@tenet/ir'
import { TenetError } from '@tenet/ir'
import { overlapError, overlapGuard, sharesMemory, type TenetFunction } from '@tenet/reversible'
import { argError, CTORS, type TypedArray } from './arguments.js'
import { batchOverBlocks, renameLocals, scalarizeArrays, type BlockLayout } from './block-batch.js'
import { compileGenerated, infoOf } from './compile.js'
import { dropDeadUpdatesIn } from './dead.js'
import { ref, registryPartials } from './expr.js'
import { jacobianCost } from './jacobian.js'
import { indexList, optionsOf, positiveInteger } from './options.js'
import { TangentBuilder, tangentSlots } from './tangent.js'
import { DEFAULT_WIDTH } from './tangent-run.js'
import { AdjointBuilder, gradientSlots, hasGradient } from './transform.js'

/** Which arguments a block Jacobian relates, the block shape, and how it is computed. */
export interface BlockJacobianOptions {
  /**
   * Per parameter of `f`: the elements of one block of an array parameter (block b of an argument
   * is its elements [b·size, (b+1)·size)). Required for every array parameter; ignored for scalars.
   */
  sizes: ReadonlyArray<number | null | undefined>
  /** Indices of the float parameters differentiated with respect to (default: all float parameters). */
  inputs?: number[]
  /** Indices of the float parameters whose final values are differentiated (default: the float parameters f writes). */
  outputs?: number[]
  /**
   * Array parameters that are per-block scratch space (intermediates kept for the adjoint): zero
   * at the start of every block, allocated by the driver; the caller passes `null` for them.
   */
  workspace?: number[]
  /** `'forward'`, `'reverse'` or `'auto'` (default: the cheaper by `jacobianCost`). */
  mode?: 'forward' | 'reverse' | 'auto'
  /** Directions per sweep, columns (forward) or rows (reverse); default 8, capped by their count. */
  width?: number
  /**
   * Blocks per compiled call (default 256: a chunk's buffers stay in cache). By default, a run
   * that needs no chunk buffer — every derivative and workspace held in scalars, no array argument
   * the program writes, each entry of \`out\` stored (\`storeEntries\`), and on a backend with its
   * own memory every array argument and \`out\` living there — makes one call for all its blocks
   * instead (see \`blocksPerCall\` of the plan, and \`maxBlocksPerCall\`).
   */
  chunk?: number
  /**
   * Whether the sweeps store each entry of `out` (swapped in) rather than add it into a zeroed
   * `out`: only where that is exact (checks off, f64 derivatives); default: f's backend's
   * `jacobianStores` capability (cpu and wasm: yes; the interpreter: no).
   */
  storeEntries?: boolean
}

/** What `blockJacobian` chose, printable for people. */
export interface BlockJacobianPlan {
  readonly function: string
  /** Rows (output scalars) and columns (input scalars) of one block's Jacobian. */
  readonly rows: number
  readonly columns: number
  readonly mode: 'forward' | 'reverse'
  /** Directions per sweep and sweeps per block. */
  readonly width: number
  readonly sweeps: number
  /** Whether `mode` was chosen by counting (`'auto'`) or asked for. */
  readonly chosen: 'by counts' | 'asked for'
  /** The counted costs, in runs of f per block: ⌈nc/w⌉·(1 + w) forward, ⌈nr/w⌉·(2 + w) reverse. */
  readonly cost: { forward: number; reverse: number }
  readonly blocksPerCall: number
  /**
   * Whether a run that needs no chunk buffer makes one call for all its blocks (up to
   * \`maxBlocksPerCall\`, so that no offset a call computes passes 2³¹ − 1) rather than one per
   * \`blocksPerCall\`: the default \`chunk\`, checks off, every derivative and workspace in scalars,
   * no written array argument, entries stored. A chunk is then only a view of each argument and of
   * \`out\` per call, and a call's entry (BA's ba1 and ba2 Jacobians: 0–4% of their time on cpu and
   * 7–18% on wasm, at 256 blocks a call).
   */
  readonly wholeRuns: boolean
  /** The most blocks one call of a whole run covers: ⌊(2³¹ − 1) / the most elements of one block of an argument or of J⌋. */
  readonly maxBlocksPerCall: number
  readonly deadUpdatesDropped: boolean
  /**
   * Whether each sweep stores its entries of J (swapped in) rather than adding to them, so that
   * `out` is not zeroed before a run (checks off, f64 derivatives).
   */
  readonly storesEntries: boolean
  toString(): string
}

/** A compiled block Jacobian (see `blockJacobian`). */
export interface BlockJacobian {
  readonly plan: BlockJacobianPlan
  /**
   * The Jacobians of `n` blocks: `args` holds, per parameter, the batched values (an array
   * parameter's n·size elements, a float scalar parameter's n values as a Float64Array), the one
   * value of an integer or bool scalar (shared by all blocks), or `null` for a workspace. Returns
   * (or fills `out`) n row-major blocks of rows × columns: entry (b, r, c) at (b·rows + r)·columns
   * + c, rows the output scalars and columns the input scalars in parameter order (arrays
   * flattened). The caller's arrays are left as they were. Throws `call/overlap` (before anything
   * runs) when `out` shares memory with an array argument, or an array `f` writes shares memory with
   * another array argument: the aliasing rule of every call.
   */
  run(n: number, args: ArrayLike<unknown>, out?: Float64Array): Float64Array
  /**
   * The compiled batched programs, one per sweep (parameters: `$n`, then the block program's,
   * batched, then `$J`: the Jacobian blocks, accumulated into).
   */
  readonly programs: readonly TenetFunction[]
  /**
   * Gives back the chunk buffers the driver holds in the backend's memory (wasm: see "resident
   * buffers" in the module comment); a later `run` allocates them again. Nothing to do on the
   * cpu backend. Buffers of a block Jacobian dropped without `release` are given back once it is
   * unreachable. (They are allocated by \`blockJacobian\`, so that arrays the caller allocates in the
   * memory afterwards are not detached by the driver's first run.)
   */
  release(): void
}

/** One parameter of the block program and where the driver gets it from. */
type Source = { kind: 'value'; param: number } | { kind: 'derivative'; param: number; lane: number } | { kind: 'sink' }

const FLOAT_ARRAYS: Record<string, 'Float64Array' | 'Float32Array'> = { f64: 'Float64Array', f32: 'Float32Array' }

/**
 * The Jacobians of `f` over many independent blocks (see the module comment): `f` is written for
 * one block, its array parameters hold one block each (`options.sizes`), and `run(n, args)` takes
 * n blocks of every argument laid out one after another. The per-block program — forward columns
 * or reverse rows, whichever is cheaper by the counts of inputs and outputs — runs inside one
 * compiled loop over a chunk of blocks; `plan` says which and why. `f` may read and write its
 * array parameters only element by element (and take `len`), so that block b's are offset views
 * of the batched arrays; blocks must not interact (no float value flows between blocks).
 */
export function blockJacobian(f: TenetFunction, options: BlockJacobianOptions): BlockJacobian {
  optionsOf('blockJacobian', options, false)
  indexList('blockJacobian', 'inputs', options.inputs)
  indexList('blockJacobian', 'outputs', options.outputs)
  indexList('blockJacobian', 'workspace', options.workspace)
  positiveInteger('blockJacobian', 'width', options.width)
  const chunk = positiveInteger('blockJacobian', 'chunk', options.chunk) ?? 256
  const info = infoOf(f)
  if (info.inverse) argError('`blockJacobian` differentiates forward functions, not an inverse (`~f`)')
  const def = info.program.functions.get(info.name)!
  const params = def.params
  const written = info.program.writes.get(info.name)!
  const overlap = overlapGuard(info.name, params, written)
  const isFloat = (i: number) => hasGradient(params[i]!.type, info.registry)
  const sizes = options.sizes
  if (!Array.isArray(sizes) || sizes.length !== params.length)
    argError(`\`sizes\` of \`blockJacobian\` must give one entry per parameter of \`${info.name}\` (${params.length})`)
  const size = params.map((p, i) => {
    if (p.type.kind === 'stack')
      return argError(`parameter \`${p.name}\` of \`${info.name}\` is a stack: blocks cannot hold stacks`)
    if (p.type.kind === 'scalar') {
      if (isFloat(i) && !FLOAT_ARRAYS[p.type.name])
        argError(
          `parameter \`${p.name}\` of \`${info.name}\` is ${p.type.name}: \`blockJacobian\` takes f64 and f32 floats`,
        )
      if (!isFloat(i) && written[i])
        argError(`\`${info.name}\` writes its ${p.type.name} parameter \`${p.name}\`, which all blocks share`)
      return 1
    }
    if (isFloat(i) && !FLOAT_ARRAYS[p.type.elem])
      argError(
        `parameter \`${p.name}\` of \`${info.name}\` is ${p.type.elem}[]: \`blockJacobian\` takes f64 and f32 floats`,
      )
    const s = sizes[i]
    if (typeof s !== 'number' || !Number.isInteger(s) || s < 1)
      argError(
        `\`sizes[${i}]\` (array \`${p.name}\`) must be the positive number of its elements per block, got ${String(s)}`,
      )
    return s as number
  })
  const floats = params.flatMap((_, i) => (isFloat(i) ? [i] : []))
  const inputs = options.inputs ?? floats
  const outputs = options.outputs ?? floats.filter((i) => written[i])
  for (const i of [...inputs, ...outputs])
    if (!params[i] || !isFloat(i)) argError(`argument ${i} of \`${info.name}\` is not a float scalar or float array`)
  const workspace = new Set(options.workspace ?? [])
  for (const i of workspace)
    if (params[i]?.type.kind !== 'array') argError(`workspace ${i} of \`${info.name}\` is not an array parameter`)
  const scalars = (list: number[]) => list.flatMap((p) => Array.from({ length: size[p]! }, (_, e) => [p, e] as const))
  const cols = scalars(inputs),
    rows = scalars(outputs)
  const nc = cols.length,
    nr = rows.length
  const mode = options.mode ?? 'auto'
  if (mode !== 'auto' && mode !== 'forward' && mode !== 'reverse')
    argError(`\`mode\` must be 'reverse', 'forward' or 'auto', got ${String(mode)}`)
  const width = options.width ?? DEFAULT_WIDTH
  const forward = mode === 'forward' || (mode === 'auto' && jacobianCost(nc, nr, width) === 'forward')
  const w = Math.max(1, Math.min(width, forward ? nc : nr))
  const wf = Math.max(1, Math.min(width, nc)),
    wr = Math.max(1, Math.min(width, nr))
  const checksOff = info.options.checks === false

  // the block program of each sweep, batched and compiled
  const registry = info.registry.clone()
  const partials = registryPartials(registry, info.program.hosts)
  let base: FunctionDef
  let generated: FunctionDef[]
  let derivativeSlots: ReturnType<typeof gradientSlots>
  if (forward) {
    const builder = new TangentBuilder(info.program, info.inverses, registry, partials, w)
    const name = builder.request(info.name, false)
    generated = builder.build()
    base = generated.find((g) => g.name === name)!
    derivativeSlots = tangentSlots(params, info.registry, w)
  } else {
    const builder = new AdjointBuilder(info.program, info.inverses, registry, partials, w)
    const name = builder.request(info.name, false)
    generated = builder.build()
    base = generated.find((g) => g.name === name)!
    derivativeSlots = gradientSlots(params, info.registry, w)
  }
  const sources: Source[] = base.params.map((_, j) =>
    j < params.length ? { kind: 'value', param: j } : { kind: 'sink' },
  )
  derivativeSlots.forEach((s, i) => {
    if (!s) return
    for (let k = 0; k < (s.kind === 'scalar' ? w : 1); k++)
      sources[s.index + k] = { kind: 'derivative', param: i, lane: k }
  })
  /** The derivative of (p, e) in lane k, as a dataview of the block program. */
  const derivative = (p: number, e: number, k: number): Dataview => {
    const s = derivativeSlots[p]!
    return s.kind === 'scalar' ? ref(base.params[s.index + k]!.name) : at(base.params[s.index]!.name, int(e * w + k))
  }
  const elemOf = (t: Type): string => (t.kind === 'scalar' ? t.name : (t as { elem: string }).elem)
  const J = '$J'
  /**
   * Whether the read-back *stores* each entry of J instead of adding to it: every entry (r, c) is
   * read back exactly once over the sweeps, so without run-time checks (the derivatives are then
   * scratch scalars that nothing reads after the read-back) and with f64 derivatives it is swapped
   * in: J gets the derivative, the dead scratch gets J's old value. J then needs no zeroing before
   * a run, which is a pass over the whole output (10% of ba1's Jacobian on one thread; more into
   * shared memory, where V8 has no plain memset). With checks, or an f32 derivative, it adds into
   * a zeroed J; and where the backend runs the adding read-back faster than the store and the
   * zeroing together (\`storeEntries\`, by default the backend's \`jacobianStores\` capability).
   */
  const storeEntries =
    options.storeEntries ?? info.registry.backend(info.options.backend).capabilities.jacobianStores === true
  if (typeof storeEntries !== 'boolean') argError(`\`storeEntries\` must be a boolean, got ${String(storeEntries)}`)
  const storesJ =
    storeEntries && checksOff && (forward ? outputs : inputs).every((p) => elemOf(params[p]!.type) === 'f64')
  const sweeps = Math.ceil((forward ? nc : nr) / w)
  const taken = new Set(generated.map((g) => g.name))
  const others = [...info.program.functions.values()].filter((g) => !taken.has(g.name))
  // scalar replacement: workspaces always; without checks every derivative (they start at zero
  // and are read back only through J), so that they live in registers
  const scratchArrays = new Map<string, number>()
  const scratchScalars = new Set<string>()
  params.forEach((p, i) => {
    // (with checks, only in reverse, where the adjoint returns the workspace to zero before it is freed)
    if (workspace.has(i) && (checksOff || !forward)) scratchArrays.set(p.name, size[i]!)
    const s = derivativeSlots[i]
    if (!checksOff || !s) return
    if (s.kind === 'array') scratchArrays.set(base.params[s.index]!.name, size[i]! * w)
    else for (let k = 0; k < w; k++) scratchScalars.add(base.params[s.index + k]!.name)
  })
  const layouts: BlockLayout[] = sources.map((s) => {
    if (s.kind === 'sink') return { kind: 'shared' }
    const p = params[s.param]!
    if (p.type.kind === 'scalar') return isFloat(s.param) ? { kind: 'scalar' } : { kind: 'shared' }
    return { kind: 'array', length: size[s.param]! * (s.kind === 'derivative' ? w : 1) }
  })
  layouts.push({ kind: 'array', length: nr * nc })
  let replaced = new Set<string>()
  const batchedPrograms: FunctionDef[] = []
  const all = new Map<string, FunctionDef>()
  const uses: boolean[][] = []
  for (let pass = 0; pass < sweeps; pass++) {
    const d0 = pass * w
    // seeds: lane k carries direction d0 + k (an input column forwards, an output row in reverse)
    const seeded = forward ? cols : rows
    const seeds: Stmt[] = []
    for (let k = 0; k < w && d0 + k < seeded.length; k++) {
      const [p, e] = seeded[d0 + k]!
      seeds.push(update(derivative(p, e, k), { kind: 'num', value: 1, isFloat: true }))
    }
    // read back into J: forwards the tangents of the outputs, in reverse the gradients of the inputs
    const reads: Stmt[] = []
    const read = forward ? rows : cols
    for (let k = 0; k < w && d0 + k < seeded.length; k++)
      read.forEach(([p, e], t) => {
        const r = forward ? t : d0 + k,
          c = forward ? d0 + k : t
        const d = derivative(p, e, k) as Expr
        const entry = at(J, int(r * nc + c))
        reads.push(
          storesJ
            ? swapStmt(entry, d as Dataview)
            : update(entry, elemOf(params[p]!.type) === 'f64' ? d : call('f64', d)),
        )
      })
    const body = forward
      ? [...seeds, ...renameLocals(base.body, '$t$'), ...reads]
      : [...renameLocals(def.body, '$f$'), ...seeds, ...renameLocals(base.body, '$a$'), ...reads]
    const blockName = `${info.name}$block${forward ? 'tan' : 'adj'}${w}$${pass}`
    const block = scalarizeArrays(
      {
        kind: 'fn',
        name: blockName,
        params: [...base.params, { name: J, type: { kind: 'array', elem: 'f64' } }],
        body,
      },
      scratchArrays,
      scratchScalars,
    )
    replaced = block.replaced
    let entry = block.f
    let functions = [...generated, ...others, entry]
    // only J is read back: drop the updates nothing reads (the adjoint's uncomputation, …)
    if (checksOff) {
      ;({ entry, functions } = dropDeadUpdatesIn(functions, entry, new Set([J]), registry))
      // its specialised copies of callees (`<name>$live<n>`) are named per run: make them this sweep's
      const known = new Set([...generated, ...others].map((g) => g.name))
      const rename = new Map(
        functions.filter((g) => !known.has(g.name) && g.name !== entry.name).map((g) => [g.name, `${g.name}$${pass}`]),
      )
      if (rename.size) {
        const fix = (g: FunctionDef): FunctionDef => ({
          ...g,
          name: rename.get(g.name) ?? g.name,
          body: renameCalls(g.body, rename),
        })
        entry = fix(entry)
        functions = functions.map((g) => (rename.has(g.name) || g.name === entry.name ? fix(g) : g))
      }
    }
    const batched = batchOverBlocks(entry, layouts, `${blockName}$blocks`)
    for (const g of functions) if (g.name !== entry.name) all.set(g.name, g)
    all.set(batched.name, batched)
    batchedPrograms.push(batched)
    const names = namesIn(batched.body)
    uses.push(batched.params.slice(1).map((p) => names.has(p.name)))
  }
  // every sweep's program in one module (one check, inversion and compilation)
  const module = compileGenerated(info, registry, [...all.values()])
  const programs = batchedPrograms.map((b) => module[b.name]!)

  // whole runs (see \`BlockJacobianPlan.wholeRuns\`): no source the programs use needs a chunk
  // buffer of the driver's (a derivative or workspace array, a written argument) and each entry of
  // J is stored, so one call may cover every block, as many as keep each offset \`$b · L\` the
  // programs compute in i32 below 2³¹ (L the elements of a block of an argument, or of J)
  const used = sources.map((_, j) => uses.some((u) => u[j]))
  const needsBuffer = (s: Source, j: number): boolean => {
    if (s.kind === 'sink' || !used[j]) return false
    if (s.kind === 'derivative') return true
    const p = params[s.param]!
    return p.type.kind === 'array' ? written[s.param]! || workspace.has(s.param) : isFloat(s.param) && written[s.param]!
  }
  const wholeRuns = options.chunk === undefined && storesJ && !sources.some(needsBuffer)
  const widest = Math.max(
    nr * nc,
    ...sources.map((s, j) =>
      s.kind === 'sink' || !used[j]
        ? 1
        : size[s.param]! * (s.kind === 'derivative' && params[s.param]!.type.kind === 'array' ? w : 1),
    ),
  )
  const maxBlocksPerCall = Math.max(1, Math.floor(0x7fffffff / widest))

  const cost = { forward: Math.ceil(nc / wf) * (1 + wf), reverse: Math.ceil(nr / wr) * (2 + wr) }
  const chosen = mode === 'auto' ? 'by counts' : 'asked for'
  const plan: BlockJacobianPlan = Object.freeze({
    function: info.name,
    rows: nr,
    columns: nc,
    mode: forward ? 'forward' : 'reverse',
    width: w,
    sweeps,
    chosen,
    cost,
    blocksPerCall: chunk,
    wholeRuns,
    maxBlocksPerCall,
    deadUpdatesDropped: checksOff,
    storesEntries: storesJ,
    toString() {
      const what = forward
        ? `forward: ${sweeps} tangent sweep${sweeps > 1 ? 's' : ''} of ${w} column${w > 1 ? 's' : ''} per block`
        : `reverse: ${sweeps} sweep${sweeps > 1 ? 's' : ''} of f and its vector adjoint carrying ${w} row${w > 1 ? 's' : ''} per block`
      const held = [...replaced].filter((n) => params.some((p) => p.name === n))
      return [
        `block Jacobian of \`${info.name}\` (${nr} rows × ${nc} columns per block): ${what}`,
        `  ${chosen}: forward ⌈${nc}/${wf}⌉·(1 + ${wf}) = ${cost.forward}, reverse ⌈${nr}/${wr}⌉·(2 + ${wr}) = ${cost.reverse} runs of f`,
        `  one compiled loop over up to ${wholeRuns ? `${maxBlocksPerCall} blocks per call (no chunk buffers: all of a run's blocks at once, on a backend with its own memory when the arguments and out live there; else ${chunk})` : `${chunk} blocks per call`}${forward ? '' : ", each block's forward run fused with its adjoint"}; seeds and read-back inside it`,
        checksOff
          ? `  checks off: derivatives held in scalars, updates nothing reads dropped${held.length ? `; workspaces in scalars: ${held.map((a) => `\`${a}\``).join(', ')}` : ''}${storesJ ? '; entries stored (out is not zeroed)' : ''}`
          : `  checks on: derivatives in arrays, values restored${held.length ? `; workspaces in scalars: ${held.map((a) => `\`${a}\``).join(', ')}` : ''}`,
      ].join('\n')
    },
  })

  // the driver's buffers, one chunk each (none for a parameter no program uses)
  const nargs = sources.length + 2
  const argv = new Array<unknown>(nargs).fill(0)
  const owned: Array<TypedArray | undefined> = new Array(sources.length).fill(undefined)
  const empty: Array<TypedArray | undefined> = new Array(sources.length).fill(undefined)
  const ctorOf = (t: Type) => CTORS[info.registry.numberSystem(elemOf(t)).arrayType as keyof typeof CTORS]
  sources.forEach((s, j) => {
    if (s.kind === 'sink') return
    const p = params[s.param]!
    const ctor = s.kind === 'derivative' ? CTORS[FLOAT_ARRAYS[elemOf(p.type)]!] : ctorOf(p.type)
    empty[j] = new ctor(0)
    if (!used[j]) return
    if (s.kind === 'derivative') owned[j] = new ctor(chunk * size[s.param]! * (p.type.kind === 'array' ? w : 1))
    else if (
      p.type.kind === 'array' ? written[s.param] || workspace.has(s.param) : isFloat(s.param) && written[s.param]
    )
      owned[j] = new ctor(chunk * size[s.param]!)
  })

  // resident mode (see the module comment): the chunk buffers in the backend's memory, allocated
  // by the first run (one per used array source, and J)
  const memory = programs[0]!.core.resident
  const held: Held = { arrays: new Array(sources.length).fill(undefined), J: undefined }
  /** Per source: the elements of one block in its chunk buffer (0 where no buffer is resident). */
  const perBlock = sources.map((s, j) => {
    if (!memory || s.kind === 'sink' || !used[j]) return 0
    const p = params[s.param]!
    if (p.type.kind === 'scalar' && !isFloat(s.param)) return 0
    return s.kind === 'derivative' ? size[s.param]! * (p.type.kind === 'array' ? w : 1) : size[s.param]!
  })
  /** Per source: the element type of its resident buffer. */
  const elemOfSource = sources.map((s) => (s.kind === 'sink' ? '' : elemOf(params[s.param]!.type)))
  const allocate = () => {
    perBlock.forEach((L, j) => {
      if (L > 0) held.arrays[j] = memory!.allocate(elemOfSource[j]!, chunk * L)
    })
    held.J = memory!.allocate('f64', chunk * nr * nc)
    residentBuffers?.register(run, held, held)
  }
  /**
   * The arguments of one chunk's call in resident mode, written into \`argv\` (\`fresh\`: the first
   * sweep of the chunk, which copies the read-only arrays too). \`inMemory[i]\`: argument i is itself
   * a view of the backend's memory, passed in place (a chunk view of it) when the program only reads it.
   */
  const residentArgs = (args: ArrayLike<unknown>, b0: number, m: number, fresh: boolean, inMemory: boolean[]) => {
    for (let j = 0; j < sources.length; j++) {
      const s = sources[j]!
      if (s.kind === 'sink') {
        argv[j + 1] = 0
        continue
      }
      const i = s.param
      if (params[i]!.type.kind === 'scalar' && !isFloat(i)) {
        argv[j + 1] = args[i]
        continue
      }
      const L = perBlock[j]!
      if (L === 0) {
        argv[j + 1] = empty[j]
        continue
      }
      const readOnly = s.kind === 'value' && !written[i] && !workspace.has(i)
      if (readOnly && inMemory[i]) {
        if (fresh) argv[j + 1] = (args[i] as TypedArray).subarray(b0 * L, (b0 + m) * L)
        continue
      }
      // (read again before each call: a call or an allocation that grew the memory detaches views)
      const all = held.arrays[j]!.array
      const view = m === chunk ? all : all.subarray(0, m * L)
      if (s.kind === 'derivative' || workspace.has(i)) view.fill(0)
      if (s.kind === 'value' && !workspace.has(i) && (fresh || written[i]))
        view.set((args[i] as TypedArray).subarray(b0 * L, (b0 + m) * L) as never)
      argv[j + 1] = view
    }
  }
  /** Throws when a resident argument was detached by a memory growth during the run. */
  const attached = (args: ArrayLike<unknown>, inMemory: boolean[], n: number) => {
    inMemory.forEach((r, i) => {
      if (r && (args[i] as TypedArray).length !== n * size[i]!)
        argError(
          `argument ${i} (\`${params[i]!.name}\`) lives in the backend's memory, which grew during the run (a grown memory detaches its views): allocate the program's memory first, or pass a host array`,
        )
    })
  }

  /** Zeros to copy into a chunk of an output in shared memory (allocated by the first such run). */
  let zeros = new Float64Array(0)
  /**
   * Whether a run is under way: a host function of \`f\` that calls \`run\` again from inside it
   * would overwrite the chunk buffers, and \`argv\`, that the outer run is using (wrong values,
   * silently). Such a call throws \`ad/reentrant\` instead, before it touches anything.
   */
  let busy = false
  const run = (n: number, args: ArrayLike<unknown>, out?: Float64Array): Float64Array => {
    if (busy)
      throw new TenetError(
        'ad/reentrant',
        `the block Jacobian of \`${info.name}\` was called again from inside its own call (from a host function its program calls): the inner call would overwrite the outer call's buffers; use a separate \`blockJacobian(...)\` there`,
      )
    busy = true
    try {
      return runBlocks(n, args, out)
    } finally {
      busy = false
    }
  }
  const runBlocks = (n: number, args: ArrayLike<unknown>, out?: Float64Array): Float64Array => {
    if (!Number.isInteger(n) || n < 0) argError(`the number of blocks must be a non-negative integer, got ${String(n)}`)
    // (the chunk buffers first: allocating them may grow the memory, which detaches the views of
    // it that the caller passes)
    if (memory && !held.J && n > 0) allocate()
    if (!args || args.length !== params.length)
      argError(`\`${info.name}\` takes ${params.length} arguments (batched), got ${args ? args.length : 'none'}`)
    params.forEach((p, i) => {
      const a = args[i]
      if (workspace.has(i)) return
      if (p.type.kind === 'scalar' && !isFloat(i)) {
        if (typeof a !== 'number' && typeof a !== 'boolean')
          argError(`argument ${i} (\`${p.name}\`) is shared by all blocks: pass one ${p.type.name}`)
        return
      }
      const want = n * size[i]!
      if (!ArrayBuffer.isView(a) || (a as TypedArray).length !== want)
        argError(
          `argument ${i} (\`${p.name}\`) must be a typed array of ${want} elements (${n} blocks of ${size[i]}), got ${ArrayBuffer.isView(a) ? `${(a as TypedArray).length} elements` : typeof a}`,
        )
    })
    const Jout = out ?? new Float64Array(n * nr * nc)
    if (!(Jout instanceof Float64Array) || Jout.length !== n * nr * nc)
      argError(`\`out\` must be a Float64Array of ${n * nr * nc} numbers`)
    // the aliasing rule (see \`overlapGuard\` of \`@tenet/reversible\`): an array \`f\` writes shares no
    // memory with another array argument, and nor does \`out\`, which the run writes while it reads
    // the arguments in place
    if (overlap)
      for (let k = 0; k < overlap.pairs.length; k += 2) {
        const w = overlap.pairs[k]!,
          o = overlap.pairs[k + 1]!
        if (!workspace.has(w) && !workspace.has(o) && sharesMemory(args[w], args[o]))
          throw overlapError(info.name, params, w, o)
      }
    if (out)
      for (let i = 0; i < params.length; i++)
        if (!workspace.has(i) && sharesMemory(args[i], Jout))
          throw new TenetError(
            'call/overlap',
            `\`out\` and argument ${i + 1} (\`${params[i]!.name}\`) of the block Jacobian of \`${info.name}\` share memory: the Jacobian is written into \`out\` while the arguments are read (pass a separate array)`,
          )
    const B = nr * nc
    if (memory) {
      if (n === 0) return Jout
      // the arguments and \`out\` that are views of the backend's memory are used in place
      const buffer = held.J!.array.buffer
      const inMemory = params.map((_, i) => ArrayBuffer.isView(args[i]) && (args[i] as TypedArray).buffer === buffer)
      const outInMemory = Jout.buffer === buffer
      // (whole runs: every array the programs use is an argument living in the memory, read in place)
      const step =
        wholeRuns &&
        outInMemory &&
        sources.every((s, j) => s.kind !== 'value' || perBlock[j] === 0 || inMemory[s.param] === true)
          ? maxBlocksPerCall
          : chunk
      for (let b0 = 0; b0 < n; b0 += step) {
        const m = Math.min(n, b0 + step) - b0
        argv[0] = m
        if (b0 > 0) attached(args, inMemory, n)
        if (outInMemory && Jout.length !== n * B)
          argError("`out` lives in the backend's memory, which grew during the run")
        for (let pass = 0; pass < sweeps; pass++) {
          residentArgs(args, b0, m, pass === 0, inMemory)
          // J's chunk, zeroed before the first sweep (the sweeps accumulate into it)
          let Jr: Float64Array
          if (outInMemory) Jr = Jout.subarray(b0 * B, (b0 + m) * B)
          else {
            const Jall = held.J!.array as Float64Array
            Jr = m === chunk ? Jall : Jall.subarray(0, m * B)
          }
          if (pass === 0 && !storesJ) Jr.fill(0)
          argv[nargs - 1] = Jr
          programs[pass]!.core.apply(undefined, argv)
        }
        if (!outInMemory) {
          const Jall = held.J!.array as Float64Array
          Jout.set(m === chunk ? Jall : Jall.subarray(0, m * B), b0 * B)
        }
      }
      return Jout
    }
    // (an output in shared memory is zeroed by copying zeros in: see `isShared`; none is zeroed
    // when the program stores every entry: `storesJ`)
    const shared = !storesJ && isShared(Jout)
    if (shared && zeros.length < chunk * B) zeros = new Float64Array(chunk * B)
    const step = wholeRuns ? maxBlocksPerCall : chunk
    for (let b0 = 0; b0 < n; b0 += step) {
      const m = Math.min(n, b0 + step) - b0
      const Jc = Jout.subarray(b0 * B, (b0 + m) * B)
      if (shared) Jc.set(m * B === zeros.length ? zeros : zeros.subarray(0, m * B))
      else if (!storesJ) Jc.fill(0)
      for (let pass = 0; pass < sweeps; pass++) {
        argv[0] = m
        for (let j = 0; j < sources.length; j++) {
          const s = sources[j]!
          if (s.kind === 'sink') {
            argv[j + 1] = 0
            continue
          }
          const i = s.param
          const p = params[i]!
          if (p.type.kind === 'scalar' && !isFloat(i)) {
            argv[j + 1] = args[i]
            continue
          }
          if (!used[j]) {
            argv[j + 1] = empty[j]
            continue
          }
          const buf = owned[j]
          if (s.kind === 'derivative') {
            buf!.fill(0)
            argv[j + 1] = buf
            continue
          }
          const L = size[i]!
          if (workspace.has(i)) {
            buf!.fill(0, 0, m * L)
            argv[j + 1] = buf!.subarray(0, m * L)
          } else {
            const view = (args[i] as TypedArray).subarray(b0 * L, (b0 + m) * L)
            if (buf) {
              buf.set(view as never)
              argv[j + 1] = buf.subarray(0, m * L)
            } else argv[j + 1] = view
          }
        }
        argv[nargs - 1] = Jc
        programs[pass]!.core.apply(undefined, argv)
      }
    }
    return Jout
  }
  // (allocated now, before the caller allocates arrays of its own there: a later allocation that
  // grows the memory would detach the views the caller holds)
  if (memory) allocate()
  const release = () => {
    if (!held.J) return
    residentBuffers?.unregister(held)
    freeHeld(held)
  }
  return { plan, run, programs, release }
}

/**
 * Whether `a` is a view of a SharedArrayBuffer (an output that worker threads write into). V8's
 * `fill` stores into shared memory element by element (atomically, since other threads may read
 * it), about 1.8 times as slow as copying zeros in with `set` (a word-wise copy): zeroing each chunk
 * of a BA Jacobian (ba1 size) in shared memory took 0.3 ms more per Jacobian that way, 6% of it.
 */
function isShared(a: Float64Array): boolean {
  return typeof SharedArrayBuffer === 'function' && a.buffer instanceof SharedArrayBuffer
}

/** The resident chunk buffers of a block Jacobian (see the module comment). */
interface Held {
  arrays: Array<ResidentArray | undefined>
  J: ResidentArray | undefined
}

function freeHeld(held: Held): void {
  for (const r of held.arrays) r?.release()
  held.arrays.fill(undefined)
  held.J?.release()
  held.J = undefined
}

/** Gives back the resident buffers of block Jacobians dropped without \`release\`. */
const residentBuffers =
  typeof FinalizationRegistry === 'function' ? new FinalizationRegistry<Held>(freeHeld) : undefined

const int = (value: number): Expr => ({ kind: 'num', value, isFloat: false })
const at = (name: string, index: Expr): Dataview => ({ kind: 'index', array: ref(name), index })
const call = (callee: string, ...args: Expr[]): Expr => ({ kind: 'call', callee, args })
const update = (target: Dataview, value: Expr): Stmt => ({ kind: 'update', op: '+=', target, value })
const swapStmt = (a: Dataview, b: Dataview): Stmt => ({
  kind: 'callstmt',
  callee: 'SWAP',
  args: [a, b],
  inverse: false,
})

/** `body` with its calls of the functions named in `rename` redirected. */
function renameCalls(body: Stmt[], rename: ReadonlyMap<string, string>): Stmt[] {
  return body.map((s) => {
    switch (s.kind) {
      case 'callstmt':
        return rename.has(s.callee) ? { ...s, callee: rename.get(s.callee)! } : s
      case 'if':
        return { ...s, then: renameCalls(s.then, rename), else: renameCalls(s.else, rename) }
      case 'while':
      case 'for':
      case 'unchecked':
        return { ...s, body: renameCalls(s.body, rename) }
      default:
        return s
    }
  })
}

/** Every variable name a body mentions. */
function namesIn(body: Stmt[]): Set<string> {
  const out = new Set<string>()
  JSON.stringify(body, (key, v) => {
    if (key === 'name' && typeof v === 'string') out.add(v)
    if (key === 'variable' && typeof v === 'string') out.add(v)
    return v
  })
  return out
}
