export { cpuBackend, compileToJs, type CpuCompiledProgram } from './backend.js'
export { CALL_FREE_COPIES, CodeGenerator, PAIRED_MAX_STATEMENTS, PAIRED_MIN_NODES, type Runtime } from './codegen.js'
