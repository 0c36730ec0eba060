/**
 * The plugin interfaces (`specificationVersion: 'v1'`) between Tenet's core and its
 * extensions: primitives, number systems and backends. The standard library registers itself
 * through exactly these interfaces.
 */
import type { Expr, FunctionDef, ScalarTypeName, Type } from './ast.js'
import type { Registry } from './registry.js'

/**
 * A native WebAssembly float instruction, applied in the primitive's float type (f64 or f32). The
 * comparisons (`'eq'`, `'ne'`, `'lt'`, `'gt'`, `'le'`, `'ge'`) leave 1 or 0 in that float type (0
 * where an operand is NaN, except `'ne'`).
 */
export type WasmFloatOp =
  | 'sqrt'
  | 'abs'
  | 'neg'
  | 'floor'
  | 'ceil'
  | 'trunc'
  | 'nearest'
  | 'min'
  | 'max'
  | 'copysign'
  | 'add'
  | 'sub'
  | 'mul'
  | 'div'
  | 'eq'
  | 'ne'
  | 'lt'
  | 'gt'
  | 'le'
  | 'ge'

/**
 * A function of the wasm backend's math library (elementary functions the backend provides in
 * the module, or, where it has no such function, by calling the JS `Math` function of the
 * same name).
 */
export type WasmMathFunction =
  | 'sin'
  | 'cos'
  | 'tan'
  | 'exp'
  | 'log'
  | 'pow'
  | 'atan'
  | 'atan2'
  | 'asin'
  | 'acos'
  | 'sinh'
  | 'cosh'
  | 'tanh'

/**
 * The instruction builder the wasm backend hands to a primitive's `emit.wasm` function. It is a
 * stack machine: `arg` and `const` push a value, `op` and `math` consume their operands and
 * push the result. Every value has the float type `type`.
 */
export interface WasmEmitter {
  /** The float type of the arguments and of the results (`'f64'` or `'f32'`). */
  readonly type: 'f64' | 'f32'
  /** Pushes argument k. */
  arg(k: number): void
  /** Pushes a constant. */
  const(x: number): void
  /** Applies a native float instruction to the top value (unary) or the top two (binary). */
  op(name: WasmFloatOp): void
  /** Applies the backend's math-library function `name` to the top value(s) (two for `pow`, `atan2`). */
  math(name: WasmMathFunction): void
}

/**
 * A pure primitive's wasm lowering: a native instruction applied to its arguments (`'sqrt'`,
 * `'abs'`, `'min'`, … or `'identity'`), a math-library function applied to them
 * (`{ math: 'sin' }`), or a function that builds the value with a `WasmEmitter` (it must leave
 * exactly one value). Used when the arguments and the result share one float type; otherwise,
 * and without a lowering, the backend calls `evaluate` as an imported JS function.
 */
export type PureWasmLowering = WasmFloatOp | 'identity' | { math: WasmMathFunction } | ((w: WasmEmitter) => void)

/**
 * A bijection's wasm lowering: `{ permute: [j…] }` when the new value of the k-th `inout`
 * argument is argument `permute[k]` (SWAP: `[1, 0]`, any type), or a function that pushes the new
 * values of the `inout` arguments in order with a `WasmEmitter` (used when every argument has the
 * same float type). Otherwise the backend calls `apply` as an imported JS function.
 */
export type BijectionWasmLowering = { permute: number[] } | ((w: WasmEmitter) => void)

/** Code emitters of a pure primitive, one per backend that has a native lowering. */
export interface PureEmitters {
  /** JS expression computing the value from argument expressions (cpu backend). */
  cpu?: (...args: string[]) => string
  /** WGSL expression (webgpu backend, f32). */
  wgsl?: (...args: string[]) => string
  /** WebAssembly lowering (wasm backend): see `PureWasmLowering`. */
  wasm?: PureWasmLowering
}

/**
 * A partial derivative that no expression writes (a piecewise one: ∂abs, ∂min, ∂max): a scalar
 * function of the primitive's arguments, which `@tenet/ad` registers as a helper pure primitive
 * and calls from the derivative code (no allocation per call).
 */
