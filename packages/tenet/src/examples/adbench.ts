/**
 * ADBench's objectives as Tenet programs, shared by the benchmark suite and the GradBench tool.
 *
 * Bundle adjustment. One observation: rotate X − C by the Rodrigues formula (first-order branch
 * when θ = 0), divide by depth, apply the radial distortion, the focal length and the principal
 * point, and compare with the feature, weighted by w; the weight error is 1 − w².
 *
 * - `ba_objective` is the clean form: per observation the intermediates live in ancillas that
 *   `~routine` uncomputes, so the function leaves nothing behind.
 * - `ba_rows` is the Jacobian form: every observation has its own copy of its camera and point,
 *   the intermediates are kept in a workspace (`BA_WORKSPACE` per observation, in the order of
 *   `baWorkspaceIndex`), and `loss` accumulates row `row` (0: x, 1: y) of every observation's
 *   reprojection error. One forward run plus one adjoint run yields that row's 15 non-zeros for
 *   every observation.
 *
 * GMM. `gmmPointsSource(d, k?)`: the data term over a block of points; `gmmQSource`: exp of the log-diagonal of each component's Q and its sum, once per
 * evaluation; `logsumexpSource`: log Σ exp(aᵢ), compute–copy–uncompute on local ancillas.
 */
/**
 * The projection of one observation as Tenet statements. `v(name)` gives the location of an
 * intermediate, `cam(j)`, `pt(j)` the parameters; the result is left in locations u, v, L.
 */
export function baProjection(
  v: (name: string) => string,
  cam: (j: number) => string,
  pt: (j: number) => string,
): string {
  return `
    ${v('sq')} += ${cam(0)} * ${cam(0)} + ${cam(1)} * ${cam(1)} + ${cam(2)} * ${cam(2)}
    ${v('p0')} += ${pt(0)} - ${cam(3)}
    ${v('p1')} += ${pt(1)} - ${cam(4)}
    ${v('p2')} += ${pt(2)} - ${cam(5)}
    if (${v('sq')} != 0.0, ~) {
      ${v('th')} += sqrt(${v('sq')})
      ${v('cs')} += cos(${v('th')})
      ${v('sn')} += sin(${v('th')})
      ${v('w0')} += ${cam(0)} / ${v('th')}
      ${v('w1')} += ${cam(1)} / ${v('th')}
      ${v('w2')} += ${cam(2)} / ${v('th')}
      ${v('tmp')} += (${v('w0')} * ${v('p0')} + ${v('w1')} * ${v('p1')} + ${v('w2')} * ${v('p2')}) * (1.0 - ${v('cs')})
      ${v('c0')} += ${v('p0')} * ${v('cs')} + (${v('w1')} * ${v('p2')} - ${v('w2')} * ${v('p1')}) * ${v('sn')} + ${v('w0')} * ${v('tmp')}
      ${v('c1')} += ${v('p1')} * ${v('cs')} + (${v('w2')} * ${v('p0')} - ${v('w0')} * ${v('p2')}) * ${v('sn')} + ${v('w1')} * ${v('tmp')}
      ${v('c2')} += ${v('p2')} * ${v('cs')} + (${v('w0')} * ${v('p1')} - ${v('w1')} * ${v('p0')}) * ${v('sn')} + ${v('w2')} * ${v('tmp')}
    } else {
      ${v('c0')} += ${v('p0')} + (${cam(1)} * ${v('p2')} - ${cam(2)} * ${v('p1')})
      ${v('c1')} += ${v('p1')} + (${cam(2)} * ${v('p0')} - ${cam(0)} * ${v('p2')})
      ${v('c2')} += ${v('p2')} + (${cam(0)} * ${v('p1')} - ${cam(1)} * ${v('p0')})
    }
    ${v('u')} += ${v('c0')} / ${v('c2')}
    ${v('v')} += ${v('c1')} / ${v('c2')}
    ${v('rsq')} += ${v('u')} * ${v('u')} + ${v('v')} * ${v('v')}
    ${v('L')} += 1.0 + ${cam(9)} * ${v('rsq')} + ${cam(10)} * ${v('rsq')} * ${v('rsq')}`
}

