import { TenetError, type HostTypedArray, type ResidentArray, type ResidentMemory } from '@tenet/ir'
import { elemInfo } from './codegen.js'
import { MATH_CONSTANTS_AT, MATH_CONSTANTS_BYTES } from './math/constants.js'

/**
 * The linear memory and its views, shared by every wrapper of every program that lives in it
 * (the programs one backend compiles share one memory: see \`createMemory\`).
 */
export interface MemoryState {
  memory: WebAssembly.Memory
  buffer: ArrayBuffer
  F64: Float64Array
  F32: Float32Array
  I32: Int32Array
  U8: Uint8Array
  /** The heap top (a mutable i32 global that every module of the memory imports); read only by nested calls. */
  hp: WebAssembly.Global
  /** The memory's size in bytes when the views were made. */
  bytes: number
  /**
   * Where the first call's arguments go: after the results area and the resident arrays (which
   * move it up as they are allocated).
   */
  heapBase: number
  /** Wrapper calls under way, of any program of the memory (a host function called from wasm may call into a module again). */
  depth: number
  /** Released resident blocks, reused first fit. */
  free: Block[]
}

/** What is one program's own in a shared memory. */
export interface ProgramState {
  /** The check site of an out-of-range access that trapped (−1 when none; see \`OOB_SITE\`). */
  oob: WebAssembly.Global
  /** Clears \`oob\` and returns the error of the out-of-range access it recorded. */
  outOfBounds(): Error
  /**
   * The error of a call that threw \`e\`: where the call trapped on a failed check (an
   * out-of-range access, \`oob\`, or a run-time check, \`FAIL_SITE\` of the code generator),
   * that check's error, its record cleared; otherwise \`e\` itself.
   */
  failure(e: unknown): Error
  /** Set by the program's \`dispose\`. */
  disposed?: boolean
  /** The resident blocks this program allocated and has not released (given back on \`dispose\`). */
  blocks: Set<Block>
}

/**
 * Bytes at the bottom of a memory where a call leaves its scalar results (8 per parameter): one
 * area shared by the memory's programs, as a call writes it last and its wrapper reads it at once.
 * A function with more parameters than fit has a block of its own.
 */
export const RESULTS_BYTES = 32768

/**
 * Where the heap starts in a fresh memory: above the results area and the math routines'
 * constants table (\`MATH_CONSTANTS_AT\`, right after the results area: see \`math/constants.ts\`).
 */
export const HEAP_START = MATH_CONSTANTS_AT + MATH_CONSTANTS_BYTES

/** A fresh memory of one page, with the heap top global its modules import. */
export function createMemory(): MemoryState {
  const memory = new WebAssembly.Memory({ initial: 1 })
  const hp = new WebAssembly.Global({ value: 'i32', mutable: true }, HEAP_START)
  const s = { memory, hp, heapBase: HEAP_START, depth: 0, free: [] } as unknown as MemoryState
  refresh(s)
  return s
}

export const VIEW: Record<string, 'F64' | 'F32' | 'I32' | 'U8'> = { f64: 'F64', f32: 'F32', i32: 'I32', bool: 'U8' }

export function refresh(s: MemoryState): void {
  const b = s.memory.buffer
  s.buffer = b
  s.bytes = b.byteLength
  s.F64 = new Float64Array(b)
  s.F32 = new Float32Array(b)
  s.I32 = new Int32Array(b)
  s.U8 = new Uint8Array(b)
}

/** Grows the memory to hold at least `bytes` bytes. */
export function grow(s: MemoryState, bytes: number): void {
  const have = s.memory.buffer.byteLength
  if (bytes > have) s.memory.grow(Math.ceil((bytes - have) / 65536))
  refresh(s)
}

/** A region of the resident area: its byte offset and size. */
export interface Block {
  at: number
  bytes: number
}

type ViewCtor = new (buffer: ArrayBuffer, at: number, n: number) => HostTypedArray