export interface PartialFunction {
  evaluate: (...args: number[]) => number
  /** Lowerings of the helper (without one, a backend calls `evaluate`). */
  emit?: PureEmitters
  /**
   * The helper's own partial derivatives over the same arguments (second order: forward mode
   * through a gradient that calls it). Absent: forward-over-reverse through it is an error that
   * names the primitive.
   */
  partialExprs?: (args: Expr[]) => Expr[]
}

/**
 * The Taylor-mode rule of a pure primitive z = f(x₁, …, xₙ): how `@tenet/ad` propagates a
 * univariate truncated power series x(t) = x₀ + x₁t + … + x_k t^k through it. Both kinds are
 * written over placeholder expressions, like `partialExprs`; the builders (`unary`, `binary`,
 * `pure`) make them from Tenet text (`taylor: { ode: ['y'] }` for exp).
 * - `ode`: z′ = Σᵢ ψᵢ · xᵢ′, with each ψᵢ an expression of the arguments and of the result z
 *   (exp: ψ = z; tan: ψ = 1 + z²; log: ψ = 1/x). The series of the ψᵢ are themselves
 *   propagated, and z's coefficients follow from z_j = (1/j) Σᵢ Σ_{m=1..j} m·(xᵢ)_m·(ψᵢ)_{j−m};
 *   a ψ that calls f on the same arguments reads z's own series, and sin and cos, whose ψ read
 *   each other, share theirs (the pair's recurrence).
 * - `expression`: f equals this expression of its arguments along any line (pow: `x ** p`,
 *   identity: `x`): its series is the expression's.
 * Without a rule, Taylor mode takes the `ode` whose ψᵢ are the primitive's `partialExprs`, so a
 * primitive with partials written as expressions needs none.
 */
export type PureTaylorRule =
  | { kind: 'ode'; derivatives: (args: Expr[], result: Expr) => Expr[] }
  | { kind: 'expression'; expression: (args: Expr[]) => Expr }

/**
 * The Taylor-mode rule of a bijection: the new value of each `inout` argument as an expression
 * of the old values of all its arguments (ROT: `cos(t) * a - sin(t) * b`, `sin(t) * a + cos(t) *
 * b`), over placeholder expressions like `partialExprs`. `@tenet/ad` propagates the series of
 * these expressions; where a new value is the old one plus or minus an expression of the `in`
 * arguments (AddConst, INC, sincos), it updates the coefficients in place; otherwise it runs the
 * inverse bijection's rule backwards to free the old coefficients, so the inverse needs one too.
 * `linear`: the new values are linear in the `inout` arguments, so where the `in` arguments do
 * not vary along the line, each coefficient is mapped by the bijection itself (ROT by a constant
 * angle). A `selfAdjoint` bijection needs no rule.
 */
export interface BijectionTaylorRule {
  map: (args: Expr[]) => Expr[]
  linear?: boolean
}

/**
 * A pure primitive `f`, usable in expressions (`y += f(x, ...)`). Its derivative information
 * sits beside its forward formula: `partials(x...)` returns ∂f/∂xᵢ for each argument.
 */
export interface PurePrimitiveSpec {
  specificationVersion: 'v1'
  name: string
  kind: 'pure'
  /** Number of arguments. */
  arity: number
  /** Reference semantics on JS numbers (the interpreter; the cpu fallback when `emit.cpu` is absent). */
  evaluate: (...args: number[]) => number
  /** Local partial derivatives ∂f/∂argᵢ at the given point (for `y += f(args)` adjoints). */
  partials?: (...args: number[]) => number[]
  /**
   * The partial derivatives as Tenet expressions over the argument expressions, so the adjoint
   * and tangent transforms emit straight-line code, and second derivatives (Hessians, forward
   * mode through a gradient) exist (preferred over `partials` when present). An entry may be a
   * `PartialFunction` where no expression writes the partial. `pure`/`unary`/`binary` build it
   * from partials written as Tenet expression text.
   */
  partialExprs?: (args: Expr[]) => Array<Expr | PartialFunction>
  /**
   * The Taylor-mode rule (see `PureTaylorRule`). Absent: Taylor mode derives one from
   * `partialExprs`; a primitive with neither cannot be Taylor-propagated (an error naming it).
   */
  taylor?: PureTaylorRule
  /**
   * Result type from argument types; return a string starting with `error:` to reject. The
   * default accepts f64/f32 arguments (integer literals coerce) and returns the float type.
   */
  signature?: (argTypes: ScalarTypeName[]) => ScalarTypeName | `error:${string}`
  /**
   * Which arguments are whole arrays (`'array'`: an `f64[]` passed by name, as `det(A)`); the
   * others are scalars. An array argument reaches `evaluate` and `partials` as the Float64Array
   * itself, and `partials` returns, at its position, a Float64Array of ∂f/∂A[i] (one per element).
   * Default: all scalar. Build such a spec with `arrayPrimitive`, which types both.
   */
  argKinds?: ReadonlyArray<'scalar' | 'array'>
  /** Native lowerings per backend. */
  emit?: PureEmitters
  /** Replace an existing primitive of the same name. */
  override?: boolean
  /** One line for docs and error messages. */
  description?: string
}

