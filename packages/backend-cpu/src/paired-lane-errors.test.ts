/**
 * Pass `pair-series` with checks on: where an earlier element of a group fails after its first
 * loop, its error comes without waiting for a later element's long first loop (the reference
 * raises it at once). Found by review 17b in a step that ran the later lanes' uncomputes side by
 * side (`pair-uncomputes`, withdrawn): it ran a later lane's whole first loop — up to 2³²
 * iterations, each with whatever `for` loops its body holds (hours here) — before the earlier
 * lane's uncompute and deallocations. The call runs in a child process, killed after 20 s.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const child = fileURLToPath(new URL('./paired-lane-errors/long-lane.child.mjs', import.meta.url))

/**
 * Per element: a routine whose loop counts `k` up to `n` (a `for` of `m` steps in each iteration),
 * the `~routine` running it backwards, then `s` moved by `bump`, whose deallocation fails.
 */
const program = `fn f(y: f64, x: f64, n: i32, m: i32, bump: f64) {
  k: i32 <- 0
  s <- 0.0
  a <- 0.0
  b <- 0.0
  routine {
    s += x
    a += x * 0.5
    while (k < n, k != 0) {
      k += 1
      for j in 0..m { s += 1.0 }
      b += a * 0.5
      SWAP(a, b)
    }
  }
  y += s
  ~routine
  s += bump
  b -> 0.0
  a -> 0.0
  s -> 0.0
  k -> 0
}
fn batch(ys: f64[], xs: f64[], ns: i32[], ms: i32[], bumps: f64[]) {
  for i in 0..len(xs) { f(ys[i], xs[i], ns[i], ms[i], bumps[i]) }
}`

/** Runs `batch` in a child process (killed after `ms` milliseconds): the error's first line, or "timed out". */
function runChild(backend: string, args: [string, number[]][], env: Record<string, string> = {}, ms = 20000): string {
  const dir = mkdtempSync(join(tmpdir(), 'paired-lane-errors-'))
  const file = join(dir, 'p.tenet')
  writeFileSync(file, program)
  const r = spawnSync(process.execPath, [child, file, backend, JSON.stringify(args)], {
    timeout: ms,
    encoding: 'utf8',
    env: { ...process.env, ...env },
  })
  rmSync(dir, { recursive: true, force: true })
  if (r.error || r.signal) return 'timed out'
  return r.stdout.trim()
}

describe('pair-series: errors of paired elements', () => {
  it('an earlier element failing after its first loop raises its error without waiting for a later element’s long first loop', () => {
    // element 0 fails its deallocation (bump); element 1's loop runs 2^31 - 1 iterations of 10^4
    // steps each (hours), which the reference never starts: it raises element 0's error at once
    const args: [string, number[]][] = [
      ['f64', [0, 0, 0]],
      ['f64', [0.5, 0.25, 0.125]],
      ['i32', [1, 2 ** 31 - 1, 1]],
      ['i32', [1, 10000, 1]],
      ['f64', [1e-3, 0, 0]],
    ]
    const want = runChild('interpreter', args)
    expect(want).toMatch(/^runtime\/dealloc cannot deallocate `s`/)
    expect(runChild('cpu', args)).toBe(want)
  }, 60000)
})
