/**
 * The n-body accelerations of a leapfrog integrator, which `@tenet/ad`'s and the backends' tests
 * (replay-uncall) call from a leapfrog of their own.
 */

/**
 * `accel(a, x, m)`: adds to `a` the gravitational accelerations (G = 0.5) of the bodies at `x`
 * (three coordinates each) of masses `m`, the differences and distances in a routine; with
 * `scalars`, `accel(a, x, m, nb, g)`, the number of bodies and G as parameters; `T`, the float
 * type. Ends with a newline.
 */
export const accelSource = (
  scalars = false,
  T: 'f64' | 'f32' = 'f64',
): string => `fn accel(a: ${T}[], x: ${T}[], m: ${T}[]${scalars ? `, nb: i32, g: ${T}` : ''}) {
  for i in 0..${scalars ? 'nb' : 'len(m)'} {
    for j in 0..${scalars ? 'nb' : 'len(m)'} {
      if (i != j, ~) {
        routine {
          dx: ${T}[] <- zeros(3)
          for c in 0..3 { dx[c] += x[3 * j + c] - x[3 * i + c] }
          r2: ${T} <- 0.0
          r2 += dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2]
          r: ${T} <- 0.0
          r += sqrt(r2)
          s: ${T} <- 0.0
          s += ${scalars ? 'g' : '0.5'} * m[j] / (r2 * r)
        }
        for c in 0..3 { a[3 * i + c] += s * dx[c] }
        ~routine
      }
    }
  }
}
`