/** Emitters of a bijection: expressions for the new values of its `inout` arguments. */
export interface BijectionEmitters {
  cpu?: (...args: string[]) => string[]
  wgsl?: (...args: string[]) => string[]
  /** WebAssembly lowering (wasm backend): see `BijectionWasmLowering`. */
  wasm?: BijectionWasmLowering
}

/**
 * A bijective primitive called as a statement (`SWAP(a, b)`, `ROT(a, b, θ)`). Arguments with
 * role `inout` are updated; `in` arguments are only read.
 */
export interface BijectionSpec {
  specificationVersion: 'v1'
  name: string
  kind: 'bijection'
  roles: Array<'inout' | 'in'>
  /** Required type of each argument (default: any one numeric type shared by all). */
  types?: Array<ScalarTypeName | 'numeric' | 'float' | 'integer'>
  /** New values of the `inout` arguments, in order, given all arguments. */
  apply: (...args: number[]) => number[]
  /** `'self'` for an involution, otherwise the name of the registered inverse bijection. */
  inverse: 'self' | string
  /**
   * The adjoint rule, as a reversible snippet in Tenet syntax over the argument names given in
   * `adjoint.params` (one per argument, in order) plus a gradient name `g_<param>` for each
   * floating-point argument. During the backward sweep the AD transform first restores the
   * values by running the inverse bijection, then runs the snippet: it reads the restored values
   * (the bijection's inputs; `adjointReads: 'new'` runs it before the restore instead, on the
   * outputs) and must update only the gradients, turning the gradients of the outputs (`g_<inout>`) into
   * those of the inputs and accumulating (`+=`) into the gradients of `in` arguments. The snippet
   * may allocate and deallocate its own ancillas; one allocated from a float literal without a
   * declared type (`s <- 0.0`) takes the gradients' float type at the call (f32 where they are
   * all f32, else f64). `@tenet/ad` compiles it once per argument-type
   * combination into a helper function `$adj$<NAME>$<types>(params…, g_params…)` and calls it
   * (see DESIGN §6). Example, ROT(a, b, t) on the old values:
   * `g_t += g_b * (cos(t) * a - sin(t) * b) - g_a * (sin(t) * a + cos(t) * b)` then
   * `IROT(g_a, g_b, t)`; on the new ones (`adjointReads: 'new'`, the stdlib's form):
   * `g_t += g_b * a - g_a * b` then `IROT(g_a, g_b, t)`.
   */
  adjoint?: { params: string[]; source: string }
  /**
   * Which values of the `inout` arguments the adjoint snippet reads: `'old'` (the default), the
   * inputs of the bijection, restored before the snippet runs; or `'new'`, its outputs, the
   * values the forward sweep left, with the snippet run first and the values restored after it.
   * A rule that is simplest in the outputs saves recomputing them: ROT's ∂a′/∂θ = −b′ and
   * ∂b′/∂θ = a′ are the outputs themselves, so by the outputs it costs two products where by
   * the inputs it recomputes the rotation. Every backend runs the same rule, so they agree
   * exactly either way.
   */
  adjointReads?: 'old' | 'new'
  /**
   * The tangent (forward-mode) rule, as a snippet in Tenet syntax over the argument names in
   * `tangent.params` plus a tangent name `t_<param>` for each argument. It runs after the
   * bijection, reading the arguments' new values, and must turn the tangents of the `inout`
   * arguments (`t_<inout>`, which hold the tangents of the old values) into those of the new
   * values; the tangents of `in` arguments are read-only. The forward transform substitutes
   * the arguments into it, so it costs what the statements cost; ancillas it allocates hold
   * tangents (they take the tangent type), and it reads the arguments in the tangent type (f32
   * where the tangents are f32, else f64, fixed point read as its real value). Forward mode, `jvp`, Hessians and `hvp` through
   * the bijection need it. Example, ROT(a, b, t): `ROT(t_a, t_b, t)`, `t_a -= b * t_t`,
   * `t_b += a * t_t`.
   */
  tangent?: { params: string[]; source: string }
  /**
   * The bijection is linear in its arguments (all `inout`) and its own transpose (SWAP, NEG,
   * HADAMARD): its tangent applies it to the tangents, and its adjoint (after the values are
   * restored) to the gradients. No `adjoint` or `tangent` snippet is needed.
   */
  selfAdjoint?: boolean
  /** The Taylor-mode rule (see `BijectionTaylorRule`); a `selfAdjoint` bijection needs none. */
  taylor?: BijectionTaylorRule
  emit?: BijectionEmitters
  override?: boolean
  description?: string
}

