/**
 * TensorFlow.js on its pure-JS `cpu` backend (float32). Loaded lazily so the suite (and the
 * package's exports) work without touching it until a TF.js row runs.
 */
export type Tf = typeof import('@tensorflow/tfjs')

let loading: Promise<Tf> | undefined

export function loadTf(): Promise<Tf> {
  loading ??= (async () => {
    // TF.js prints a hint about tfjs-node when it starts under Node; keep the bench output clean.
    const log = console.log
    const warn = console.warn
    console.log = () => {}
    console.warn = () => {}
    try {
      const tf = await import('@tensorflow/tfjs')
      await tf.setBackend('cpu')
      await tf.ready()
      return tf
    } finally {
      console.log = log
      console.warn = warn
    }
  })()
  return loading
}

export const TF_ROW = 'TF.js (cpu)'