/** The intermediates of one observation, in workspace order. */
export const BA_INTERMEDIATES: readonly string[] = [
  'sq',
  'p0',
  'p1',
  'p2',
  'th',
  'cs',
  'sn',
  'w0',
  'w1',
  'w2',
  'tmp',
  'c0',
  'c1',
  'c2',
  'u',
  'v',
  'rsq',
  'L',
]
/** Intermediates kept per observation by `ba_rows`. */
export const BA_WORKSPACE = BA_INTERMEDIATES.length
/** Where intermediate `name` sits in an observation's workspace of `ba_rows`. */
export const baWorkspaceIndex = (name: string): number => BA_INTERMEDIATES.indexOf(name)

export const baSource = `
fn ba_objective(reproj: f64[], werr: f64[], cams: f64[], X: f64[], w: f64[], obs: i32[], feats: f64[], p: i32) {
  for i in 0..p {
    co: i32 <- 11 * obs[2 * i]
    xo: i32 <- 3 * obs[2 * i + 1]
    routine {
${BA_INTERMEDIATES.map((n) => `      ${n} <- 0.0`).join('\n')}
${baProjection(
  (n) => n,
  (j) => `cams[co + ${j}]`,
  (j) => `X[xo + ${j}]`,
)}
    }
    reproj[2 * i] += w[i] * (u * L * cams[co + 6] + cams[co + 7] - feats[2 * i])
    reproj[2 * i + 1] += w[i] * (v * L * cams[co + 6] + cams[co + 8] - feats[2 * i + 1])
    ~routine
    werr[i] += 1.0 - w[i] * w[i]
    xo -> 3 * obs[2 * i + 1]
    co -> 11 * obs[2 * i]
  }
}

fn ba_rows(loss: f64, row: i32, i0: i32, i1: i32, cam: f64[], pt: f64[], w: f64[], feats: f64[], ws: f64[]) {
  for i in i0..i1 {
    b: i32 <- ${BA_WORKSPACE} * (i - i0)
    co: i32 <- 11 * i
    xo: i32 <- 3 * i
${baProjection(
  (n) => `ws[b + ${BA_INTERMEDIATES.indexOf(n)}]`,
  (j) => `cam[co + ${j}]`,
  (j) => `pt[xo + ${j}]`,
)}
    if (row == 0, ~) {
      loss += w[i] * (ws[b + ${BA_INTERMEDIATES.indexOf('u')}] * ws[b + ${BA_INTERMEDIATES.indexOf('L')}] * cam[co + 6] + cam[co + 7] - feats[2 * i])
    } else {
      loss += w[i] * (ws[b + ${BA_INTERMEDIATES.indexOf('v')}] * ws[b + ${BA_INTERMEDIATES.indexOf('L')}] * cam[co + 6] + cam[co + 8] - feats[2 * i + 1])
    }
    xo -> 3 * i
    co -> 11 * i
    b -> ${BA_WORKSPACE} * (i - i0)
  }
}
`

/**
 * One BA observation as a block program for `blockJacobian`: its residual pair `r` (2), camera
 * (11), point (3), weight, feature (2), and its intermediates in the per-block workspace `ws`
 * (`BA_WORKSPACE`, written at literal indices, so the block Jacobian keeps them in scalars). The
 * Jacobian block of inputs 1–3 (camera, point, weight: 15 columns) and output 0 (2 rows) is
 * ADBench's layout of the observation's two rows.
 */
export const baBlockSource = `
fn ba_block(r: f64[], cam: f64[], pt: f64[], w: f64, feat: f64[], ws: f64[]) {
${baProjection(
  (n) => `ws[${BA_INTERMEDIATES.indexOf(n)}]`,
  (j) => `cam[${j}]`,
  (j) => `pt[${j}]`,
)}
  r[0] += w * (ws[${BA_INTERMEDIATES.indexOf('u')}] * ws[${BA_INTERMEDIATES.indexOf('L')}] * cam[6] + cam[7] - feat[0])
  r[1] += w * (ws[${BA_INTERMEDIATES.indexOf('v')}] * ws[${BA_INTERMEDIATES.indexOf('L')}] * cam[6] + cam[8] - feat[1])
}
`