export type PrimitiveSpec = PurePrimitiveSpec | BijectionSpec

/** A number system: the scalar representation and which updates are bijections in it. */
export interface NumberSystemSpec {
  specificationVersion: 'v1'
  /** The type name used in Tenet source (`f64`, `fixed`, `ulog`, ...). */
  name: string
  /** Which update operators are bijective (reversible) on this type. */
  bijectiveUpdates: Array<'+=' | '-=' | '^=' | '*=' | '/='>
  /** Why an update that is not bijective is rejected (shown in the static error). */
  rejectUpdate?: (op: string) => string
  /** Whether deallocation checks compare exactly (true) or with the float tolerance. */
  exact: boolean
  /** Whether values are floating point (for `/`, transcendental functions and AD). */
  float: boolean
  /** Whether it is an integer type (`%`, `div`, bit operations, loop bounds). */
  integer?: boolean
  /** Typed-array constructor for arrays of this type at the host boundary. */
  arrayType: 'Float64Array' | 'Float32Array' | 'Int32Array' | 'Uint8Array'
  /** Converts a host number into the internal representation (e.g. rounding to the grid). */
  fromHost?: (x: number) => number
  /**
   * Whether the elements of a host array of `arrayType` are already in the internal
   * representation (`fromHost` is the identity on them, as `x | 0` is on an Int32Array), so
   * host arrays need no element-wise conversion. Default false.
   */
  hostArraysExact?: boolean
  /** Converts the internal representation into a host number. */
  toHost?: (x: number) => number
  /**
   * Rounds the result of arithmetic into the representation (f32: `Math.fround`), applied on
   * every write of an update result and to every arithmetic result of this type. It may throw
   * (fixed-point overflow). Without `cpu`, the cpu backend calls `evaluate` through its runtime table.
   */
  round?: { evaluate: (x: number) => number; cpu?: (x: string) => string }
  /**
   * Arithmetic on representations that are not the value itself (logarithmic, tropical): the
   * binary operators this type allows in expressions and what they compute on representations.
   * Comparisons compare representations directly, so an encoding must preserve order. For `**`
   * the exponent arrives as a plain number (an i32 or f64 expression, or this type decoded).
   */
  arithmetic?: {
    ops: Array<'+' | '-' | '*' | '/' | '**'>
    /** Why another operator is rejected (static error). */
    reject?: (op: string) => string
    binary: (op: string, a: number, b: number) => number
    /** Unary minus on the representation; absent means unary minus is rejected. */
    negate?: (a: number) => number
  }
  /** `*=`/`/=` (the updates other than `+=`, `-=`, `^=`) on representations: the new target value. */
  update?: (op: string, a: number, b: number) => number
  /** A JS expression for `update` (cpu backend); without it the runtime table calls `update`. */
  emitUpdate?: { cpu?: (op: string, a: string, b: string) => string }
  /**
   * Set by fixed-point formats (`@tenet/numbers`' `fixedPoint`): every value is an integer multiple
   * of 2^−fractionBits with |x| < 2^integerBits, so a backend without f64 (webgpu) can hold it as
   * that integer, and `+=`/`-=` stay exact there.
   */
  fixedPoint?: { fractionBits: number; integerBits: number }
  /** Named scalar fields (`t.log`), their types; read with `getField`, written with `setField`. */
  fields?: Record<string, ScalarTypeName>
  getField?: (v: number, field: string) => number
  /**
   * Each field as an f64 expression of the value's real value, for differentiation: AD reads
   * `x.f` as `realFields.f(f64(x))` (ulog: `x.log` is log|x|). Fields without one cannot be
   * differentiated through.
   */
  realFields?: Record<string, (real: Expr) => Expr>
  setField?: (v: number, field: string, x: number) => number
  /**
   * Rewrites this type away before checking (complex → pairs of f64), so that backends and AD
   * see only the types it lowers to. See `NumberSystemLowering`.
   */
  lowering?: NumberSystemLowering
  override?: boolean
  description?: string
}

