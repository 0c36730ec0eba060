#!/usr/bin/env node
/**
 * Packs what `scripts/gpu-bench.sh` needs on a GPU machine without network into one small
 * folder, `gpu-bench/` (ignored by git), instead of the whole node_modules (hundreds of MB):
 *
 *   gpu-bench/bench.mjs                the bench CLI (apps/bench/dist/cli.js) and every JS
 *                                      dependency, bundled by esbuild
 *   gpu-bench/tenet.js, table1-tenet.js, adapter.js
 *                                      the row modules the bench imports again per backend
 *                                      (`./tenet.js?instance=wasm`), bundled the same way
 *   gpu-bench/worker-entry.js, tenet-worker.js, gmm-worker.js, ba-worker.js
 *                                      the worker threads' modules of the "N threads" rows,
 *                                      bundled the same way
 *   gpu-bench/device-check.mjs         @tenet/backend-webgpu's device checks (precise math
 *                                      against Math, random-program conformance against cpu)
 *   gpu-bench/node_modules/webgpu/     the `webgpu` package with only its linux-x64 Dawn binary
 *   gpu-bench/lib/libvulkan.so.1       this machine's Vulkan loader, used only where the GPU
 *                                      machine has none
 *   gpu-bench/node.xz                  (with --with-node) this machine's node binary, xz-compressed,
 *                                      for a GPU machine without Node
 *
 * Run after building (`npx turbo run build`): `node scripts/gpu-bench-pack.mjs [--with-node]`.
 * It prints the folder's size; carry `gpu-bench` (one path, under 64 MiB).
 */
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, readdirSync, realpathSync, renameSync, rmSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const out = join(root, 'gpu-bench')
const withNode = process.argv.includes('--with-node')
const require = createRequire(join(root, 'package.json'))

const cli = join(root, 'apps/bench/dist/cli.js')
if (!existsSync(cli)) {
  console.error('gpu-bench-pack: apps/bench/dist/cli.js is missing: build first (npx turbo run build)')
  process.exit(1)
}

// start afresh, but keep a node.xz made before (compressing node takes minutes)
mkdirSync(out, { recursive: true })
for (const f of readdirSync(out))
  if (f !== 'node.xz' || !withNode) rmSync(join(out, f), { recursive: true, force: true })

const esbuild = require('esbuild')
// CommonJS dependencies inside an ES module bundle need `require`, `__filename`, `__dirname`
const banner = [
  "import { createRequire as __tenetCreateRequire } from 'node:module';",
  "import { fileURLToPath as __tenetFileURLToPath } from 'node:url';",
  'const require = __tenetCreateRequire(import.meta.url);',
  'const __filename = __tenetFileURLToPath(import.meta.url);',
  "const __dirname = __filename.slice(0, __filename.lastIndexOf('/'));",
].join('\n')
const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node18',
  minify: true,
  legalComments: 'none',
  external: ['webgpu'],
  banner: { js: banner },
  logLevel: 'warning',
}
// the bench and the row modules it imports a second time under a query (\`./tenet.js?instance=wasm\`,
// so that each backend's rows get their own module instance and type feedback), in one build
// with code splitting: every module they share (the backend and checks switches of
// \`tenet/compile.ts\`, the workloads, the packages) is one module in a shared chunk. Bundled
// apart, each row module had its own copy of those switches, and rows that compile through a
// workload's module (the wasm and checks-on rows of most workloads) ran the cpu code unchecked.
// Everything lands beside bench.mjs, where those relative imports resolve.
await esbuild.build({
  ...common,
  entryPoints: {
    bench: cli,
    tenet: join(root, 'apps/bench/dist/rows/tenet.js'),
    'table1-tenet': join(root, 'apps/bench/dist/rows/table1-tenet.js'),
    adapter: join(root, 'apps/bench/dist/rows/adapter.js'),
  },
  splitting: true,
  outdir: out,
  entryNames: '[name]',
  chunkNames: 'chunk-[hash]',
})
renameSync(join(out, 'bench.js'), join(out, 'bench.mjs'))
// the worker threads' modules of the "Tenet (cpu, N threads)" rows: @tenet/parallel starts
// `worker-entry.js` (and `tenet-worker.js` for gradient pools) from beside the module that
// creates the pool, and the bench's GMM/BA pools load `gmm-worker.js`/`ba-worker.js` from beside
// theirs; bundled, that is beside bench.mjs
for (const f of [
  'packages/parallel/dist/worker-entry.js',
  'packages/parallel/dist/tenet-worker.js',
  'apps/bench/dist/parallel/gmm-worker.js',
  'apps/bench/dist/parallel/ba-worker.js',
])
  await esbuild.build({ ...common, entryPoints: [join(root, f)], outfile: join(out, f.slice(f.lastIndexOf('/') + 1)) })
await esbuild.build({
  ...common,
  entryPoints: [join(root, 'packages/backend-webgpu/src/device-check.cli.ts')],
  outfile: join(out, 'device-check.mjs'),
  // the workspace packages' TypeScript sources (their `source` export condition)
  conditions: ['source'],
})

// the webgpu package: its entry and the linux-x64 Dawn binary only
const webgpuDir = dirname(
  realpathSync(require.resolve('webgpu/package.json', { paths: [join(root, 'packages/backend-webgpu')] })),
)
const dst = join(out, 'node_modules/webgpu')
mkdirSync(join(dst, 'dist/linux-x64'), { recursive: true })
for (const f of ['index.js', 'package.json', 'LICENSE.md'])
  if (existsSync(join(webgpuDir, f))) copyFileSync(join(webgpuDir, f), join(dst, f))
copyFileSync(join(webgpuDir, 'dist/linux-x64/dawn.node'), join(dst, 'dist/linux-x64/dawn.node'))

// a Vulkan loader for machines that have the NVIDIA driver's ICD but no loader
for (const dir of ['/usr/lib/x86_64-linux-gnu', '/usr/lib64', '/usr/lib']) {
  const f = join(dir, 'libvulkan.so.1')
  if (existsSync(f)) {
    mkdirSync(join(out, 'lib'), { recursive: true })
    copyFileSync(realpathSync(f), join(out, 'lib/libvulkan.so.1'))
    break
  }
}

if (withNode && !existsSync(join(out, 'node.xz'))) {
  execFileSync('sh', ['-c', `xz -T0 -6 -c "${process.execPath}" > "${join(out, 'node.xz')}"`], { stdio: 'inherit' })
}

const size = (p) =>
  statSync(p).isDirectory() ? readdirSync(p).reduce((s, f) => s + size(join(p, f)), 0) : statSync(p).size
const mib = size(out) / 2 ** 20
console.log(
  `gpu-bench-pack: wrote ${out} (${mib.toFixed(1)} MiB${withNode ? `, node ${process.version} included` : ''})`,
)
for (const f of readdirSync(out)) console.log(`  ${f}  ${(size(join(out, f)) / 2 ** 20).toFixed(1)} MiB`)
if (mib > 64) console.log('gpu-bench-pack: over 64 MiB: leave out --with-node, or carry node separately')
