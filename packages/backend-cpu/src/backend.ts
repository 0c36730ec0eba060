import {
  TenetError,
  type BackendSpec,
  type CompiledFunction,
  type CompiledProgram,
  type CompileOptions,
  type FunctionDef,
  type Program,
} from '@tenet/ir'
import {
  CHECKED_PASSES,
  disabledPasses,
  hoistBounds,
  provenBounds,
  impliedChecks,
  inlineSmallCalls,
  insertChecks,
  optimize,
  pairSeries,
  effectfulFunctions,
  replayUncalls,
  unrollCheckedSwaps,
} from '@tenet/ir/backend'
import { CodeGenerator, makeRuntime } from './codegen.js'
import { overwrittenScratch } from './overwritten.js'

/** What \`compileToJs\` returns: a compiled program, and the top of its tape (for tests). */
export interface CpuCompiledProgram extends CompiledProgram {
  /**
   * The number of terms on the tape of pass \`replay-uncall\` (0 where the program has none):
   * between calls, 0 (a call that returns pops what it pushed, a call that fails drops it).
   */
  tapeTop(): number
}

/**
 * Compiles a checked program and its inverses to JavaScript with `new Function`. The result
 * functions take positional arguments and write scalar results into their `results` buffer.
 */
export function compileToJs(
  checked: Program,
  checkedInverses: Map<string, FunctionDef>,
  options: CompileOptions,
): CpuCompiledProgram {
  const inlined = inlineSmallCalls(checked, checkedInverses, options.checks)
  const optimized = replayedUncalls(
    pairedSeries(optimize(inlined.program, inlined.inverses, options), options),
    options,
  )
  // the run-time checks as asserts, placed last, the loops' bounds checks hoisted before them
  // (see `insert-checks.ts` and `hoist-bounds.ts` of `@tenet/ir`)
  const asserted = insertChecks(optimized.program, optimized.inverses, options)
  // (with checks on, pass `proven-bounds` leaves out the bounds checks that cannot fail)
  const proved =
    CHECKED_PASSES.has('proven-bounds') && !disabledPasses.has('proven-bounds')
      ? provenBounds(asserted.program, asserted.inverses, options)
      : asserted
  const bounded = hoistBounds(proved.program, proved.inverses, options)
  // (with checks on, passes `pair-series` and `unroll-swaps` run here, on the asserts)
  // (with checks on, pass `implied-checks` leaves out the checks that earlier ones decided)
  const implied =
    CHECKED_PASSES.has('implied-checks') && !disabledPasses.has('implied-checks')
      ? impliedChecks(bounded.program, bounded.inverses, options)
      : bounded
  const paired = checkedPairedSeries(implied, options)
  const { program, inverses } = unrollCheckedSwaps(paired.program, paired.inverses, options)
  const gen = new CodeGenerator(program, inverses, options)
  const source = gen.generate()
  const rt = makeRuntime(gen, program, options)
  let make: Function
  try {
    make = new Function('rt', source)
  } catch (e) {
    // a strict Content-Security-Policy, or node --disallow-code-generation-from-strings
    if (e instanceof EvalError) {
      throw new TenetError(
        'backend/eval-forbidden',
        "the cpu backend compiles to JavaScript with new Function, which this page's Content-Security-Policy (or --disallow-code-generation-from-strings) forbids: use the interpreter backend, rev.with({ backend: 'interpreter' }), which generates no code",
      )
    }
    throw e
  }
  const table = make(rt) as Record<string, [Function, Float64Array, Function, Float64Array, Function?]>
  const cache = new Map<string, CompiledFunction>()
  return {
    tapeTop: () => rt.tapeTop?.() ?? 0,
    get(name, inverse) {
      const key = (inverse ? '~' : '') + name
      let c = cache.get(key)
      if (!c) {
        const entry = table[name]
        if (!entry) throw new Error(`cpu backend: no function \`${name}\``)
        const fn = inverse ? entry[2] : entry[0]
        const results = inverse ? entry[3] : entry[1]
        // the generated function itself is the core; attach its results buffer
        c = fn as unknown as CompiledFunction
        if (!('results' in fn)) Object.defineProperty(fn, 'results', { value: results })
        if (!inverse && !('overwritten' in fn)) {
          // (scratch parameters are zero at a function's entry only: none for an inverse)
          const def = program.functions.get(name)
          if (def?.params.some((p) => p.scratch))
            Object.defineProperty(fn, 'overwritten', { value: overwrittenScratch(def) })
        }
        const lean = inverse ? undefined : entry[4]
        if (lean && !('lean' in fn)) {
          // the lean copy (see \`CompiledFunction.lean\`): it writes the same results, but those of the scalars never written
          const written = program.writes.get(name)!
          const params = program.functions.get(name)!.params
          const passedThrough = params.map((p, i) => p.type.kind === 'scalar' && !written[i])
          Object.defineProperties(lean, { results: { value: results }, passedThrough: { value: passedThrough } })
          Object.defineProperty(fn, 'lean', { value: lean })
        }
        cache.set(key, c)
      }
      return c
    },
    sourceOf(name, inverse) {
      const marker = `function ${gen.fnName(name, inverse)}(`
      const start = source.indexOf(marker)
      if (start < 0) return undefined
      const end = source.indexOf('\n}\n', start)
      return source.slice(start, end + 2)
    },
  }
}

