/**
 * What the IR → IR passes make of a program: compile it through a backend wrapped so that the
 * program it is handed (after inlining, before and after the passes) is printed, for tests that
 * check a pass applied (or did not) on the programs they run.
 */
import { createRegistry, parse, printFunction, type BackendSpec, type FunctionDef } from '@tenet/ir'
import { inlineSmallCalls, optimize, type PassName } from '@tenet/ir/backend'
import { compileModule } from '@tenet/reversible'

/** Every function of a program and every inverse, printed, by name. */
export interface PrintedProgram {
  functions: Map<string, string>
  inverses: Map<string, string>
}

/** A program as the backend's passes receive it (`inlined`) and as they leave it (`optimised`). */
export interface OptimisedSource {
  inlined: PrintedProgram
  optimised: PrintedProgram
}

/** Options of {@link optimiseSource}. */
export interface OptimiseSourceOptions {
  /** the source's name in error messages (default `program`) */
  name?: string
  /** run only these passes (default: every pass the backend runs with checks off, or on) */
  passes?: readonly PassName[]
  /** compile with run-time checks on (default off): the passes of `CHECKED_PASSES` only */
  checks?: boolean
}

const printAll = (program: { functions: Map<string, FunctionDef> }, inverses: Map<string, FunctionDef>) => ({
  functions: new Map([...program.functions].map(([n, d]) => [n, printFunction(d)])),
  inverses: new Map([...inverses].map(([n, d]) => [n, printFunction(d)])),
})

/**
 * Compiles `source` on `backend` with run-time checks off (or on, `options.checks`) and returns the program the IR passes
 * received and the one they produced, printed. The backend's own compile runs too (its errors
 * propagate), so a test sees the same program the backend generates code from.
 */
export function optimiseSource(
  backend: BackendSpec,
  source: string,
  options: OptimiseSourceOptions = {},
): OptimisedSource {
  let seen: OptimisedSource | undefined
  const capture: BackendSpec = {
    ...backend,
    name: `${backend.name.replace(/\W/g, '_')}_captured`,
    doCompile(checked, inverses, compileOptions) {
      const inlined = inlineSmallCalls(checked, inverses, compileOptions.checks)
      const after = optimize(inlined.program, inlined.inverses, compileOptions, options.passes)
      seen = {
        inlined: printAll(inlined.program, inlined.inverses),
        optimised: printAll(after.program, after.inverses),
      }
      return backend.doCompile(checked, inverses, compileOptions)
    },
  }
  const registry = createRegistry().registerBackend(capture)
  compileModule(parse({ text: source, name: options.name ?? 'program' }), {
    registry,
    backend: capture.name,
    checks: options.checks ?? false,
  })
  if (!seen) throw new Error(`optimiseSource: backend '${backend.name}' compiled no program`)
  return seen
}

/** The optimised IR of function `entry` (default `f`) of `source` on `backend`, printed. */
export function optimisedIr(
  backend: BackendSpec,
  source: string,
  options: OptimiseSourceOptions & { entry?: string } = {},
): string {
  const entry = options.entry ?? 'f'
  const printed = optimiseSource(backend, source, options).optimised.functions.get(entry)
  if (printed === undefined) throw new Error(`optimisedIr: the program has no function '${entry}'`)
  return printed
}
