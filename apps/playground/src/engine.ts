/**
 * What the playground computes, without the page: compile a source on a backend, print the
 * inverse and the adjoint, run a function forwards or backwards on arguments typed as text,
 * take a gradient and check it against finite differences, draw the memory-oriented graph and
 * a checkpointing schedule. Every failure comes back as text (a Tenet error's message carries
 * its line and caret), never as an exception.
 */
import {
  TENET_FUNCTION,
  bennettGradientSchedule,
  binomialSchedule,
  checkGrad,
  compileAdjoint,
  costOf,
  createRegistry,
  gradient,
  rev,
  scheduleSvg,
  TenetError,
  type TenetFunction,
  type TenetModule,
} from 'tenet'
import type { FunctionDef, Type } from '@tenet/ir'
import { memoryGraphSvg } from './graph.js'

/** Where programs run: `auto` is cpu where code generation is allowed, the interpreter elsewhere. */
export type BackendChoice = 'auto' | 'cpu' | 'interpreter' | 'wasm'

let evalOk: boolean | undefined
/** Whether this page may generate code (`new Function`): false under a strict CSP. */
export function codeGenerationAllowed(): boolean {
  if (evalOk === undefined) {
    try {
      evalOk = typeof new Function('return 1') === 'function'
    } catch {
      evalOk = false
    }
  }
  return evalOk
}

/** The backend `choice` resolves to here. */
export function resolveBackend(choice: BackendChoice): 'cpu' | 'interpreter' | 'wasm' {
  return choice === 'auto' ? (codeGenerationAllowed() ? 'cpu' : 'interpreter') : choice
}

/** The result of compiling a source. */
export type Compiled =
  | { ok: true; module: TenetModule; names: string[]; backend: string }
  | { ok: false; error: string; line?: number; column?: number }

/** A message for any thrown value: a Tenet error's own (with its caret), or the JS error's. */
export function describeError(e: unknown): string {
  if (TenetError.isInstance(e)) return (e as Error).message
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e)
}

/** Compiles `source` on the chosen backend (`wasm` is loaded on request). */
export async function compileSource(source: string, choice: BackendChoice): Promise<Compiled> {
  const backend = resolveBackend(choice)
  try {
    let tag = rev.with({ backend })
    if (backend === 'wasm') {
      const { wasmBackend } = await import('@tenet/backend-wasm')
      tag = rev.with({ backend, registry: createRegistry().registerBackend(wasmBackend) })
    }
    const module = tag([source] as unknown as TemplateStringsArray)
    return { ok: true, module, names: Object.keys(module), backend }
  } catch (e) {
    const err = e as { line?: number; column?: number }
    return {
      ok: false,
      error: describeError(e),
      ...(typeof err.line === 'number' ? { line: err.line, column: err.column } : {}),
    }
  }
}

const info = (f: TenetFunction) => f[TENET_FUNCTION] as { surface: FunctionDef; name: string }

/** The parameters of a function as written. */
export function paramsOf(f: TenetFunction): Array<{ name: string; type: Type; text: string }> {
  return info(f).surface.params.map((p) => ({
    name: p.name,
    type: p.type,
    text:
      p.type.kind === 'scalar' ? p.type.name : p.type.kind === 'array' ? `${p.type.elem}[]` : `stack<${p.type.elem}>`,
  }))
}

/** Printed inverse and adjoint of a function (or why there is none). */
export function printed(f: TenetFunction): { inverse: string; adjoint: string } {
  let adjoint: string
  try {
    adjoint = compileAdjoint(f).adjoint.source
  } catch (e) {
    adjoint = `// no adjoint: ${describeError(e)}`
  }
  return { inverse: f.inverse.source, adjoint }
}

const typedArrays: Record<string, (xs: number[]) => unknown> = {
  'f64[]': (xs) => new Float64Array(xs),
  'f32[]': (xs) => new Float32Array(xs),
  'i32[]': (xs) => new Int32Array(xs),
  'bool[]': (xs) => new Uint8Array(xs.map((x) => (x ? 1 : 0))),
}

