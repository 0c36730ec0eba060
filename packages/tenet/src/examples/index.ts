export * from './papers.js'
export * from './adbench.js'
