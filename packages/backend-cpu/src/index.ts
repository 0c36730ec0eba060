export { cpuBackend, compileToJs } from './backend.js'
export { CodeGenerator, type Runtime } from './codegen.js'
