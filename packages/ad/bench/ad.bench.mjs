// Benchmarks of @tenet/ad against plain TypeScript objectives on the same inputs (not timed tests).
// Run after building (`pnpm -r build` or `npx tsc -p tsconfig.build.json` here and in ir,
// reversible, backend-cpu):   node packages/ad/bench/ad.bench.mjs [--time-ms 400] [--only Bessel]
// Each case reports the tinybench median (p50) per call of the AD computation and of the plain
// objective, and their ratio, with the goal of issue #4: of three rounds (each measures both in
// turn), the one with the median ratio, and the spread of the three. `runAdBenchmarks()` is exported for the
// benchmark suite (apps/bench); pass it tinybench's `Bench` class if tinybench is not resolvable.
import { createRegistry, parse } from '@tenet/ir'
import { compileModule } from '@tenet/reversible'
import { cpuBackend } from '@tenet/backend-cpu'
import { wasmBackend } from '@tenet/backend-wasm'
import { pathToFileURL, fileURLToPath } from 'node:url'
import { existsSync } from 'node:fs'
import {
  grad,
  hessian,
  graphEmbeddingSource,
  graphEmbeddingArgs,
  petersenEdges,
  petersenNonEdges,
  besselSource,
  besselReciprocalSource,
  sparseDotSource,
  sparseDotMergeSource,
  compileTaylor,
  compileNestedTangent,
} from '../dist/index.js'

async function loadBench() {
  try {
    return (await import('tinybench')).Bench
  } catch {
    /* not a dependency of @tenet/ad */
  }
  const local = new URL('../../../apps/bench/node_modules/tinybench/dist/index.js', import.meta.url)
  if (existsSync(fileURLToPath(local))) return (await import(local.href)).Bench
  throw new Error('tinybench not found: install it or pass the Bench class to runAdBenchmarks')
}

const compile = (src, backend = 'cpu') =>
  compileModule(parse({ text: src, name: 'bench' }), {
    registry: createRegistry().registerBackend(cpuBackend).registerBackend(wasmBackend),
    backend,
    checks: false,
  })

// ---- plain objectives ----
// The series as a plain TS programmer would write it, with ν! and (z/2)^ν in one loop (about
// 1.5× faster here than `h ** nu / factorial(nu)`, whose Math.pow is slow).
function besselPlain(nu, z) {
  const h = z / 2
  let fact = 1,
    p = 1
  for (let i = 1; i <= nu; i++) {
    fact *= i
    p *= h
  }
  let a = p / fact,
    out = a,
    k = 0
  while (Math.abs(a) > 1e-8) {
    k += 1
    a *= -(h * h) / (k * (k + nu))
    out += a
  }
  return out
}

const E1 = Int32Array.from(petersenEdges.flat()),
  E2 = Int32Array.from(petersenNonEdges.flat())
const D1 = new Float64Array(15),
  D2 = new Float64Array(30)
function lengthsPlain(x, k, pairs, out) {
  for (let e = 0; e < out.length; e++) {
    const a = pairs[2 * e] * k,
      b = pairs[2 * e + 1] * k
    let s = 0
    for (let d = 0; d < k; d++) {
      const t = x[a + d] - x[b + d]
      s += t * t
    }
    out[e] = Math.sqrt(s)
  }
}
// index loops: `for (const d of D1)` made this objective about 1.9× slower and every ratio against it too kind
function embeddingPlain(x, k) {
  lengthsPlain(x, k, E1, D1)
  lengthsPlain(x, k, E2, D2)
  let m1 = 0,
    m2 = 0,
    v1 = 0,
    v2 = 0
  for (let e = 0; e < 15; e++) m1 += D1[e]
  for (let e = 0; e < 30; e++) m2 += D2[e]
  m1 /= 15
  m2 /= 30
  for (let e = 0; e < 15; e++) v1 += (D1[e] - m1) * (D1[e] - m1)
  for (let e = 0; e < 30; e++) v2 += (D2[e] - m2) * (D2[e] - m2)
  const t = m1 - m2 + 0.1
  return v1 / 14 + v2 / 29 + Math.exp(t > 0 ? t : 0) - 1
}

function randomCsc(m, n, density, seed) {
  let s = seed >>> 0
  const rnd = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32
  const colptr = new Int32Array(n + 1),
    rows = [],
    vals = []
  for (let j = 0; j < n; j++) {
    for (let i = 0; i < m; i++)
      if (rnd() < density) {
        rows.push(i)
        vals.push(rnd() * 2 - 1)
      }
    colptr[j + 1] = rows.length
  }
  return { colptr, rowval: Int32Array.from(rows), nzval: Float64Array.from(vals) }
}
function sparseDotPlain(n, a, b) {
  let r = 0
  for (let j = 0; j < n; j++) {
    let ia = a.colptr[j],
      ib = b.colptr[j]
    const ea = a.colptr[j + 1],
      eb = b.colptr[j + 1]
    while (ia < ea && ib < eb) {
      const ra = a.rowval[ia],
        rb = b.rowval[ib]
      if (ra === rb) {
        r += a.nzval[ia] * b.nzval[ib]
        ia++
        ib++
      } else if (ra < rb) ia++
      else ib++
    }
  }
  return r
}

