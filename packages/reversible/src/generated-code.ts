import { TENET_FUNCTION, type TenetFunction, type TenetFunctionInfo } from './compile.js'

/**
 * The code a backend generated for a compiled function (the cpu backend: the JavaScript source
 * of the function's specialised core, in the direction `f` runs — pass `f.inverse` for the
 * inverse), or `undefined` when the backend keeps none (the interpreter, wasm). For reading
 * and debugging: the text is not an API and changes between versions.
 */
export function generatedCode(f: TenetFunction): string | undefined {
  const info = f[TENET_FUNCTION] as TenetFunctionInfo
  return info.compiled.sourceOf?.(info.name, info.inverse)
}
