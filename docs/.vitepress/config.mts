import { defineConfig } from 'vitepress'

const guide = [
  { text: 'Install', link: '/guide/install' },
  { text: 'A first program', link: '/guide/first-program' },
  { text: 'The language', link: '/guide/language' },
  { text: 'Standard instructions', link: '/guide/instructions' },
  { text: 'Number systems', link: '/guide/number-systems' },
  { text: 'Automatic differentiation', link: '/guide/ad' },
  { text: 'Checkpointing', link: '/guide/checkpointing' },
  { text: 'Backends', link: '/guide/backends' },
  { text: 'Writing a primitive', link: '/guide/primitives' },
  { text: 'Adapters and other AD engines', link: '/guide/adapters' },
  { text: 'Dual numbers and unary normal form', link: '/guide/engines' },
  { text: 'WebGPU', link: '/guide/webgpu' },
  { text: 'Parallel gradients', link: '/guide/parallel' },
  { text: 'Performance tips', link: '/guide/performance' },
  { text: 'Command line', link: '/guide/cli' },
]

export default defineConfig({
  title: 'Tenet',
  description:
    'A reversible programming language embedded in TypeScript, and automatic differentiation by running programs backwards.',
  cleanUrls: true,
  // every link is checked at build time: a dead link fails the build
  ignoreDeadLinks: false,
  srcExclude: ['test/**', 'README.md', 'bench/**'],
  themeConfig: {
    nav: [
      { text: 'Guide', link: '/guide/install' },
      { text: 'API', link: '/api/' },
    ],
    sidebar: {
      '/guide/': [{ text: 'Guide', items: guide }],
      '/api/': [
        { text: 'API reference', link: '/api/' },
        { text: 'Guide', items: guide },
      ],
    },
    search: { provider: 'local' },
  },
})
