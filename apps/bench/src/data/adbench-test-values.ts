/**
 * ADBench's unit-test values for its `test.txt` inputs (test/cpp/modules/common/GmmTests.cpp and
 * BaTests.cpp), shared by the plain-TS and Tenet tests.
 */

/** GMM objective on gmm/test.txt. */
export const GMM_TEST_OBJECTIVE = 8.07380408004975791

/** GMM gradient on gmm/test.txt, in ADBench's order (alphas, means, icf). */
export const GMM_TEST_GRADIENT = [
  1.08662855508652456e-1, -7.41270039523898472e-1, 6.32607184015246071e-1, 1.11692576532787013, 1.63333013551455269e-1,
  -2.19989824071193142e-2, 2.27778292254236098e-1, 1.20963025612832187, -6.06375920733956339e-2, 2.58529994051162237,
  1.12632694524213789e-1, 3.85744309849611777e-1, 7.35180573182305508e-2, 5.41836362715595232, -3.21494409677446469e-1,
  1.71892309775004937, 8.60091090790866875e-1, -9.94640930466322848e-1,
]

/** BA on ba/test.txt: every observation's reprojection error and the weight error. */
export const BA_TEST_REPROJECTION = [-0.269048849235189402, 0.259944792677901881] as const
export const BA_TEST_WEIGHT_ERROR = 0.826092651515999976

/** BA on ba/test.txt: the Jacobian's shape (nrows, ncols, rows.length, cols.length) and some values. */
export const BA_TEST_JACOBIAN_SHAPE = [30, 62, 31, 310] as const
export const BA_TEST_JACOBIAN_VALUES: ReadonlyArray<readonly [number, number]> = [
  [0, 2.28877202208246757e2],
  [1, 6.34574811495545418e2],
  [2, -7.82222866259340549e2],
  [3, 2.42892615607159668],
  [4, -1.17828079628011313e1],
  [5, 2.5416931248774346],
  [6, -1.03657084958518086],
  [7, 4.17022000000000004e-1],
  [8, 0],
  [9, -3.50739521096005205e2],
  [10, -9.12107773668008576e2],
  [11, -2.42892615607159668],
  [12, 1.17828079628011313e1],
  [307, -8.34044000000000008e-1],
  [308, -8.34044000000000008e-1],
  [309, -8.34044000000000008e-1],
]
