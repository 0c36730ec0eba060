import { defineRowFamily } from '../harness/registry.js'
export const jaxRows = defineRowFamily({ family: 'jax-js', rows: {} })
