/** Anything a peer returns whose values can be read synchronously (TF.js tensors, jax-js arrays). */
export interface SyncReadable {
  dataSync(): ArrayLike<number>
}

/** Read one result or a list of results (in order) into one flat float64 vector. */
export function readFlat(out: SyncReadable | readonly SyncReadable[]): Float64Array {
  const list: readonly SyncReadable[] = Array.isArray(out) ? out : [out as SyncReadable]
  const parts = list.map((a) => a.dataSync())
  const res = new Float64Array(parts.reduce((s, p) => s + p.length, 0))
  let o = 0
  for (const p of parts) {
    res.set(p, o)
    o += p.length
  }
  return res
}
