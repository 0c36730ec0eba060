export { wasmBackend, createWasmBackend, compileToWasm, type WasmOptions } from './backend.js'
