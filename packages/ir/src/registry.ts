import { RegistryError, suggest } from './errors.js'
import type { BackendSpec, BijectionSpec, NumberSystemSpec, PrimitiveSpec, PurePrimitiveSpec } from './plugin.js'

function checkVersion(kind: string, spec: { specificationVersion?: unknown; name?: unknown }): void {
  if (spec.specificationVersion !== 'v1') {
    throw new RegistryError(
      'registry/version',
      `${kind} \`${String(spec.name)}\` has specificationVersion ${JSON.stringify(spec.specificationVersion)}; this Tenet understands 'v1'`,
    )
  }
  if (typeof spec.name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(spec.name)) {
    throw new RegistryError('registry/name', `${kind} name ${JSON.stringify(spec.name)} is not a valid identifier`)
  }
}

/**
 * An explicit registry of primitives, number systems and backends. Never global: create one
 * with `createRegistry()` (which starts with the standard library) or `emptyRegistry()`.
 */
export class Registry {
  private readonly primitives = new Map<string, PrimitiveSpec>()
  private readonly numberSystems = new Map<string, NumberSystemSpec>()
  private readonly backends = new Map<string, BackendSpec>()

  /** Registers a primitive; a duplicate name is an error unless `override: true`. */
  registerPrimitive(spec: PrimitiveSpec): this {
    checkVersion('primitive', spec)
    if (spec.kind !== 'pure' && spec.kind !== 'bijection') {
      throw new RegistryError(
        'registry/kind',
        `primitive \`${(spec as { name: string }).name}\` has kind ${JSON.stringify((spec as { kind: unknown }).kind)}; expected 'pure' or 'bijection'`,
      )
    }
    if (spec.kind === 'pure' && (typeof spec.evaluate !== 'function' || !Number.isInteger(spec.arity))) {
      throw new RegistryError(
        'registry/spec',
        `pure primitive \`${spec.name}\` needs an integer \`arity\` and an \`evaluate\` function`,
      )
    }
    if (
      spec.kind === 'pure' &&
      spec.argKinds &&
      (spec.argKinds.length !== spec.arity || spec.argKinds.some((k) => k !== 'scalar' && k !== 'array'))
    ) {
      throw new RegistryError(
        'registry/spec',
        `pure primitive \`${spec.name}\`: \`argKinds\` must list 'scalar' or 'array' for each of its ${spec.arity} arguments`,
      )
    }
    if (spec.kind === 'bijection' && (typeof spec.apply !== 'function' || !Array.isArray(spec.roles))) {
      throw new RegistryError('registry/spec', `bijection \`${spec.name}\` needs \`roles\` and an \`apply\` function`)
    }
    if (this.primitives.has(spec.name) && !spec.override) {
      throw new RegistryError(
        'registry/duplicate',
        `a primitive named \`${spec.name}\` is already registered (pass \`override: true\` to replace it)`,
      )
    }
    this.primitives.set(spec.name, spec)
    return this
  }

  /** Registers a number system (a scalar type usable in Tenet source). */
  registerNumberSystem(spec: NumberSystemSpec): this {
    checkVersion('number system', spec)
    if (this.numberSystems.has(spec.name) && !spec.override) {
      throw new RegistryError(
        'registry/duplicate',
        `a number system named \`${spec.name}\` is already registered (pass \`override: true\` to replace it)`,
      )
    }
    this.numberSystems.set(spec.name, spec)
    return this
  }

  /** Registers a backend. */
  registerBackend(spec: BackendSpec): this {
    checkVersion('backend', spec)
    if (this.backends.has(spec.name) && !spec.override) {
      throw new RegistryError(
        'registry/duplicate',
        `a backend named \`${spec.name}\` is already registered (pass \`override: true\` to replace it)`,
      )
    }
    this.backends.set(spec.name, spec)
    return this
  }

  /** The primitive named `name`, or undefined. */
  findPrimitive(name: string): PrimitiveSpec | undefined {
    return this.primitives.get(name)
  }

  /** The pure primitive named `name`; throws, listing what exists, when there is none. */
  pure(name: string): PurePrimitiveSpec {
    const p = this.primitives.get(name)
    if (!p || p.kind !== 'pure')
      throw new RegistryError(
        'registry/unknown-primitive',
        `no pure primitive \`${name}\`${suggest(name, this.names('pure'))}`,
      )
    return p
  }

  /** The bijection named `name`; throws, listing what exists, when there is none. */
  bijection(name: string): BijectionSpec {
    const p = this.primitives.get(name)
    if (!p || p.kind !== 'bijection')
      throw new RegistryError(
        'registry/unknown-primitive',
        `no bijection \`${name}\`${suggest(name, this.names('bijection'))}`,
      )
    return p
  }

  /** The number system named `name`, or undefined. */
  findNumberSystem(name: string): NumberSystemSpec | undefined {
    return this.numberSystems.get(name)
  }

  /** The number system named `name`; throws, listing what exists, when there is none. */
  numberSystem(name: string): NumberSystemSpec {
    const n = this.numberSystems.get(name)
    if (!n)
      throw new RegistryError(
        'registry/unknown-type',
        `no number system \`${name}\` (available: ${[...this.numberSystems.keys()].join(', ')})`,
      )
    return n
  }

  /** The backend named `name`; throws, listing what exists, when there is none. */
  backend(name: string): BackendSpec {
    const b = this.backends.get(name)
    if (!b)
      throw new RegistryError(
        'registry/unknown-backend',
        `no backend \`${name}\` (available: ${[...this.backends.keys()].join(', ') || 'none'})`,
      )
    return b
  }

  /** The registered backend with the highest priority among those available here (`isAvailable`). */
  defaultBackend(): BackendSpec {
    const all = [...this.backends.values()].sort((a, b) => b.priority - a.priority)
    if (!all.length) throw new RegistryError('registry/unknown-backend', 'no backend is registered in this registry')
    const here = all.find((b) => b.isAvailable?.() !== false)
    if (!here)
      throw new RegistryError(
        'registry/unknown-backend',
        `no registered backend is available here (registered: ${all.map((b) => b.name).join(', ')})`,
      )
    return here
  }

  /** Names of registered primitives (optionally of one kind), number systems or backends. */
  names(kind?: 'pure' | 'bijection' | 'number' | 'backend'): string[] {
    if (kind === 'number') return [...this.numberSystems.keys()]
    if (kind === 'backend') return [...this.backends.keys()]
    return [...this.primitives.values()].filter((p) => !kind || p.kind === kind).map((p) => p.name)
  }

  /** A copy of this registry; registering into the copy leaves this one unchanged. */
  clone(): Registry {
    const r = new Registry()
    for (const p of this.primitives.values()) r.primitives.set(p.name, p)
    for (const n of this.numberSystems.values()) r.numberSystems.set(n.name, n)
    for (const b of this.backends.values()) r.backends.set(b.name, b)
    return r
  }
}

/** A registry with nothing in it. */
export function emptyRegistry(): Registry {
  return new Registry()
}