/**
 * A lowering of a number system into other types, run by the front door (`compileModule`)
 * after routine expansion and before `check()`. The host-boundary hooks map one argument of the
 * lowered type to the positional arguments of the lowered function and back.
 */
export interface NumberSystemLowering {
  /** Rewrites functions (core IR, untyped) so that no value of the lowered type remains. */
  lower: (functions: FunctionDef[], registry: Registry) => FunctionDef[]
  /** How many positional arguments one parameter of this type becomes (scalar and array). */
  arity: (type: Type) => number
  /** One host argument → its positional arguments (checks the host value). */
  toArgs: (value: unknown, type: Type, describe: string) => unknown[]
  /** The lowered results of one parameter → the host value returned for it. */
  fromResults: (values: unknown[], type: Type) => unknown
}

/** Options every backend's compile accepts. */
export interface CompileOptions {
  /** Run-time reversibility checks (deallocation, post-conditions, loop ranges, aliasing). */
  checks: boolean
  /** Tolerance for deallocation checks on floating-point values. */
  tolerance: number
}

/** The checked core IR of a set of functions, ready for a backend. */
export interface Program {
  functions: Map<string, FunctionDef>
  /** Interpolated host values (`$hostN`). */
  hosts: unknown[]
  /** For each function, which parameters it writes. */
  writes: Map<string, boolean[]>
  registry: Registry
}

/**
 * A compiled reversible function: positional arguments, one per parameter (scalars as JS
 * numbers or booleans, arrays as typed arrays updated in place). After each call `results[i]`
 * holds the new value of scalar parameter i (booleans as 0/1). No allocation per call.
 */
export interface CompiledFunction {
  (...args: unknown[]): void
  readonly results: Float64Array
  /**
   * Present on backends that run in their own memory (the wasm backend's linear memory): arrays
   * allocated there are passed to this function, and every other function of its program,
   * without being copied in or out.
   */
  readonly resident?: ResidentMemory
  /**
   * Present where the function can be called without its wrapper by a caller that keeps every
   * array argument resident (see \`DirectEntry\`; the wasm backend, for modules that do not call
   * the caller's code).
   */
  readonly direct?: DirectEntry
  /**
   * Present where the backend has a copy of the function that leaves the results of the scalar
   * parameters it never writes out of \`results\` (\`LeanEntry.passedThrough\`): for generated
   * callers (the gradient driver of \`@tenet/ad\`) that know those values, the arguments they
   * passed. On the cpu backend the stores are code, which can keep V8 from inlining the function
   * into its caller.
   */
  readonly lean?: LeanEntry
  /**
   * Present where the backend knows it (the cpu backend, for functions with scratch parameters):
   * per parameter, for a scratch array parameter (\`Param.scratch\`) whose elements the compiled
   * code never reads before it writes them, the index of the array parameter whose length those
   * writes cover (its own, or another's: the function uses no element of it, or its first use is a
   * loop over \`0..len(y)\` that writes its own element first, as a first write, \`UpdateStmt.init\`,
   * compiled without reading the element); −1 for every other parameter. A caller that must pass
   * zeros there (the gradient driver of \`@tenet/ad\`, which reuses its arrays) need not zero it
   * again when the array covered is at least as long.
   */
  readonly overwritten?: readonly number[]
}

