/**
 * The front door: a typed source program compiled to JS, for its value, its gradient
 * (∇ = π₂ D⃖(e)(0, 1), §3.3) or its vector–Jacobian product.
 */
import type { Registry } from '@tenet/ir'
import { generate } from './codegen.js'
import { UnfError } from './errors.js'
import { OpTable } from './ops.js'
import { partialEvaluate } from './partial-eval.js'
import { defineProgram, reverseStages, type ReverseStages, type SourceProgram } from './pipeline.js'
import { parseProgram } from './parse.js'
import { fresh, v, type Term } from './term.js'
import { cotangentType, printType, type Type } from './types.js'

/** Options of `compile`. */
export interface CompileOptions {
  /** a Tenet registry whose pure primitives may be called by name (partials from the registry) */
  registry?: Registry
  /**
   * The parameters to differentiate with respect to (default: all). The others (data) get no
   * gradient (`undefined` in the result), and what only they needed is not computed: the paper's
   * choice of ρ and Y as a projection onto a subset of Γ (§3.3).
   */
  wrt?: string[]
  /**
   * Arrays of the gradient that are computed once per call (not per element) live in buffers the
   * compiled function keeps: no allocation per call, but the next call overwrites the arrays the
   * previous one returned (copy what you keep). Default false: every call returns fresh arrays.
   */
  reuseResults?: boolean
  /**
   * The built-in `exp` in generated code is `fast-exp.ts`'s table-driven float64 exp, which V8
   * inlines into the loop (about half an ulp from the correctly rounded result, where
   * `Math.exp` is within one ulp; arguments beyond ±708 go to `Math.exp`). Default true; false:
   * `Math.exp`.
   */
  fastExp?: boolean
  /**
   * The built-in `tanh` in generated code is `fast-tanh.ts`'s float64 tanh (on `fast-exp.ts`'s
   * tables), which V8 inlines into the loop, about as accurate as `Math.tanh` (within 1.1 ulp of
   * the exact result in its test). Default true; false: `Math.tanh`.
   */
  fastTanh?: boolean
}

/** A compiled program: its value, its gradient, every stage of the transform, and the JS. */
export interface Compiled {
  program: SourceProgram
  /** the objective: arguments in parameter order */
  value: (...args: unknown[]) => unknown
  /** ⟨value, [∂/∂param for each parameter]⟩ (real-valued programs only) */
  gradient: (...args: unknown[]) => [number, unknown[]]
  /** the reverse transform's stages (UNF, Target UNF, UNF⁻¹, partially evaluated) */
  stages: ReverseStages
  /** the generated JS of the objective and of the gradient */
  source: { value: string; gradient: string }
  ops: OpTable
}

/**
 * Compiles a program `(params) ↦ body`. `params` are `[name, type]` pairs; the body is a source
 * term built with the builder API or parsed from text.
 */
export function compile(params: Array<[string, Type]>, body: Term, options: CompileOptions = {}): Compiled {
  const ops = new OpTable(options.registry)
  const program = defineProgram(params, body, ops)
  if (program.result.kind !== 'R') {
    throw new UnfError(
      'unf/type',
      `a gradient needs a real-valued program, this one returns ${printType(program.result)} (use compileVjp)`,
    )
  }
  const fastExp = options.fastExp ?? true
  const fastTanh = options.fastTanh ?? true
  const value = generate(body, program.params, ops, { fastExp, fastTanh })
  let stages = reverseStages(body, program.params, { k: 'const', value: 1 }, ops)
  if (options.wrt) {
    for (const w of options.wrt)
      if (!params.some(([n]) => n === w))
        throw new UnfError(
          'unf/unbound',
          `wrt: \`${w}\` is not a parameter (parameters: ${params.map(([n]) => n).join(', ')})`,
        )
    const keep = new Set(options.wrt)
    const projected = projectGradient(
      stages.optimized,
      program.params.map((p) => keep.has(p.name)),
    )
    stages = { ...stages, optimized: partialEvaluate(projected) }
  }
  const grad = generate(stages.optimized, program.params, ops, {
    reuseResults: options.reuseResults ?? false,
    fastExp,
    fastTanh,
  })
  return {
    program,
    ops,
    stages,
    value: value.fn,
    gradient: grad.fn as Compiled['gradient'],
    source: { value: value.source, gradient: grad.source },
  }
}

/**
 * Compiles the vector–Jacobian product of a program of any ground result type: the compiled
 * function takes the parameters and then the output cotangent, and returns ⟨value, cotangents⟩.
 */
export function compileVjp(
  params: Array<[string, Type]>,
  body: Term,
  options: CompileOptions = {},
): { fn: (...args: unknown[]) => [unknown, unknown[]]; stages: ReverseStages; source: string } {
  const ops = new OpTable(options.registry)
  const program = defineProgram(params, body, ops)
  const seed = fresh('seed')
  const stages = reverseStages(body, program.params, v(seed), ops)
  const g = generate(stages.optimized, [...program.params, { name: seed, type: cotangentType(program.result) }], ops, {
    fastExp: options.fastExp ?? true,
    fastTanh: options.fastTanh ?? true,
  })
  return { fn: g.fn as (...args: unknown[]) => [unknown, unknown[]], stages, source: g.source }
}

/** ⟨v, ⟨g…⟩⟩ with the unwanted gradients replaced by `undefined` (a zero-size placeholder). */
function projectGradient(t: Term, keep: boolean[]): Term {
  if (t.k === 'let') return { ...t, body: projectGradient(t.body, keep) }
  if (t.k === 'tuple' && t.items.length === 2 && t.items[1]!.k === 'tuple') {
    const g = t.items[1]!
    return {
      k: 'tuple',
      items: [
        t.items[0]!,
        { k: 'tuple', items: g.items.map((x, i) => (keep[i] ? x : ({ k: 'tuple', items: [] } as Term))) },
      ],
    }
  }
  const g = fresh('g')
  return {
    k: 'let',
    name: g,
    value: t,
    body: {
      k: 'tuple',
      items: [
        { k: 'proj', index: 0, of: v(g) },
        {
          k: 'tuple',
          items: keep.map(
            (k, i): Term =>
              k ? { k: 'proj', index: i, of: { k: 'proj', index: 1, of: v(g) } } : { k: 'tuple', items: [] },
          ),
        },
      ],
    },
  }
}

/** Parses a program in the text syntax (`(A: R[]) => sum(A)`) and compiles it. */
export function compileText(text: string, options: CompileOptions = {}): Compiled {
  const { params, body } = parseProgram(text)
  return compile(params, body, options)
}
