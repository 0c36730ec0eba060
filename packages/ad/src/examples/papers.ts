/**
 * The papers' programs (seed 001) as Tenet source: the complex logarithm, the sparse (CSC) dot
 * product, the unitary matrix multiply by Givens rotations (i_umm), and the Bessel function J_ν(z)
 * by its Taylor series. Their text lives in `@tenet/testing/programs` (the one home that the
 * backends' tests, which cannot import this package, share); exported here as `@tenet/ad`'s
 * examples.
 */
export {
  besselReciprocalSource,
  besselSource,
  besselTermsSource,
  complexLogSource,
  sparseDotMergeSource,
  sparseDotSource,
  ummSource,
  unitarySource,
} from '@tenet/testing/programs'