/**
 * Pass \`pair-series\` of \`@tenet/ir\` (a map loop of series runs two series side by side) on the
 * optimised program, without run-time checks: generated JavaScript gets from it the overlap of two
 * chains of divisions that the wasm backend gets from its f64x2 map lanes (which it would block).
 */
function pairedSeries(
  p: { program: Program; inverses: Map<string, FunctionDef> },
  options: CompileOptions,
): { program: Program; inverses: Map<string, FunctionDef> } {
  return options.checks || disabledPasses.has('pair-series')
    ? p
    : pairSeries(p.program, p.inverses, {
        unrollSwaps: !disabledPasses.has('unroll-swaps'),
        hoistCalls: !disabledPasses.has('hoist-lane-calls'),
      })
}

/**
 * Pass \`replay-uncall\` of \`@tenet/ir\` with run-time checks on, before the checks are placed: the
 * uncall of a call that only added terms to one float array subtracts the terms the call recorded
 * instead of computing them again (with checks off, \`dead-ancillas\` drops such uncomputes).
 */
function replayedUncalls(
  p: { program: Program; inverses: Map<string, FunctionDef> },
  options: CompileOptions,
): { program: Program; inverses: Map<string, FunctionDef> } {
  if (!options.checks || !CHECKED_PASSES.has('replay-uncall') || disabledPasses.has('replay-uncall')) return p
  const effectful = effectfulFunctions([...p.program.functions.values(), ...p.inverses.values()])
  return replayUncalls(p.program, p.inverses, effectful)
}

/**
 * Pass \`pair-series\` with run-time checks on, on the program whose asserts are placed: the lanes'
 * copies keep their checks, and each lane finishes before the next one goes on past its loop
 * (\`checked\` of \`pairSeries\`).
 */
function checkedPairedSeries(
  p: { program: Program; inverses: Map<string, FunctionDef> },
  options: CompileOptions,
): { program: Program; inverses: Map<string, FunctionDef> } {
  return !options.checks || !CHECKED_PASSES.has('pair-series') || disabledPasses.has('pair-series')
    ? p
    : pairSeries(p.program, p.inverses, {
        unrollSwaps: !disabledPasses.has('unroll-swaps') && CHECKED_PASSES.has('unroll-swaps'),
        checked: true,
        hoistCalls: !disabledPasses.has('hoist-lane-calls') && CHECKED_PASSES.has('hoist-lane-calls'),
      })
}

/** The cpu backend plugin: JavaScript code generation, no allocation per call in steady state. */
export const cpuBackend: BackendSpec = {
  specificationVersion: 'v1',
  name: 'cpu',
  priority: 10,
  capabilities: {
    f64: true,
    recursion: true,
    exceptions: true,
    f32: true,
    stacks: true,
    checks: true,
    gradient: true,
    hessian: true,
    // with unit-seeded tangents (`hessian` in @tenet/ad: a seed read costs one update, not one per
    // column) a sweep's cost is mostly the values and the gradient it recomputes, so fewer, wider
    // sweeps pay: on the graph-embedding Hessian (k = 6, 10), once optimised, 20–50 columns ran
    // 15–45% faster than 10 (loaded 2-core machine). Wider code takes longer to compile and for V8
    // to optimise (under load, 34 columns needed ~3× the calls of 10 to reach full speed), and
    // 64–100 fell off a cliff (the function too large to optimise): 20 was the compromise. With
    // the lanes an inner loop only reads hoisted out of it (pass `hoist-invariants`), 25 (four
    // sweeps of the k = 10 Hessian's 100 columns) ran 4% faster than 20 once optimised, and reached
    // full speed within the same ~300 calls (in-process, loaded 2-core machine)
    hessianWidth: 25,
    // (the store saves zeroing the output: BA's Jacobians about 10% faster, see \`@tenet/ad\`)
    jacobianStores: true,
    synchronous: true,
  },
  description: 'JavaScript code generation with new Function (one specialised function per function and direction)',
  doCompile: compileToJs,
}
