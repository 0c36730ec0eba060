export { wasmBackend, createWasmBackend, compileToWasm, type WasmOptions, type WasmProgram } from './backend.js'
