/**
 * The `tenet` command line: check, print, run and differentiate the functions of a `.tenet`
 * file, and show the JavaScript the cpu backend generates for them. Errors are printed exactly
 * as the library formats them (message, line and caret), on stderr; the exit code is 0 on
 * success, 1 when the program is wrong (a syntax, static or run-time error), 2 when the command
 * line is (unknown command, missing file, bad argument).
 *
 * `main(argv, io)` is the whole program, so it can be tested without spawning a process;
 * `bin.ts` calls it with the real streams.
 */
import { readFileSync } from 'node:fs'
import { TenetError, parse, printFunction, typeToString, withStackGuard, type Registry, type Type } from '@tenet/ir'
import { insertChecksFunction } from '@tenet/ir/backend'
import {
  compileModule,
  generatedCode,
  TENET_FUNCTION,
  type TenetFunction,
  type TenetFunctionInfo,
  type TenetModule,
} from '@tenet/reversible'
import { compileAdjoint, gradient } from '@tenet/ad'
import { createRegistry } from '../rev.js'

/** Where the CLI writes, and how it reads standard input (for the file name `-`). */
export interface CliIO {
  stdout(text: string): void
  stderr(text: string): void
  readStdin(): string
}

/** `--help` */
export const HELP = `tenet — check, print, run and differentiate Tenet programs

usage:
  tenet check <file>                      parse and check every function (compiles on the interpreter)
  tenet print <fn> <file> [--inverse | --adjoint] [--checks]
                                          print a function, its inverse, or its adjoint (the gradient
                                          program) in Tenet syntax; with --checks, the core IR with
                                          the run-time checks every engine runs (\`assert\`)
  tenet run <fn> <file> [--inverse] -- <arg>...
                                          run a function forwards (or backwards) and print its results
  tenet grad <fn> <file> --loss <param> -- <arg>...
                                          the gradient of the scalar parameter <param> (a name or a
                                          0-based index) with respect to every float argument
  tenet js <fn> <file> [--inverse]        the JavaScript the cpu backend generates for a function

options:
  --backend cpu|interpreter|wasm          where run and grad execute (default cpu; wasm needs the
                                          @tenet/backend-wasm package installed)
  --no-checks                             compile without run-time reversibility checks
  --json                                  print results as one JSON object
  -h, --help                              this text

<file> may be - for standard input. Each <arg> is a number, true/false, a JSON array (an array
argument: [1, 2.5, 3]) or a JSON object {"re": 1, "im": 2} (a complex scalar). NaN, Infinity
and -Infinity are accepted as numbers.

exit codes: 0 success, 1 the program is wrong (syntax, static or run-time error), 2 usage error.`

class UsageError extends Error {}

interface Parsed {
  command: string
  positional: string[]
  flags: Map<string, string | true>
  values: string[]
}

const VALUED = new Set(['--backend', '--loss'])
const FLAGS = new Set(['--inverse', '--adjoint', '--checks', '--no-checks', '--json', '--help', '-h', ...VALUED])

function parseArgv(argv: readonly string[]): Parsed {
  const dash = argv.indexOf('--')
  const head = dash < 0 ? argv : argv.slice(0, dash)
  const values = dash < 0 ? [] : argv.slice(dash + 1)
  const flags = new Map<string, string | true>()
  const positional: string[] = []
  for (let i = 0; i < head.length; i++) {
    const a = head[i]!
    if (a.startsWith('-') && a !== '-') {
      const [name, inline] = a.includes('=')
        ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]
        : [a, undefined]
      if (!FLAGS.has(name)) throw new UsageError(`unknown option ${name}`)
      if (VALUED.has(name)) {
        const v = inline ?? head[++i]
        if (v === undefined) throw new UsageError(`${name} needs a value`)
        flags.set(name, v)
      } else flags.set(name, true)
    } else positional.push(a)
  }
  return { command: positional[0] ?? '', positional: positional.slice(1), flags, values }
}

/** Reads and compiles a file. */
async function load(file: string, io: CliIO, options: { backend: string; checks: boolean }): Promise<TenetModule> {
  let text: string
  try {
    text = file === '-' ? io.readStdin() : readFileSync(file, 'utf8')
  } catch (e) {
    throw new UsageError(`cannot read ${file}: ${(e as Error).message}`)
  }
  const registry: Registry = createRegistry()
  if (options.backend === 'wasm') {
    try {
      const { wasmBackend } = (await import('@tenet/backend-wasm' as string)) as {
        wasmBackend: Parameters<Registry['registerBackend']>[0]
      }
      registry.registerBackend(wasmBackend)
    } catch {
      throw new UsageError('--backend wasm needs the @tenet/backend-wasm package (npm i @tenet/backend-wasm)')
    }
  } else if (options.backend !== 'cpu' && options.backend !== 'interpreter') {
    throw new UsageError(`unknown backend \`${options.backend}\` (available: cpu, interpreter, wasm)`)
  }
  return withStackGuard(`compiling ${file === '-' ? '<stdin>' : file}`, () =>
    compileModule(parse({ text, name: file === '-' ? '<stdin>' : file }), {
      registry,
      backend: options.backend,
      checks: options.checks,
    }),
  )
}

