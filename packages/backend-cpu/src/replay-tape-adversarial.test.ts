import { describe, expect, it } from 'vitest'
import { createRegistry, parse } from '@tenet/ir'
import { compileModule, interpreterBackend, TENET_FUNCTION, type TenetModule } from '@tenet/reversible'
import { raisedError } from '@tenet/testing'
import { cpuBackend, type CpuCompiledProgram } from './index.js'

const registry = createRegistry().registerBackend(cpuBackend).registerBackend(interpreterBackend)
const big = Array.from({ length: 9 }, (_, k) => `  for i in 0..len(x) { a[i] += x[i] * ${k + 1}.0 * x[i] }`).join('\n')
const src = `fn f(a: f64[], x: f64[]) {
${big}
}
fn g(a: f64[], x: f64[], y: f64[], z: f64[]) {
  f(a, x)
  z[0] += \${0}(x[0])
  z[1] += y[0]
  ~f(a, x)
}`
const tapeTop = (m: TenetModule): number =>
  (m.g![TENET_FUNCTION] as unknown as { compiled: CpuCompiledProgram }).compiled.tapeTop()
const args = (ny: number) => [
  new Float64Array(3),
  Float64Array.from([1, 2, 3]),
  Float64Array.from({ length: ny }, (_, k) => k + 0.5),
  new Float64Array(2),
]

describe('tape', () => {
  it('host throws a plain error; recursion 3 deep with a failure caught in the middle', () => {
    const logs: Record<string, string[]> = {}
    const outs: Record<string, unknown> = {}
    for (const backend of ['cpu', 'interpreter']) {
      const log: string[] = (logs[backend] = [])
      let m: TenetModule | undefined
      let depth = 0
      const host = (v: number) => {
        depth++
        try {
          if (depth === 1) {
            // call g which recurses to depth 2, whose host throws a plain error at depth 3 -> caught at depth 2? no: let it propagate to here
            log.push(raisedError(() => m!.g!(...args(1))))
            if (backend === 'cpu') log.push(`top ${tapeTop(m!)}`)
            const a = args(1)
            m!.g!(...a)
            log.push(JSON.stringify(a.map((x) => Array.from(x))))
            if (backend === 'cpu') log.push(`top ${tapeTop(m!)}`)
          } else if (depth === 2) {
            // a nested call that succeeds
            const a = args(1)
            try {
              m!.g!(...a)
            } catch (e) {
              log.push(`d2 caught ${String(e).slice(0, 60)}`)
            }
          } else if (depth === 3 && v === 1) {
            throw new RangeError('plain')
          }
        } finally {
          depth--
        }
        return 2 * v
      }
      m = compileModule(parse({ text: src, name: 'tape program' }, [host]), { registry, backend, checks: true })
      const a = args(1)
      m.g!(...a)
      outs[backend] = a.map((x) => Array.from(x))
      if (backend === 'cpu') log.push(`top ${tapeTop(m)}`)
      // a host that throws a plain error straight
      depth = 10
      log.push(String(raisedError(() => m!.g!(...args(1)))).slice(0, 80))
      depth = 0
    }
    expect(logs.cpu!.filter((l) => !l.startsWith('top'))).toEqual(logs.interpreter)
    expect(logs.cpu!.filter((l) => l.startsWith('top') && l !== 'top 27' && l !== 'top 0')).toEqual([])
    expect(outs.cpu).toEqual(outs.interpreter)
  })
})
