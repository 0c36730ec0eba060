export { wasmBackend, compileToWasm } from './backend.js'
