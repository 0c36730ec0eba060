// The parts of the WebAssembly JS API this backend uses (the ES lib has no WebAssembly types,
// and the DOM lib would bring in much more than this package needs).
declare namespace WebAssembly {
  class Module {
    constructor(bytes: Uint8Array)
  }
  class Instance {
    constructor(module: Module, imports: Record<string, Record<string, unknown>>)
    readonly exports: Record<string, unknown>
  }
  class Memory {
    constructor(descriptor: { initial: number; maximum?: number })
    readonly buffer: ArrayBuffer
    grow(pages: number): number
  }
  class Global {
    constructor(descriptor: { value: 'i32' | 'i64' | 'f32' | 'f64'; mutable?: boolean }, value?: number)
    value: number
  }
  function validate(bytes: Uint8Array): boolean
}
