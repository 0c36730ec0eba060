import { describe, expect, it } from 'vitest'
import { cpuSetOf, describeCpuSet, machineInfo, parseCpuList } from './machine.js'

/** A fake procfs/sysfs: CPUs 0–3, where 0 and 1 are hyperthreads of core 0, 2 and 3 of core 1. */
const files =
  (allowed: string) =>
  (path: string): string => {
    if (path === '/proc/self/status') return `Name:\tnode\nCpus_allowed:\tf\nCpus_allowed_list:\t${allowed}\n`
    const m = /cpu(\d+)\/topology\/(physical_package_id|core_id)$/.exec(path)
    if (!m) throw new Error(`no file ${path}`)
    return m[2] === 'core_id' ? `${Math.floor(Number(m[1]) / 2)}\n` : '0\n'
  }

describe('the machine’s CPU set', () => {
  it('expands CPU lists, and refuses what is not one', () => {
    expect(parseCpuList('0-3,8,10-11')).toEqual([0, 1, 2, 3, 8, 10, 11])
    expect(parseCpuList('5')).toEqual([5])
    expect(parseCpuList('0-1,x')).toBeUndefined()
  })

  it('counts the physical cores of the allowed CPUs, and says when hyperthreads share one', () => {
    const siblings = cpuSetOf(files('0-1'))
    expect(siblings.cpuSet).toEqual({ allowed: '0-1', physicalCores: 1 })
    expect(describeCpuSet(siblings)).toBe(
      ' (CPUs 0-1, 1 physical core: hyperthreads share cores, a thread row gains less than on separate cores)',
    )
    const apart = cpuSetOf(files('0,2'))
    expect(apart.cpuSet).toEqual({ allowed: '0,2', physicalCores: 2 })
    expect(describeCpuSet(apart)).toBe(' (CPUs 0,2, 2 physical cores)')
    // nothing said where the files are missing or odd
    expect(cpuSetOf(() => 'Name:\tnode\n')).toEqual({})
    expect(
      cpuSetOf(() => {
        throw new Error('no procfs')
      }),
    ).toEqual({})
    expect(describeCpuSet({})).toBe('')
  })

  it('is part of the machine info on Linux', () => {
    const m = machineInfo()
    if (process.platform === 'linux') expect(m.cpuSet?.physicalCores).toBeGreaterThan(0)
    else expect(m.cpuSet).toBeUndefined()
  })
})
