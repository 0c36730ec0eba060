/**
 * The learn-by-consistency programs of seed 002 §IV, our own text, and a discrete one.
 *
 * `f1` and `f2` both compute out += e^(x+y) − e^x, with x the input (0.3 in the paper), y the
 * parameter to learn (so that out = 1) and out the output. They differ in what they leave in the
 * output garbage (everything but out after the run):
 * - `f1` leaves (x, x + y): together they determine y, hence out. The garbage already knows
 *   the output, so by Theorem 1 the inverse run cannot move y: setting out to the target only
 *   changes out itself on the way back, and every forward run gives the same loss.
 * - `f2` also uncomputes x (x −= log(e^x), through the value out holds at that point), so the
 *   garbage is (x − log(e^x), x + y) — about (0, x + y), which does not determine out. The inverse
 *   run then solves for x from the target, y becomes (x + y) − x_back, and the map
 *   y ↦ 0.3 + y − log(e^(0.3 + y) − 1) has the fixed point where e^(0.3 + y) − e^0.3 = 1 with
 *   slope −1/e^0.3 ≈ −0.74 there: out reaches 1 to machine precision in about 100 steps.
 *
 * `xorKey` is a discrete example: y ^= x ^ k, then k ^= y ^ x uncomputes the key (it becomes 0),
 * so the garbage (x, 0) says nothing about y and one inverse run from the target y* sets
 * k = y* ^ x*. Gradient descent has nothing to follow here (an i32 carries no derivative); but
 * the example is trivial — it only inverts a bijection in k — and we have not found a problem on
 * which consistency training beats gradient descent in a less trivial sense.
 */
export const consistencySource = `
fn f1(out: f64, x: f64, y: f64) {
  y += identity(x)
  out -= exp(x)
  out += exp(y)
}
fn f2(out: f64, x: f64, y: f64) {
  y += identity(x)
  out -= exp(x)
  x -= log(-out)
  out += exp(y)
}
fn xor_key(y: i32, x: i32, k: i32) {
  y ^= x ^ k
  k ^= y ^ x
}`
