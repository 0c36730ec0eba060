import { describe, expect, it } from 'vitest'
import { sharedArray } from './pool.js'
import { zeroShared } from './zero.js'

describe('zeroShared', () => {
  it('zeroes views of shared memory of any length, leaving their neighbours alone', () => {
    const block = sharedArray(100).fill(3)
    zeroShared(block.subarray(10, 20))
    zeroShared(block.subarray(30, 90)) // longer than any before: the zeros grow
    zeroShared(block.subarray(95, 97)) // shorter: a view of the zeros
    zeroShared(block.subarray(50, 50))
    const want = Array.from({ length: 100 }, (_, i) =>
      (i >= 10 && i < 20) || (i >= 30 && i < 90) || (i >= 95 && i < 97) ? 0 : 3,
    )
    expect(Array.from(block)).toEqual(want)
    // and plain arrays
    const plain = new Float64Array(5).fill(-2)
    zeroShared(plain)
    expect(Array.from(plain)).toEqual([0, 0, 0, 0, 0])
  })
})