/** exp of the log-diagonal of each component's Q and its per-component sums (once per evaluation). */
export const gmmQSource = `
fn gmm_q(unused: f64, d: i32, k: i32, icf: f64[], qdiag: f64[], sumq: f64[]) {
  icfsz: i32 <- div(d * (d + 1), 2)
  for c in 0..k {
    for j in 0..d {
      qdiag[c * d + j] += exp(icf[c * icfsz + j])
      sumq[c] += icf[c * icfsz + j]
    }
  }
  icfsz -> div(d * (d + 1), 2)
}
`

/** log Σ exp(a[c]) over c < k into `out` (compute–copy–uncompute: nothing left behind). */
export const logsumexpSource = `
fn logsumexp(out: f64, a: f64[], k: i32) {
  routine {
    rm: f64[] <- zeros(k)
    rm[0] += a[0]
    for c in 1..k {
      rm[c] += max(rm[c - 1], a[c])
    }
    s <- 0.0
    for c in 0..k {
      s += exp(a[c] - rm[k - 1])
    }
  }
  out += log(s) + rm[k - 1]
  ~routine
}
`

/**
 * ADBench's GMM data term for dimension d, generated so that each row of y = Q(x − μ) is one
 * expression: for the points [i0, i1) it keeps x − μ, y, main, the running maximum and the
 * shifted exponential sums in workspace arrays (the garbage the adjoint uncomputes) and adds each
 * point's log-sum-exp to `slse`. With `k` the number of components is a constant of the program;
 * without it, `k` is the function's second parameter.
 */
export function gmmPointsSource(d: number, k?: number): string {
  const K = k === undefined ? 'k' : String(k)
  const K1 = k === undefined ? 'k - 1' : String(k - 1)
  const S = (d * (d + 1)) / 2
  // icf[c·S + lower(r, col)] = Q_c[r][col] for r > col (column by column, as GradBench's `l`)
  const lower = (r: number, col: number): number => d + col * d - (col * (col + 1)) / 2 + (r - col - 1)
  const lines: string[] = []
  for (let j = 0; j < d; j++) lines.push(`      xc[o + ${j}] += x[xo + ${j}] - means[cd + ${j}]`)
  for (let r = 0; r < d; r++) {
    const terms = [`qdiag[cd + ${r}] * xc[o + ${r}]`]
    for (let col = 0; col < r; col++) terms.push(`icf[ci + ${lower(r, col)}] * xc[o + ${col}]`)
    lines.push(`      y[o + ${r}] += ${terms.join(' + ')}`)
  }
  const sq = Array.from({ length: d }, (_, r) => `y[o + ${r}] * y[o + ${r}]`).join(' + ')
  lines.push(`      main[pk + c] += alphas[c] + sumq[c] - 0.5 * (${sq})`)
  return `
fn gmm_points(slse: f64, ${k === undefined ? 'k: i32, ' : ''}i0: i32, i1: i32, alphas: f64[], means: f64[], icf: f64[], x: f64[], qdiag: f64[], sumq: f64[], xc: f64[], y: f64[], main: f64[], rm: f64[], t: f64[], s: f64[]) {
  for i in i0..i1 {
    p: i32 <- i - i0
    pk: i32 <- p * ${K}
    xo: i32 <- i * ${d}
    for c in 0..${K} {
      o: i32 <- (pk + c) * ${d}
      cd: i32 <- c * ${d}
      ci: i32 <- c * ${S}
${lines.join('\n')}
      ci -> c * ${S}
      cd -> c * ${d}
      o -> (pk + c) * ${d}
    }
    rm[pk] += main[pk]
    for c in 1..${K} {
      rm[pk + c] += max(rm[pk + c - 1], main[pk + c])
    }
    for c in 0..${K} {
      t[pk + c] += main[pk + c] - rm[pk + ${K1}]
      s[p] += exp(t[pk + c])
    }
    slse += log(s[p]) + rm[pk + ${K1}]
    xo -> i * ${d}
    pk -> p * ${K}
    p -> i - i0
  }
}
`
}
