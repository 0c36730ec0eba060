/**
 * What an eval module of the tool provides: for each GradBench function name, a `prepare` step
 * that turns the message's JSON input into typed arrays and compiled Tenet functions (not timed),
 * a `run` step (timed, once per run) and an `output` step that turns the last run's result into
 * the JSON value of the response (not timed).
 */
export interface Prepared {
  /** One evaluation of the function on the prepared input (the timed part). */
  run(): void
  /** The JSON value of the response, from the last run. */
  output(): unknown
}

/** One GradBench function of a module, e.g. `gmm`'s `jacobian`. */
export type EvalFunction = (input: unknown) => Prepared

/** A GradBench module (one eval): its functions by name. */
export type EvalModule = Readonly<Record<string, EvalFunction>>
