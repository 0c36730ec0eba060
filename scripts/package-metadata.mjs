#!/usr/bin/env node
// Fills in the publishing metadata of every public workspace package (packages/*, apps/*):
// repository (with the package's directory), homepage, bugs, keywords, `./package.json` in the
// exports map, a `files` list that leaves tests out and takes the changelog, publishConfig with
// provenance, a LICENSE file beside the package.json, and an "Install" section in the README.
// Idempotent: run it after adding a package (`node scripts/package-metadata.mjs`);
// `--check` only reports what is missing (exit 1), as packages.test.ts does in CI.
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const REPO = 'https://github.com/tenet-lang/tenet'
const check = process.argv.includes('--check')

/** The public workspace packages: [folder relative to the root, package.json]. */
export function publicPackages() {
  const out = []
  for (const group of ['packages', 'apps']) {
    for (const name of readdirSync(join(root, group))) {
      const file = join(root, group, name, 'package.json')
      if (!existsSync(file)) continue
      const pkg = JSON.parse(readFileSync(file, 'utf8'))
      if (!pkg.private) out.push([`${group}/${name}`, pkg])
    }
  }
  return out
}

const BASE_KEYWORDS = ['tenet', 'reversible-computing', 'automatic-differentiation', 'autodiff', 'typescript']

/** What `pkg` in `dir` should have; the problems found when `fix` is false. */
function apply(dir, pkg, fix) {
  const problems = []
  const want = (cond, what, change) => {
    if (!cond) {
      problems.push(what)
      if (fix) change()
    }
  }
  want(pkg.repository?.directory === dir, 'repository', () => {
    pkg.repository = { type: 'git', url: `git+${REPO}.git`, directory: dir }
  })
  want(typeof pkg.homepage === 'string', 'homepage', () => {
    pkg.homepage = `${REPO}/tree/main/${dir}#readme`
  })
  want(typeof pkg.bugs?.url === 'string', 'bugs', () => {
    pkg.bugs = { url: `${REPO}/issues` }
  })
  want(Array.isArray(pkg.keywords) && pkg.keywords.length > 0, 'keywords', () => {
    pkg.keywords = BASE_KEYWORDS
  })
  want(pkg.exports?.['./package.json'] === './package.json', 'exports ./package.json', () => {
    pkg.exports = { ...pkg.exports, './package.json': './package.json' }
  })
  const files = pkg.files ?? []
  for (const f of ['dist', '!src/**/*.test.ts', '!src/**/*.test-d.ts', 'CHANGELOG.md']) {
    want(files.includes(f), `files ${f}`, () => {
      pkg.files = [...(pkg.files ?? []).filter((x) => x !== f), f]
    })
  }
  want(pkg.publishConfig?.access === 'public' && pkg.publishConfig?.provenance === true, 'publishConfig', () => {
    pkg.publishConfig = { access: 'public', provenance: true }
  })
  want(existsSync(join(root, dir, 'LICENSE')), 'LICENSE', () =>
    copyFileSync(join(root, 'LICENSE'), join(root, dir, 'LICENSE')),
  )
  const readme = join(root, dir, 'README.md')
  const text = existsSync(readme) ? readFileSync(readme, 'utf8') : ''
  want(text.includes(`npm i ${pkg.name}`), 'README install section', () => {
    const lines = text.split('\n')
    const section = ['## Install', '', '```sh', `npm i ${pkg.name}`, '```', '']
    // after the title and the first paragraph
    let at = lines.findIndex((l, i) => i > 0 && l.trim() === '')
    at = at < 0 ? lines.length : at + 1
    while (at < lines.length && lines[at].trim() !== '' && !lines[at].startsWith('#')) at++
    lines.splice(at, 0, ...(at < lines.length && lines[at].trim() === '' ? ['', ...section.slice(0, -1)] : section))
    writeFileSync(readme, lines.join('\n'))
  })
  return problems
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  let bad = 0
  for (const [dir, pkg] of publicPackages()) {
    const problems = apply(dir, pkg, !check)
    if (problems.length) {
      bad++
      console.log(`${dir}: ${check ? 'missing' : 'added'} ${problems.join(', ')}`)
      if (!check) writeFileSync(join(root, dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`)
    }
  }
  if (check && bad) process.exit(1)
}
