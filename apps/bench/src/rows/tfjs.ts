import { defineRowFamily } from '../harness/registry.js'
export const tfRows = defineRowFamily({ family: 'TF.js', rows: {} })