/** The cases: [name, goal ratio, AD call, plain call]. */
export function adBenchmarkCases() {
  const bessel = compile(besselSource)
  const gb = grad(bessel.ibesselj, { loss: 0 })
  const gbr = grad(bessel.ibesselj, { loss: 0, mode: 'reverse' })
  // the same series with the multiplier that undoes its product by a reciprocal (no division in
  // the loop-carried chain)
  const besselr = compile(besselReciprocalSource)
  const gq = grad(besselr.ibesselj, { loss: 0 })
  const gqr = grad(besselr.ibesselj, { loss: 0, mode: 'reverse' })
  const emb = compile(graphEmbeddingSource)
  const ge = grad(emb.embedding_loss, { loss: 0 })
  // the same programs on the wasm backend
  const besselw = compile(besselSource, 'wasm')
  const gbw = grad(besselw.ibesselj, { loss: 0 })
  const gbwr = grad(besselw.ibesselj, { loss: 0, mode: 'reverse' })
  const gqw = grad(compile(besselReciprocalSource, 'wasm').ibesselj, { loss: 0 })
  const embw = compile(graphEmbeddingSource, 'wasm')
  const gew = grad(embw.embedding_loss, { loss: 0 })
  const k = 10
  const x = Float64Array.from({ length: 10 * k }, (_, i) => Math.sin(1.7 * i + k) + 0.3 * Math.cos(i * i))
  const [, , q1, d1, q2, d2, , e1, e2] = graphEmbeddingArgs(x, k)
  const hargs = graphEmbeddingArgs(x, k)
  const Hout = new Float64Array((10 * k) ** 2)
  const sd = compile(sparseDotSource)
  const gs = grad(sd.sparse_dot, { loss: 0 })
  const gs2 = grad(sd.sparse_dot, { loss: 0, fuse: false })
  const sdm = compile(sparseDotMergeSource).sparse_dot_merge
  const gm = grad(sdm, { loss: 0 })
  const gm2 = grad(sdm, { loss: 0, fuse: false })
  const M = 1000,
    N = 1000
  const A = randomCsc(M, N, 0.05, 11),
    B = randomCsc(M, N, 0.05, 23)
  // every case adds its result into a typed array: a captured `let sink` holds a double as a heap
  // number, and the box allocated on each store (about 4.7 ns here) counted in both sides of every
  // ratio, which made the Bessel rows (a 9 ns objective) look about 1.35× better than they are
  const SINK = new Float64Array(1)
  // one closure per plain objective, shared by the cases that divide by it
  const embeddingObjective = () => {
    SINK[0] += embeddingPlain(x, k)
  }
  // ν and z are read from arrays by both sides: with literal arguments V8 folds (z/2)^ν and ν!
  // into the inlined plain objective, which then measures less than the function computes
  const NU = new Int32Array([2]),
    Z = new Float64Array([1.0])
  const besselObjective = () => {
    SINK[0] += besselPlain(NU[0], Z[0])
  }
  const sparseObjective = () => {
    SINK[0] += sparseDotPlain(N, A, B)
  }
  // the k-th derivative of J₂ at 1 by one Taylor sweep of order k, and by the tangent nested k times
  const direct = (core, argv) =>
    new Function('F', 'a', `return () => F(${argv.map((_, j) => `a[${j}]`).join(', ')})`)(core, argv)
  const taylorCase = (order) => {
    const ct = compileTaylor(bessel.ibesselj, order)
    const argv = new Array(3 + 2 * order).fill(0)
    argv[1] = 2
    argv[2] = 1
    argv[ct.slots[2].index] = 1
    const call = direct(ct.taylor.core, argv),
      at = ct.slots[0].index + order - 1
    return () => {
      call()
      SINK[0] += ct.taylor.core.results[at]
    }
  }
  const nestedCase = (order) => {
    const { fn, layout } = compileNestedTangent(bessel.ibesselj, order)
    const argv = layout.map(([p, levels]) =>
      levels === 0 ? [0, 2, 1][p] : p === 2 && (levels & (levels - 1)) === 0 ? 1 : 0,
    )
    const call = direct(fn.core, argv),
      at = layout.findIndex(([p, levels]) => p === 0 && levels === (1 << order) - 1)
    return () => {
      call()
      SINK[0] += fn.core.results[at]
    }
  }
  const cases = [
    // grad's default for a function of one variable: forward mode (one tangent run)
    [
      'Bessel J2(1.0) gradient (imul_recip) / objective',
      4,
      () => {
        gq.run(0, NU[0], Z[0])
        SINK[0] += gq.scalars[2]
      },
      besselObjective,
    ],
    [
      'Bessel J2(1.0) gradient (imul_recip), reverse mode / objective',
      4,
      () => {
        gqr.run(0, NU[0], Z[0])
        SINK[0] += gqr.scalars[2]
      },
      besselObjective,
    ],
    // the paper's listing: imul divides by the factor, in the chain from one term to the next
    [
      "Bessel J2(1.0) gradient (paper's imul) / objective",
      4,
      () => {
        gb.run(0, NU[0], Z[0])
        SINK[0] += gb.scalars[2]
      },
      besselObjective,
    ],
    [
      "Bessel J2(1.0) gradient (paper's imul), reverse mode / objective",
      4,
      () => {
        gbr.run(0, NU[0], Z[0])
        SINK[0] += gbr.scalars[2]
      },
      besselObjective,
    ],
    [
      'graph embedding k=10 gradient / objective',
      3,
      () => {
        ge.run(0, x, q1, d1, q2, d2, k, e1, e2)
        SINK[0] += ge.lastLoss
      },
      embeddingObjective,
    ],
    ...[4, 8, 16].map((w) => [
      `graph embedding k=10 Hessian (width ${w}) / objective`,
      250,
      () => {
        SINK[0] += hessian(emb.embedding_loss, hargs, { loss: 0, wrt: [1], width: w })[0]
      },
      embeddingObjective,
    ]),
    [
      'Bessel J2(1.0) gradient (imul_recip), wasm backend / objective',
      4,
      () => {
        gqw.run(0, NU[0], Z[0])
        SINK[0] += gqw.scalars[2]
      },
      besselObjective,
    ],
    [
      "Bessel J2(1.0) gradient (paper's imul), wasm backend / objective",
      4,
      () => {
        gbw.run(0, NU[0], Z[0])
        SINK[0] += gbw.scalars[2]
      },
      besselObjective,
    ],
    [
      "Bessel J2(1.0) gradient (paper's imul), reverse mode, wasm backend / objective",
      4,
      () => {
        gbwr.run(0, NU[0], Z[0])
        SINK[0] += gbwr.scalars[2]
      },
      besselObjective,
    ],
    [
      'graph embedding k=10 gradient, wasm backend / objective',
      3,
      () => {
        gew.run(0, x, q1, d1, q2, d2, k, e1, e2)
        SINK[0] += gew.lastLoss
      },
      embeddingObjective,
    ],
    ...[8, 16].map((w) => [
      `graph embedding k=10 Hessian (width ${w}), wasm backend / objective`,
      250,
      () => {
        SINK[0] += hessian(embw.embedding_loss, hargs, { loss: 0, wrt: [1], width: w })[0]
      },
      embeddingObjective,
    ]),
    // the same, written into the caller's array (no 80 kB result allocated per call)
    [
      'graph embedding k=10 Hessian (width 8), wasm backend, into `out` / objective',
      250,
      () => {
        SINK[0] += hessian(embw.embedding_loss, hargs, { loss: 0, wrt: [1], width: 8, out: Hout })[0]
      },
      embeddingObjective,
    ],
    // grad's default: the one-pass program (the loss only accumulates values f never writes)
    [
      'sparse dot 1000x1000 (5%) gradient, one pass / objective (Listing 22, branch keeper)',
      2.5,
      () => {
        gs.run(0, M, N, A.colptr, A.rowval, A.nzval, B.colptr, B.rowval, B.nzval)
        SINK[0] += gs.lastLoss
      },
      sparseObjective,
    ],
    [
      'sparse dot 1000x1000 (5%) gradient, one pass / objective (keeper-free merge)',
      2.5,
      () => {
        gm.run(0, M, N, A.colptr, A.rowval, A.nzval, B.colptr, B.rowval, B.nzval)
        SINK[0] += gm.lastLoss
      },
      sparseObjective,
    ],
    // fuse: false, the paper's forward sweep then backward sweep
    [
      'sparse dot 1000x1000 (5%) forward+backward / objective (Listing 22, branch keeper)',
      2.5,
      () => {
        gs2.run(0, M, N, A.colptr, A.rowval, A.nzval, B.colptr, B.rowval, B.nzval)
        SINK[0] += gs2.lastLoss
      },
      sparseObjective,
    ],
    [
      'sparse dot 1000x1000 (5%) forward+backward / objective (keeper-free merge)',
      2.5,
      () => {
        gm2.run(0, M, N, A.colptr, A.rowval, A.nzval, B.colptr, B.rowval, B.nzval)
        SINK[0] += gm2.lastLoss
      },
      sparseObjective,
    ],
    // higher orders (seed 002): Taylor mode against nested tangents, and the second-order adjoint
    ...[2, 4, 8].map((order) => [
      `Bessel J2(1.0) derivative ${order}, Taylor mode (paper's imul) / objective`,
      12 * order * order,
      taylorCase(order),
      besselObjective,
    ]),
    ...[2, 4].map((order) => [
      `Bessel J2(1.0) derivative ${order}, nested tangents (paper's imul) / objective`,
      4 * 8 ** order,
      nestedCase(order),
      besselObjective,
    ]),
    [
      'graph embedding k=10 Hessian, second-order adjoint (reverse-over-forward) / objective',
      10000,
      () => {
        SINK[0] += hessian(emb.embedding_loss, hargs, { loss: 0, wrt: [1], method: 'reverse-over-forward' })[0]
      },
      embeddingObjective,
    ],
  ]
  return { cases, sink: () => SINK[0] }
}

