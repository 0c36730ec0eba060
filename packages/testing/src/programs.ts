/**
 * `@tenet/testing/programs`: the listings that benchmarks, examples and tests share (the papers'
 * programs and the bench's kernels) as Tenet source text, without the rest of the package, so that
 * a runtime module can import them.
 */
export {
  csrLossSource,
  heatLossSource,
  hornerLossSource,
  lvSource,
  rk4LossSource,
  rnnLossSource,
  softmaxCeLossSource,
} from './kernel-programs.js'
export {
  besselReciprocalSource,
  besselSource,
  besselTermsSource,
  complexLogSource,
  sparseDotMergeSource,
  sparseDotSource,
  ummSource,
  unitarySource,
} from './paper-programs.js'
