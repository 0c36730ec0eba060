export * from './papers.js'