/**
 * One resident array. A class, so that every \`array\` read goes through one getter of one shape
 * (an object literal per array gave each its own getter, and V8 called them megamorphically:
 * about 12 ns a read).
 */
class Resident implements ResidentArray {
  private view: HostTypedArray
  private live = true
  constructor(
    private readonly s: MemoryState,
    private readonly p: ProgramState,
    private readonly ctor: ViewCtor,
    private readonly block: Block,
    readonly length: number,
  ) {
    this.view = new ctor(s.buffer, block.at, length)
    this.view.fill(0)
  }

  get array(): HostTypedArray {
    if (!this.live) throw new Error('wasm backend: this resident array was released')
    if (this.p.disposed) throw new TenetError('call/disposed', 'this resident array belongs to a disposed module')
    // a grown memory detaches the view (its length becomes 0)
    const n = this.length
    if (this.view.length !== n || (n === 0 && this.view.buffer !== this.s.memory.buffer)) {
      if (this.s.U8.length === 0) refresh(this.s)
      this.view = new this.ctor(this.s.buffer, this.block.at, n)
    }
    return this.view
  }

  /** (An own property, so that it works detached from the handle, as a callback.) */
  readonly release = (): void => {
    if (!this.live) return
    this.live = false
    // (a disposed program gave its blocks back already)
    if (this.p.blocks.delete(this.block)) this.s.free.push(this.block)
  }
}

/**
 * The resident arrays of one program: blocks of a region between the results area and the heap,
 * carved from the bottom of the heap of the memory the program lives in. Released blocks are
 * reused by later allocations that fit (first fit, whichever program of the memory released
 * them); the region itself never shrinks.
 */
export function residentMemory(s: MemoryState, p: ProgramState): ResidentMemory {
  return {
    allocate(elem, n) {
      if (p.disposed) throw new TenetError('call/disposed', 'resident arrays cannot be allocated in a disposed module')
      if (!Number.isInteger(n) || n < 0)
        throw new RangeError(`a resident array needs a non-negative integer length, got ${n}`)
      const V = VIEW[elem]
      if (!V) throw new RangeError(`resident arrays hold f64, f32, i32 or bool elements, not \`${elem}\``)
      const el = elemInfo(elem as never)
      const block = allocateBlock(s, p, n * el.size, `${n} ${elem} elements`)
      const ctor = { F64: Float64Array, F32: Float32Array, I32: Int32Array, U8: Uint8Array }[V]
      return new Resident(s, p, ctor, block, n)
    },
    busy: () => s.depth > 0,
    buffer: () => {
      // (the views of a grown memory are detached: their length is 0)
      if (s.U8.length === 0) refresh(s)
      return s.buffer
    },
  }
}

/** A block of at least \`size\` bytes (16-byte aligned) for program \`p\`, from the free list or the heap's bottom. */
export function allocateBlock(s: MemoryState, p: ProgramState, size: number, what = `${size} bytes`): Block {
  if (s.depth > 0)
    throw new Error('wasm backend: resident arrays cannot be allocated while a call of the module is under way')
  const bytes = Math.max(16, Math.ceil(size / 16) * 16)
  const k = s.free.findIndex((b) => b.bytes >= bytes)
  let block: Block
  if (k >= 0) {
    block = s.free[k]!
    s.free.splice(k, 1)
  } else {
    if (s.heapBase + bytes > 2 ** 31) throw new RangeError(`a resident array of ${what} does not fit in wasm memory`)
    // grown first: a memory that cannot grow leaves the heap base where it was
    if (s.heapBase + bytes > s.bytes || s.U8.length === 0) grow(s, s.heapBase + bytes)
    block = { at: s.heapBase, bytes }
    s.heapBase += bytes
  }
  p.blocks.add(block)
  return block
}

/** Gives back every block a program holds (its \`dispose\`, or its finalizer). */
export function releaseBlocks(s: MemoryState, p: ProgramState): void {
  for (const b of p.blocks) s.free.push(b)
  p.blocks.clear()
}