/**
 * A compiled function's copy without the result stores of its read-only scalar parameters (see
 * \`CompiledFunction.lean\`): called like the function, and writes the same \`results\` array,
 * except at the indices of \`passedThrough\`, whose final values are the arguments as passed.
 */
export interface LeanEntry {
  (...args: unknown[]): void
  readonly results: Float64Array
  /** Per parameter: whether its final value is the argument as passed (not stored in \`results\`). */
  readonly passedThrough: readonly boolean[]
}

/**
 * A compiled function's entry without its JS wrapper (see \`CompiledFunction.direct\`): nothing is
 * checked, laid out, copied or converted for the caller, who passes resident arrays by place.
 * For generated callers (the gradient driver of \`@tenet/ad\`) that already check their arguments
 * and keep them resident, where the wrapper's work would be done twice.
 */
export interface DirectEntry {
  /**
   * Calls the function: first `heapStart()` where the entry `grows` (nothing otherwise), then per
   * parameter in order a scalar as a number (a bool as a boolean), an array as two integers, the
   * `byteOffset` of a resident array of this function's memory (`CompiledFunction.resident`) and
   * its length. Returns the final value of scalar parameter `returned` as a number (undefined
   * where `returned` is −1). What it throws is passed through `error`.
   */
  readonly call: (...args: unknown[]) => unknown
  /** The error to throw for what \`call\` threw (an out-of-range access or a failed run-time check that the module recorded before it trapped becomes its \`TenetError\`). */
  error(thrown: unknown): Error
  /**
   * The memory as doubles (one view of all of it): after a call, element \`resultsAt + i\` holds the
   * final value of scalar parameter \`i\`, except where \`passedThrough[i]\` and for \`returned\`. A
   * view of a memory that grew since has length 0: take it again.
   */
  memory(): Float64Array
  /** Where the scalar results are (an index into \`memory()\`). */
  readonly resultsAt: number
  /** Per parameter: whether its final value is the argument as passed (converted to its type), not stored. */
  readonly passedThrough: readonly boolean[]
  /**
   * The scalar parameter whose final value \`call\` returns (as a number: a bool's as 0 or 1, as it
   * would be stored) instead of storing it, or −1: the last one not \`passedThrough\`.
   */
  readonly returned: number
  /** Per parameter: \`'array'\` (two arguments of \`call\`) or \`'scalar'\` (one). */
  readonly kinds: readonly ('scalar' | 'array')[]
  /** Set once the program is disposed (\`call\` then throws a \`call/disposed\` error). */
  readonly disposed: boolean
  /**
   * Whether a call may take memory from the heap (an array ancilla) and so grow the memory. The
   * first argument of \`call\` is then \`heapStart()\` (not \`0\`), and a call that grew the memory
   * detached every view of it (their lengths are 0): the caller calls \`memory()\` again before it
   * reads the results or anything else reads the memory (that takes the views again).
   */
  readonly grows: boolean
  /** Where a call's heap starts now (the first argument of \`call\` where \`grows\`). */
  heapStart(): number
}

/** The typed array types of array elements on the host (see `NumberSystemSpec.arrayType`). */
export type HostTypedArray = Float64Array | Float32Array | Int32Array | Uint8Array

/**
 * Memory of a backend in which arrays can live (see `CompiledFunction.resident`). A call that
 * gets such an array works on it in place, like the cpu backend on a typed array: a call that
 * fails part-way leaves it part-updated.
 */
export interface ResidentMemory {
  /**
   * A zeroed array of `n` elements of `elem` ('f64', 'f32', 'i32' or 'bool') in the backend's
   * memory. Throws while a call of the program is under way (from a host function).
   */
  allocate(elem: string, n: number): ResidentArray
  /**
   * Whether a call of a program of this memory is under way (a host function that one calls is
   * running), when `allocate` throws: a driver called from such a host function then passes host
   * arrays instead. Absent where the backend never refuses an allocation.
   */
  busy?(): boolean
  /**
   * The memory's current buffer (a new one once the memory has grown, which detaches every view
   * of the old one: their lengths and offsets read 0). A wrapper that must write an array argument
   * after a call that may have grown the memory (to restore it when the call failed) notes which
   * arguments are views of this buffer, and where, before the call, and writes them through a
   * view of the current buffer afterwards. Absent where the memory never grows under a view.
   */
  buffer?(): ArrayBufferLike
}

