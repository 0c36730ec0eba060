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
  }
}
