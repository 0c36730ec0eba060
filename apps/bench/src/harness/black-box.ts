/**
 * A black box for a case's inputs, the same for every row (plain TS and every engine alike): the
 * suite's counterpart of Criterion's `black_box` and Google Benchmark's `DoNotOptimize`.
 *
 * A row's `run` reads its inputs from the case object (`c.nu`, `c.z`, `c.inst.n`, …), and the
 * timing loop calls `run` in a loop of its own, so V8 may inline `run` and the function it calls
 * into that loop (it does, for small functions such as the Bessel objective). Without a black box
 * V8 then also folds the inputs into the inlined code: the case object is a constant of the
 * optimised code (the closure's context is specialised), and V8 tracks which fields of an object
 * were never stored to since they were first set (const fields), so a load of such a field from a
 * constant object becomes the constant itself, and e.g. `half ** nu` with `nu` = 2 and `nu!`
 * become `half * half` and `2` at compile time. A real caller passes values the compiler cannot
 * see; the baseline benefited most (the single-z Bessel objective: about 8.4 ns folded, 11.9 ns
 * not, on the development machine).
 *
 * {@link blackBox} stores, in place, a different value of the same type into every data field that
 * holds a primitive and then the original value again. The values are unchanged, but V8 marks
 * the fields mutable in the object's map, so every read of them is a real load (one field load,
 * what any caller that keeps its inputs in an object pays), and nothing is folded. A field that
 * holds a typed array gets the same treatment with an empty view of the same type (`subarray(0,
 * 0)`, the same map, so the field keeps its type): the array is then no constant either, and its
 * length and data pointer are loaded as a caller's would be (V8 never folds its elements). It
 * walks plain objects, class instances and arrays reachable from the case (cycles are visited
 * once); functions, accessors, read-only fields and frozen objects are left alone.
 *
 * A row that derives a value from the case in its setup and uses it in `run` (a size, a value
 * computed once such as the Bessel inverse row's J(z)) reads it the same way: from the case itself
 * inside `run` (`c.A.cols`), or from an object it passes through {@link blackBox}
 * (`const at = blackBox({ J })`, then `at.J`), never as a closure constant of `run` — V8
 * folds an immutable context slot of an inlined closure as it folds a const field (found by
 * review 11, D7: the sparse-mul rows' `n = c.A.cols`, the Bessel inverse row's `J`).
 *
 * `TENET_BENCH_BLACK_BOX=0` in the environment switches it off (for A/B comparisons; child
 * processes inherit it).
 */

/** Whether the harness black-boxes the cases' inputs (`TENET_BENCH_BLACK_BOX=0` switches it off). */
export function blackBoxEnabled(): boolean {
  return process.env.TENET_BENCH_BLACK_BOX !== '0'
}

/** A value of the same primitive type as `v` and different from it (the field's representation stays). */
function other(v: number | string | boolean | bigint): number | string | boolean | bigint {
  switch (typeof v) {
    case 'number':
      // an integer stays in a small-integer field; a double field takes either
      return v === 0 ? 1 : 0
    case 'boolean':
      return !v
    case 'bigint':
      return v === 0n ? 1n : 0n
    default:
      return v === '' ? ' ' : ''
  }
}

function isWalked(v: unknown): v is object {
  if (v === null || typeof v !== 'object' || ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return false
  if (Array.isArray(v)) return true
  const proto = Object.getPrototypeOf(v)
  // plain objects, null-prototype objects and instances of user classes; not Maps, Sets, Promises…
  return proto === null || proto === Object.prototype || Object.getPrototypeOf(proto) === Object.prototype
}

/**
 * Makes every primitive input reachable from `value` opaque to the JIT, in place, without
 * changing any value (see the module comment), and returns `value`. A no-op when
 * {@link blackBoxEnabled} is false.
 */
export function blackBox<T>(value: T): T {
  if (!blackBoxEnabled()) return value
  const seen = new Set<object>()
  const walk = (o: object) => {
    if (seen.has(o)) return
    seen.add(o)
    if (Array.isArray(o)) {
      // elements are never folded; only objects inside are walked
      for (const e of o) if (isWalked(e)) walk(e)
      return
    }
    if (Object.isFrozen(o)) return
    for (const key of Object.keys(o)) {
      const d = Object.getOwnPropertyDescriptor(o, key)
      if (!d || !('value' in d)) continue
      const v = d.value as unknown
      if (isWalked(v)) walk(v)
      else if (ArrayBuffer.isView(v) && !(v instanceof DataView)) {
        if (!d.writable) continue
        const rec = o as Record<string, unknown>
        rec[key] = (v as Uint8Array).subarray(0, 0)
        rec[key] = v
      } else if (
        d.writable &&
        v !== null &&
        v !== undefined &&
        typeof v !== 'object' &&
        typeof v !== 'function' &&
        typeof v !== 'symbol'
      ) {
        const rec = o as Record<string, unknown>
        rec[key] = other(v as number | string | boolean | bigint)
        rec[key] = v
      }
    }
  }
  if (isWalked(value)) walk(value)
  return value
}
