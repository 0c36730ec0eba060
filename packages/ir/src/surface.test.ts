/** The public surfaces of `@tenet/ir`: the root for users, `./backend` for backend and transform authors. */
import { describe, expect, it } from 'vitest'
import * as backend from './backend.js'
import * as root from './index.js'

const HELPERS = [
  'walk',
  'rootName',
  'readNames',
  'writtenParams',
  'inlineSmallCalls',
  'userNames',
  'flatten',
  'forEachStatement',
  'inRun',
  'key',
  'offsetOf',
  'promotableElements',
  'sharedSubexpressions',
  'hostNumber',
  'optimize',
]

describe('@tenet/ir surfaces', () => {
  it('the compiler helpers are on the backend subpath only', () => {
    for (const name of HELPERS) {
      expect(typeof (backend as Record<string, unknown>)[name], `backend.${name}`).toBe('function')
      expect(Object.hasOwn(root, name), `root re-exports ${name}`).toBe(false)
    }
  })

  it('the root exports what users need: syntax, checking, the registry and the primitive builders', () => {
    for (const name of [
      'parse',
      'check',
      'printFunction',
      'createRegistry',
      'unary',
      'binary',
      'pure',
      'bijection',
      'selfInverse',
      'arrayPrimitive',
      'TenetError',
    ])
      expect(typeof (root as Record<string, unknown>)[name], name).toBe('function')
  })
})