/** An array in a backend's memory (see `ResidentMemory`). */
export interface ResidentArray {
  /**
   * The array as a typed array. Growing the memory (on a call that needs more heap, or on
   * another allocation) detaches the previous view, so read this again after every call.
   */
  readonly array: HostTypedArray
  /** The number of elements. */
  readonly length: number
  /** Gives the memory back for later allocations; the array must not be used afterwards. */
  release(): void
}

/** What a backend returns: the compiled forward and inverse of every function. */
export interface CompiledProgram {
  get(name: string, inverse: boolean): CompiledFunction
  /** Generated source text per function, for inspection (absent for interpreters). */
  sourceOf?(name: string, inverse: boolean): string | undefined
  /**
   * Gives back what the program holds (wasm: its instance and linear memory, which can then be
   * garbage-collected even while the module object is still referenced). Later calls of its
   * functions throw a \`TenetError\` with code \`call/disposed\`. Absent where there is nothing to free.
   */
  dispose?(): void
}

/**
 * What a backend can run. The conformance suite of `@tenet/testing` reads these fields and runs
 * only what a backend declares, reporting every left-out part as "not applicable: capability X"
 * (never silently). The first three are required; the others are optional for compatibility
 * with backends written before them, but every backend should declare them all (the suite's
 * first test fails when one is missing).
 */
export interface BackendCapabilities {
  /** Computes in f64 (binary64). False: the suite's real-valued programs use f32 instead. */
  f64: boolean
  /** Functions may call themselves (directly or not). */
  recursion: boolean
  /** Run-time failures are thrown as exceptions the caller can catch. */
  exceptions: boolean
  /** Computes in f32 (binary32, rounded after every operation as `Math.fround` does). */
  f32?: boolean
  /** Lowers stacks (`stack<T>`, `push`, `pop`). */
  stacks?: boolean
  /**
   * Raises every run-time check of the catalog (`RUNTIME_CHECKS`) it can meet with the same
   * `TenetError` (code, message, location) as the reference interpreter.
   */
  checks?: boolean
  /** Runs the adjoint (gradient) programs that `@tenet/ad` builds, synchronously. */
  gradient?: boolean
  /** Runs the forward-over-reverse (Hessian) programs that `@tenet/ad` builds, synchronously. */
  hessian?: boolean
  /**
   * The Hessian columns per forward-over-reverse sweep that this backend runs fastest: the default
   * `width` of `@tenet/ad`'s `hessian` on it (8 when absent). Wider sweeps recompute the values
   * fewer times; too wide, the code keeps more tangents live than the machine has registers.
   */
  hessianWidth?: number
  /**
   * `@tenet/ad`'s block Jacobians on this backend store each entry of the output (swapped in)
   * rather than add it into a zeroed output, where that is exact (checks off, f64 derivatives):
   * true where the store costs less than the zeroing pass it saves (cpu, and wasm, whose map
   * lanes take the stores' swaps). Absent: they add into a zeroed output.
   */
  jacobianStores?: boolean
  /**
   * Compiled functions can be called synchronously (`m.f(...args)`). False for a backend that
   * only maps a function over a batch asynchronously (webgpu's `gpuMap`).
   */
  synchronous?: boolean
}

/** A backend: lowers a checked program (and its inverses) to something callable. */
export interface BackendSpec {
  specificationVersion: 'v1'
  name: string
  /** Higher wins when no backend is named. */
  priority: number
  capabilities: BackendCapabilities
  /**
   * A cheap synchronous check that the backend can run here (wasm: `WebAssembly` exists; webgpu:
   * `navigator.gpu` exists, while whether an adapter can be had is known only when one is
   * requested). `Registry.defaultBackend()` passes over a backend that answers false.
   */
  isAvailable?: () => boolean
  /**
   * Compiles a program. `inverses` holds the inverse of each function (same names), produced
   * by `@tenet/reversible`'s `invert`.
   */
  doCompile: (program: Program, inverses: Map<string, FunctionDef>, options: CompileOptions) => CompiledProgram
  override?: boolean
  description?: string
}
