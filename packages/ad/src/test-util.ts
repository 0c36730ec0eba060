/** Test helpers: a registry with both backends and a `rev`-like tag (the umbrella is not a dependency). */
import { createRegistry, parse, type Registry } from '@tenet/ir'
import { compileModule, interpreterBackend, type TenetModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'

export function testRegistry(): Registry {
  return createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)
}

export interface TagOptions { backend?: string; checks?: boolean; registry?: Registry }

export function tag(options: TagOptions = {}) {
  const registry = options.registry ?? testRegistry()
  return (strings: TemplateStringsArray | string, ...values: unknown[]): TenetModule => {
    let text: string
    if (typeof strings === 'string') text = strings
    else {
      text = strings[0]!
      for (let i = 0; i < values.length; i++) text += '${' + i + '}' + strings[i + 1]!
    }
    return compileModule(parse({ text, name: 'test' }, values), {
      registry, ...(options.backend ? { backend: options.backend } : {}), ...(options.checks !== undefined ? { checks: options.checks } : {}),
    })
  }
}

export const rev = tag()
