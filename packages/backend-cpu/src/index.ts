export { cpuBackend, compileToJs } from './backend.js'
export { CodeGenerator, PAIRED_MAX_STATEMENTS, type Runtime } from './codegen.js'