/**
 * Runs every case (with `only`, those whose name contains it) with tinybench; returns
 * `{ name, goal, adMs, plainMs, ratio, ratios }` per case: the medians per call of the round with
 * the median ratio, and every round's ratio (sorted).
 */
export async function runAdBenchmarks({ timeMs = 400, Bench, only, rounds = 3 } = {}) {
  const BenchClass = Bench ?? (await loadBench())
  const cases = adBenchmarkCases().cases.filter(([name]) => only === undefined || name.includes(only))
  const out = []
  let measurements = 0
  const p50 = async (name, fn) => {
    // batch fast calls so a sample lasts ≥ ~0.2 ms, sized from warm calls (a first, cold call
    // is far slower: batches sized from it stay so short that tinybench's own overhead per
    // sample counts in every call)
    let calls = 0
    const t0 = performance.now()
    do {
      fn()
      calls++
    } while (performance.now() - t0 < 20)
    const t1 = performance.now()
    for (let i = 0; i < calls; i++) fn()
    const single = (performance.now() - t1) / calls
    const inner = single < 0.2 ? Math.ceil(0.2 / Math.max(single, 1e-6)) : 1
    // a batch loop of its own per measurement (its own source text, so V8 shares no feedback
    // between them): each loop calls one function, which V8 may inline there, for the plain
    // objective and the AD computation alike. With one shared loop, the first function measured
    // was inlined and later ones were called through a megamorphic site (~3.6 ns per call more)
    const batch = new Function(
      'fn',
      'inner',
      `// measurement ${++measurements}\nreturn () => { for (let i = 0; i < inner; i++) fn() }`,
    )(fn, inner)
    const bench = new BenchClass({ time: timeMs, warmup: true })
    bench.add(name, batch)
    await bench.run()
    return bench.tasks[0].result.latency.p50 / inner
  }
  // The plain objective and the AD computation are measured in turn, `rounds` times, and the
  // round with the median ratio counts (its two medians are reported). On these machines a whole
  // measurement now and then runs slow (the 9 ns Bessel objective measured 9, 14 or 16 ns in a
  // first measurement, in runs of the same process): one round could flatter a ratio as well as
  // spoil it, and the fastest of each side would favour the noisier side.
  for (const [name, goal, ad, plain] of cases) {
    const runs = []
    for (let r = 0; r < rounds; r++) {
      const plainMs = await p50(name, plain),
        adMs = await p50(name, ad)
      runs.push({ adMs, plainMs, ratio: adMs / plainMs })
    }
    runs.sort((a, b) => a.ratio - b.ratio)
    out.push({ name, goal, ...runs[(rounds - 1) >> 1], ratios: runs.map((r) => r.ratio) })
  }
  return out
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  const i = process.argv.indexOf('--time-ms')
  const o = process.argv.indexOf('--only')
  const rows = await runAdBenchmarks({
    timeMs: i > 0 ? Number(process.argv[i + 1]) : 400,
    only: o > 0 ? process.argv[o + 1] : undefined,
  })
  for (const r of rows) {
    console.log(
      `${r.name.padEnd(62)} ${r.ratio.toFixed(2).padStart(8)}×  (goal ≤ ${r.goal}×; ad ${(r.adMs * 1e3).toPrecision(3)} µs, plain ${(r.plainMs * 1e3).toPrecision(3)} µs; rounds ${r.ratios.map((x) => x.toFixed(2)).join(' / ')})`,
    )
  }
}
