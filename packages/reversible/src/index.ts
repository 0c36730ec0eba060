export { invert, invertBody, invertStmt, invertSurfaceBody } from './invert.js'
export { preprocess } from './preprocess.js'
export { Interpreter, interpretProgram, interpreterBackend } from './interpreter.js'
export {
  compileModule, hostConversionsOf, isDetached, isTenetFunction, TENET_FUNCTION,
  type TenetFunction, type TenetFunctionInfo, type TenetModule, type TenetOptions,
} from './compile.js'
export { generatedCode } from './generated-code.js'