/** Reads the argument fields: JSON numbers, booleans, arrays (NaN and Infinity allowed). */
export function readArgs(f: TenetFunction, texts: string[]): unknown[] {
  return paramsOf(f).map((p, i) => {
    const text = (texts[i] ?? '').trim()
    let v: unknown
    try {
      v = JSON.parse(
        text.replace(/-?Infinity|NaN/g, (m) => `"${m}"`),
        (_k, x) => (x === 'NaN' ? Number.NaN : x === 'Infinity' ? Infinity : x === '-Infinity' ? -Infinity : x),
      )
    } catch {
      throw new Error(`${p.name}: cannot read "${text}" (a number, true/false, [1, 2, 3] or {"re": 1, "im": 0})`)
    }
    const make = typedArrays[p.text]
    if (make) {
      if (!Array.isArray(v)) throw new Error(`${p.name}: an array (${p.text}) is written [1, 2, 3]`)
      return make(v as number[])
    }
    if (p.text.endsWith('[]') && Array.isArray(v)) return new Float64Array(v as number[])
    return v
  })
}

/** Formats values for the results panel. */
export function formatValue(v: unknown): string {
  if (ArrayBuffer.isView(v))
    return `[${Array.from(v as unknown as ArrayLike<number>)
      .map(formatValue)
      .join(', ')}]`
  if (Array.isArray(v)) return `[${v.map(formatValue).join(', ')}]`
  if (typeof v === 'number')
    return Object.is(v, -0) ? '-0' : Number.isInteger(v) ? String(v) : v.toPrecision(12).replace(/\.?0+(e|$)/, '$1')
  if (v && typeof v === 'object')
    return `{ ${Object.entries(v)
      .map(([k, x]) => `${k}: ${formatValue(x)}`)
      .join(', ')} }`
  return String(v)
}

/** Runs `f` (or its inverse) on the argument texts: `name = value` lines, or the error. */
export function runFunction(
  f: TenetFunction,
  texts: string[],
  inverse: boolean,
): { ok: boolean; text: string; values?: unknown[] } {
  try {
    const args = readArgs(f, texts)
    const out = (inverse ? f.inverse : f)(...args)
    return {
      ok: true,
      values: out,
      text: paramsOf(f)
        .map((p, i) => `${p.name} = ${formatValue(out[i])}`)
        .join('\n'),
    }
  } catch (e) {
    return { ok: false, text: describeError(e) }
  }
}

/** The gradient of the scalar parameter `loss` and its finite-difference check. */
export function gradientOf(
  f: TenetFunction,
  texts: string[],
  loss: number,
): { ok: boolean; text: string; fdOk?: boolean } {
  try {
    const args = readArgs(f, texts)
    const g = gradient(f, args, { loss })
    const ps = paramsOf(f)
    const lines = ps.flatMap((p, i) =>
      g[i] === null || g[i] === undefined ? [] : [`∂${ps[loss]!.name}/∂${p.name} = ${formatValue(g[i])}`],
    )
    const check = checkGrad(f, args, { loss })
    lines.push(
      '',
      check.ok
        ? `finite differences agree (largest difference ${check.maxError.toExponential(2)})`
        : `finite differences DISAGREE: largest difference ${check.maxError.toExponential(2)} at argument ${check.worst?.arg}, element ${check.worst?.index} (AD ${check.worst?.ad}, FD ${check.worst?.fd})`,
    )
    return { ok: true, text: lines.join('\n'), fdOk: check.ok }
  } catch (e) {
    return { ok: false, text: describeError(e) }
  }
}

/** The memory-oriented graph of a function, as SVG. */
export function graphOf(f: TenetFunction): string {
  return memoryGraphSvg(info(f).surface)
}

/** A checkpointing schedule for a chain of `steps` steps, as SVG with its cost. */
export function scheduleOf(
  kind: 'bennett' | 'revolve',
  steps: number,
  parameter: number,
): { svg: string; cost: string } {
  const s =
    kind === 'bennett'
      ? bennettGradientSchedule({ steps, k: Math.max(2, parameter) })
      : binomialSchedule({ steps, snapshots: Math.max(1, parameter) })
  const c = costOf(s)
  return {
    svg: scheduleSvg(s, { width: 640, height: 280 }),
    cost: `${c.forward} forward, ${c.uncompute} uncompute, ${c.adjoint} adjoint steps; at most ${c.peakStates} states held (store-all: ${steps + 1})`,
  }
}
