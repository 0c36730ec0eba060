export { invert, invertBody, invertStmt, invertSurfaceBody } from './invert.js'
export { preprocess } from './preprocess.js'
export { Interpreter, interpretProgram, interpreterBackend } from './interpreter.js'
export {
  compileModule,
  isTenetFunction,
  TENET_FUNCTION,
  type TenetFunction,
  type TenetFunctionInfo,
  type TenetModule,
  type TenetOptions,
} from './compile.js'
export { generatedCode } from './generated-code.js'
export {
  hostConversionsOf,
  hostParams,
  isDetached,
  MAX_ARRAY_LENGTH,
  describeArgument,
  describeHostValue,
  arityError,
  argumentError,
  checkArgument,
  loadArguments,
  copyToRepresentation,
  overlapGuard,
  overlapError,
  sharesMemory,
  type OverlapGuard,
  HOST_ARRAY_CTORS,
  type HostParam,
  type HostArray,
} from './host-boundary.js'