function fnOf(m: TenetModule, name: string | undefined): TenetFunction {
  if (!name) throw new UsageError('name the function (see tenet --help)')
  const f = Object.hasOwn(m, name) ? m[name] : undefined
  if (!f) throw new UsageError(`no function \`${name}\` in the file (it has: ${Object.keys(m).join(', ') || 'none'})`)
  return f
}

const ARRAYS: Record<string, (xs: number[]) => unknown> = {
  f64: (xs) => Float64Array.from(xs),
  f32: (xs) => Float32Array.from(xs),
  i32: (xs) => Int32Array.from(xs),
  bool: (xs) => Uint8Array.from(xs, (x) => (x ? 1 : 0)),
}

/** A command-line value for a parameter of type `t`. */
function argValue(text: string, t: Type, name: string): unknown {
  let v: unknown
  const special: Record<string, number> = { NaN: Number.NaN, Infinity: Infinity, '-Infinity': -Infinity }
  if (text in special) v = special[text]
  else {
    try {
      v = JSON.parse(text.replace(/\b(-?Infinity|NaN)\b/g, '"$1"'), (_k, x) =>
        typeof x === 'string' && x in special ? special[x] : x,
      )
    } catch {
      throw new UsageError(
        `argument \`${name}\`: cannot read ${JSON.stringify(text)} (a number, true/false, a JSON array or {"re": …, "im": …})`,
      )
    }
  }
  if (t.kind === 'array') {
    if (
      !Array.isArray(v) ||
      !v.every((x) => typeof x === 'number' || typeof x === 'boolean' || (typeof x === 'object' && x !== null))
    ) {
      throw new UsageError(
        `argument \`${name}\` is an array (${typeToString(t)}): write it as a JSON array, e.g. [1, 2, 3]`,
      )
    }
    const make = ARRAYS[t.elem]
    if (make && v.every((x) => typeof x !== 'object')) return make(v.map(Number))
    return v
  }
  return v
}

/** Formats one value for output (typed arrays as lists; numbers as JS prints them). */
function show(v: unknown): string {
  if (ArrayBuffer.isView(v))
    return `[${Array.from(v as unknown as ArrayLike<number>)
      .map(show)
      .join(', ')}]`
  if (Array.isArray(v)) return `[${v.map(show).join(', ')}]`
  if (typeof v === 'number') return Object.is(v, -0) ? '-0' : String(v)
  if (v && typeof v === 'object')
    return `{ ${Object.entries(v)
      .map(([k, x]) => `${k}: ${show(x)}`)
      .join(', ')} }`
  return String(v)
}

/** A JSON-safe copy (typed arrays as arrays, non-finite numbers as strings). */
function jsonSafe(v: unknown): unknown {
  if (ArrayBuffer.isView(v)) return Array.from(v as unknown as ArrayLike<number>).map(jsonSafe)
  if (Array.isArray(v)) return v.map(jsonSafe)
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v)
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, jsonSafe(x)]))
  return v
}

function output(io: CliIO, json: boolean, entries: Array<[string, unknown]>): void {
  if (json) io.stdout(`${JSON.stringify(Object.fromEntries(entries.map(([k, v]) => [k, jsonSafe(v)])))}\n`)
  else io.stdout(entries.map(([k, v]) => `${k} = ${show(v)}\n`).join(''))
}

function params(f: TenetFunction): Array<{ name: string; type: Type }> {
  return (f[TENET_FUNCTION] as TenetFunctionInfo).surface.params
}

function argsFor(f: TenetFunction, values: string[]): unknown[] {
  const ps = params(f)
  if (values.length !== ps.length) {
    throw new UsageError(
      `\`${(f[TENET_FUNCTION] as TenetFunctionInfo).name}\` takes ${ps.length} argument${ps.length === 1 ? '' : 's'} (${ps.map((p) => `${p.name}: ${typeToString(p.type)}`).join(', ')}), got ${values.length}: pass them after --`,
    )
  }
  return values.map((text, i) => argValue(text, ps[i]!.type, ps[i]!.name))
}

