import { readFileSync } from 'node:fs'
import os from 'node:os'

export interface MachineInfo {
  node: string
  v8: string
  platform: string
  release: string
  arch: string
  cpuModel: string
  cpus: number
  totalMemoryBytes: number
  /**
   * Linux: the CPUs this process may run on (`Cpus_allowed_list`, e.g. from `taskset`) and how
   * many physical cores they are: two CPUs that are hyperthreads of one core give a thread row far
   * less than two cores would. Absent where the system does not say.
   */
  cpuSet?: { allowed: string; physicalCores: number }
}

export function machineInfo(): MachineInfo {
  const cpus = os.cpus()
  return {
    node: process.version,
    v8: process.versions.v8,
    platform: os.platform(),
    release: os.release(),
    arch: os.arch(),
    cpuModel: cpus[0]?.model ?? 'unknown',
    cpus: typeof os.availableParallelism === 'function' ? os.availableParallelism() : cpus.length,
    totalMemoryBytes: os.totalmem(),
    ...cpuSetOf(),
  }
}

/** Expands a Linux CPU list (`0-3,8,10-11`) into CPU numbers; undefined when it is not one. */
export function parseCpuList(list: string): number[] | undefined {
  const out: number[] = []
  for (const part of list.trim().split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part)
    if (!m) return undefined
    const a = Number(m[1]),
      b = m[2] === undefined ? a : Number(m[2])
    for (let c = a; c <= b; c++) out.push(c)
  }
  return out
}

/**
 * The allowed CPUs and their physical cores: `read(path)` reads a file (procfs, sysfs; a test
 * passes its own), and a core is a distinct (package, core id) pair.
 */
export function cpuSetOf(read: (path: string) => string = (p) => readFileSync(p, 'utf8')): {
  cpuSet?: { allowed: string; physicalCores: number }
} {
  try {
    const allowed = /^Cpus_allowed_list:\s*(\S+)/m.exec(read('/proc/self/status'))?.[1]
    const cpus = allowed === undefined ? undefined : parseCpuList(allowed)
    if (!allowed || !cpus?.length) return {}
    const cores = new Set<string>()
    for (const c of cpus) {
      const topology = `/sys/devices/system/cpu/cpu${c}/topology`
      cores.add(`${read(`${topology}/physical_package_id`).trim()}:${read(`${topology}/core_id`).trim()}`)
    }
    return { cpuSet: { allowed, physicalCores: cores.size } }
  } catch {
    return {}
  }
}

/** How the report describes the allowed CPUs: `` where unknown. */
export function describeCpuSet(m: Pick<MachineInfo, 'cpuSet'>): string {
  if (!m.cpuSet) return ''
  const { allowed, physicalCores } = m.cpuSet
  const n = parseCpuList(allowed)?.length ?? 0
  const smt = physicalCores < n ? ': hyperthreads share cores, a thread row gains less than on separate cores' : ''
  return ` (CPUs ${allowed}, ${physicalCores} physical core${physicalCores === 1 ? '' : 's'}${smt})`
}
