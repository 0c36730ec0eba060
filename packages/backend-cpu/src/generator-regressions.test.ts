/**
 * Regression tests: core bugs found by the random-program generator, each as its minimal
 * program, asserting the correct behaviour (all fixed). The static error for `g(x, x + 1)`
 * lives in packages/tenet/src/errors.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { cpuBackend } from '@tenet/backend-cpu'
import { backendUnderTest, referenceBackend } from '@tenet/testing'

const backends = [referenceBackend(), backendUnderTest(cpuBackend)]

describe.each(backends.map((b) => [b.name, b] as const))(
  'regressions found by the generator (%s)',
  (_name, backend) => {
    // `~{ }` and `~routine` are expanded by preprocess() before type checking, so the inverse of
    // `t -> 0` becomes the untyped allocation `t <- 0`, which is f64 (the declared i32 is lost):
    // TenetStaticError "`+=` between f64 and i32".
    it('an i32 ancilla deallocated against a literal inside `~{ }`', () => {
      const m = backend.compile(
        'fn f(y: i32, x: i32) {\n  ~{\n    t: i32 <- 0\n    t += x\n    y += t\n    t -= x\n    t -> 0\n  }\n}',
      )
      expect(m.f!(1, 2)).toEqual([-1, 2])
    })

    // The same with a stack: the inverse of `s -> []` is `s <- []` without its declared type,
    // so the checker asks for a declaration: "`[]` allocates a stack: declare it".
    it('a stack deallocated inside a routine that is undone', () => {
      const m = backend.compile(
        'fn f(y: i32, x: i32) {\n  routine {\n    s: stack<i32> <- []\n    push(s, x)\n    pop(s, x)\n    s -> []\n  }\n  y += x\n  ~routine\n}',
      )
      expect(m.f!(1, 2)).toEqual([3, 2])
    })

    // A negated loop variable passed to a parameter the callee only reads is a negated
    // dataview, and the checker treats it as a write: "cannot write the loop variable `i` (read)".
    it('`-i` (i a loop variable) passed to a read-only parameter', () => {
      const m = backend.compile(
        'fn g(a: i32, b: i32) { b += a }\nfn f(y: i32) {\n  for i in 0..3 {\n    g(-i, y)\n  }\n}',
      )
      expect(m.f!(0)).toEqual([-3])
    })

    // A literal-only sub-expression is typed f64 where no type is expected, even when the
    // other operand is i32: "`*` between f64 and i32" (while `2 * x > 0` is accepted).
    it('`(2 + 3) * x` in a condition with x: i32', () => {
      const m = backend.compile('fn f(x: i32, y: i32) {\n  if ((2 + 3) * x > 0, ~) {\n    y += 1\n  }\n}')
      expect(m.f!(1, 0)).toEqual([1, 1])
    })
    // The same with `**`, which was missing from the checker's list of literal-only operators:
    // `(3 ** 2) + x > 0` failed with "`+` between f64 and i32".
    it('`(3 ** 2) + x` in a condition with x: i32', () => {
      const m = backend.compile('fn f(x: i32, y: i32) {\n  if ((3 ** 2) + x > 0, ~) {\n    y += 3 ** 2\n  }\n}')
      expect(m.f!(-5, 0)).toEqual([-5, 9])
      expect(m.f!(-10, 0)).toEqual([-10, 0])
    })
    // ... but only with a non-negative exponent: `2 ** -1` is not an integer constant, so
    // `(2 ** -1) + x` with x: i32 is 0.5 + f64(x) (the i32 is promoted, issue 20), never `0 + x`
    it('`(2 ** -1) + x` with x: i32 is 0.5 + x', () => {
      const m = backend.compile('fn f(x: i32, y: i32) {\n  if ((2 ** -1) + x > 0, ~) {\n    y += 1\n  }\n}')
      expect(m.f!(0, 0)).toEqual([0, 1])
      expect(m.f!(-1, 0)).toEqual([-1, 0])
    })

    // Inside a conversion the expected type leaks into literal-only operands the same way:
    // `f64((1 ^ 2) + x)` with x: i32 fails with "`^` works on bool or i32, not f64".
    it('`f64((1 ^ 2) + x)` with x: i32', () => {
      const m = backend.compile('fn f(y: f64, x: i32) {\n  y += f64((1 ^ 2) + x)\n}')
      expect(m.f!(0, 1)).toEqual([4, 1])
    })

    // A negated name as the argument of a pure call is parsed as a negated dataview (`neg`),
    // which neither the checker's type inference nor the expression evaluators handle:
    // `f64(-x)` silently gives NaN and `i32(-x)` gives 0 (on both backends) ...
    it('`f64(-x)` is -x', () => {
      const m = backend.compile('fn f(y: f64, x: i32) {\n  y += f64(-x)\n}')
      expect(m.f!(0, 3)).toEqual([-3, 3])
    })
    it('`i32(-x)` is -x', () => {
      const m = backend.compile('fn f(y: i32, x: i32) {\n  y += i32(-x)\n}')
      expect(m.f!(0, 3)).toEqual([-3, 3])
    })
    // ... and `sin(-x)`, `div(-x, 3)` are rejected: "`sin` takes floating-point arguments, not undefined".
    it('`sin(-x)` compiles', () => {
      const m = backend.compile('fn f(y: f64, x: f64) {\n  y += sin(-x)\n}')
      expect(m.f!(0, 0.5)).toEqual([Math.sin(-0.5), 0.5])
    })
    it('`div(-x, 3)` compiles', () => {
      const m = backend.compile('fn f(y: i32, x: i32) {\n  y += div(-x, 3)\n}')
      expect(m.f!(0, 7)).toEqual([-2, 7])
    })

    // The printed inverse of a loop whose start prints with a leading parenthesis is
    // `for i in reverse (a & 1) + 1..4`, which the parser reads as a call of a function
    // `reverse`: "unknown function `reverse`". So `f.inverse.source` does not parse back.
    it('the printed inverse of `for i in (a & 1) + 1..4` parses back', () => {
      const src = 'fn f(y: i32, a: i32) {\n  for i in (a & 1) + 1..4 {\n    y += i\n  }\n}'
      const m = backend.compile(src)
      const both = backend.compile(`${src}\n${m.f!.inverse.source}`)
      expect(both.f_inverse!(6, 0)).toEqual([0, 0])
    })
  },
)