async function run(argv: readonly string[], io: CliIO): Promise<number> {
  const p = parseArgv(argv)
  if (p.flags.has('--help') || p.flags.has('-h') || p.command === 'help') {
    io.stdout(`${HELP}\n`)
    return 0
  }
  if (!p.command) {
    io.stderr(`${HELP}\n`)
    return 2
  }
  const backend = String(p.flags.get('--backend') ?? 'cpu')
  const checks = !p.flags.has('--no-checks')
  const json = p.flags.has('--json')
  switch (p.command) {
    case 'check': {
      const [file, extra] = p.positional
      if (!file || extra !== undefined) throw new UsageError('usage: tenet check <file>')
      const m = await load(file, io, { backend: 'interpreter', checks: true })
      const names = Object.keys(m)
      io.stdout(`ok: ${names.length} function${names.length === 1 ? '' : 's'} (${names.join(', ')})\n`)
      return 0
    }
    case 'print': {
      const [name, file] = p.positional
      if (!file) throw new UsageError('usage: tenet print <fn> <file> [--inverse | --adjoint]')
      if (p.flags.has('--inverse') && p.flags.has('--adjoint'))
        throw new UsageError('--inverse and --adjoint exclude each other')
      if (p.flags.has('--checks') && (p.flags.has('--adjoint') || !checks))
        throw new UsageError('--checks excludes --adjoint and --no-checks')
      const f = fnOf(await load(file, io, { backend: 'interpreter', checks }), name)
      const shown = p.flags.has('--inverse') ? f.inverse : f
      const text = p.flags.has('--checks')
        ? printFunction(insertChecksFunction(shown.ir, (shown[TENET_FUNCTION] as TenetFunctionInfo).program))
        : p.flags.has('--adjoint')
          ? compileAdjoint(f).adjoint.source
          : p.flags.has('--inverse')
            ? f.inverse.source
            : f.source
      io.stdout(`${text}\n`)
      return 0
    }
    case 'run': {
      const [name, file] = p.positional
      if (!file) throw new UsageError('usage: tenet run <fn> <file> [--inverse] -- <arg>...')
      const f0 = fnOf(await load(file, io, { backend, checks }), name)
      const f = p.flags.has('--inverse') ? f0.inverse : f0
      const results = f(...argsFor(f, p.values))
      output(
        io,
        json,
        params(f).map((q, i) => [q.name, results[i]]),
      )
      return 0
    }
    case 'grad': {
      const [name, file] = p.positional
      if (!file) throw new UsageError('usage: tenet grad <fn> <file> --loss <param> -- <arg>...')
      const f = fnOf(await load(file, io, { backend, checks }), name)
      const lossText = p.flags.get('--loss')
      if (typeof lossText !== 'string')
        throw new UsageError('grad needs --loss <param>: the scalar parameter that holds the loss')
      const ps = params(f)
      const loss = /^\d+$/.test(lossText) ? Number(lossText) : ps.findIndex((q) => q.name === lossText)
      if (loss < 0 || loss >= ps.length)
        throw new UsageError(`--loss ${lossText}: no such parameter (parameters: ${ps.map((q) => q.name).join(', ')})`)
      const g = gradient(f, argsFor(f, p.values), { loss })
      output(
        io,
        json,
        ps.flatMap(
          (q, i): Array<[string, unknown]> =>
            g[i] === null || g[i] === undefined ? [] : [[`d${ps[loss]!.name}/d${q.name}`, g[i]]],
        ),
      )
      return 0
    }
    case 'js': {
      const [name, file] = p.positional
      if (!file) throw new UsageError('usage: tenet js <fn> <file> [--inverse]')
      const f = fnOf(await load(file, io, { backend: 'cpu', checks }), name)
      const code = generatedCode(p.flags.has('--inverse') ? f.inverse : f)
      if (code === undefined) throw new UsageError('the cpu backend kept no source for this function')
      io.stdout(`${code}\n`)
      return 0
    }
    default:
      throw new UsageError(`unknown command \`${p.command}\` (commands: check, print, run, grad, js; see tenet --help)`)
  }
}

/**
 * Runs the CLI on `argv` (the arguments after the program name) and returns the exit code:
 * 0 success, 1 a Tenet error in the program, 2 a usage error. Never throws.
 */
export async function main(argv: readonly string[], io: CliIO): Promise<number> {
  try {
    return await run(argv, io)
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr(`tenet: ${e.message}\n`)
      return 2
    }
    if (TenetError.isInstance(e)) {
      io.stderr(`${(e as Error).message}\n`)
      return 1
    }
    io.stderr(`tenet: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`)
    return 1
  }
}
