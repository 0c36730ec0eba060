/** The examples menu: the papers' programs, each with arguments and a loss to start from. */
import { examples as paperExamples } from 'tenet'

export interface Example {
  title: string
  source: string
  fn: string
  args: string[]
  /** Index of the loss parameter for the gradient panel. */
  loss: number
}

export const EXAMPLES: Example[] = [
  {
    title: 'Listing 4: a reversible multiplier',
    source: 'fn multiplier(a: f64, b: f64, c: f64) {\n  a += b * c\n}\n',
    fn: 'multiplier',
    args: ['0', '3', '5'],
    loss: 0,
  },
  {
    title: 'Norm with compute–copy–uncompute',
    source: [
      'fn norm(r: f64, x: f64[]) {',
      '  routine {',
      '    s <- 0.0',
      '    for i in 0..len(x) { s += x[i] * x[i] }',
      '  }',
      '  r += sqrt(s)',
      '  ~routine',
      '}',
      '',
    ].join('\n'),
    fn: 'norm',
    args: ['0', '[3, 4, 12]'],
    loss: 0,
  },
  {
    title: 'Listing 11: Fibonacci, recursively',
    source: [
      'fn rrfib(out: i32, n: i32) {',
      '  if (n >= 1, ~) {',
      '    counter: i32 <- 0',
      '    counter += n',
      '    while (counter > 1, counter != n) {',
      '      rrfib(out, counter - 1)',
      '      counter -= 2',
      '    }',
      '    counter -= n % 2',
      '    counter -> 0',
      '  }',
      '  out += 1',
      '}',
      '',
    ].join('\n'),
    fn: 'rrfib',
    args: ['0', '12'],
    loss: 0,
  },
  {
    title: 'Listings 5–6: complex log',
    source: [
      'fn complex_log(y_re: f64, y_im: f64, x_re: f64, x_im: f64) {',
      '  routine {',
      '    n <- 0.0',
      '    n += sqrt(x_re * x_re + x_im * x_im)',
      '  }',
      '  y_re += log(n)',
      '  y_im += atan2(x_im, x_re)',
      '  ~routine',
      '}',
      '',
    ].join('\n'),
    fn: 'complex_log',
    args: ['0', '0', '3', '4'],
    loss: 0,
  },
  {
    title: 'Listing 9: Bessel function J_ν(z)',
    source: `${paperExamples.besselSource.trim()}\n`,
    fn: 'ibesselj',
    args: ['0', '2', '1.0'],
    loss: 0,
  },
  {
    title: 'Listing 14: unitary (Givens) matrix multiply',
    source: `${paperExamples.ummSource.trim()}\n`,
    fn: 'i_umm',
    args: ['[1, 0, 0, 0, 1, 0]', '[0.3, -0.2, 0.5]', '3', '2'],
    loss: 0,
  },
  {
    title: 'A leapfrog step (a reversible integrator)',
    source: [
      'fn leapfrog(q: f64, p: f64, dt: f64, n: i32) {',
      '  for k in 0..n {',
      '    p -= 0.5 * dt * sin(q)',
      '    q += dt * p',
      '    p -= 0.5 * dt * sin(q)',
      '  }',
      '}',
      '',
    ].join('\n'),
    fn: 'leapfrog',
    args: ['1', '0', '0.1', '100'],
    loss: 0,
  },
]
