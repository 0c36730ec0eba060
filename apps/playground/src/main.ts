/** The playground page: an editor, and live panels for what the engine computes. */
import {
  codeGenerationAllowed,
  compileSource,
  graphOf,
  gradientOf,
  paramsOf,
  printed,
  runFunction,
  scheduleOf,
  type BackendChoice,
  type Compiled,
} from './engine.js'
import { EXAMPLES } from './examples.js'

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T
const editor = $<HTMLTextAreaElement>('source')
const errors = $<HTMLPreElement>('errors')
const status = $<HTMLSpanElement>('status')
const fnSelect = $<HTMLSelectElement>('fn')
const backendSelect = $<HTMLSelectElement>('backend')
const exampleSelect = $<HTMLSelectElement>('example')
const argsBox = $<HTMLDivElement>('args')
const lossSelect = $<HTMLSelectElement>('loss')

let compiled: Compiled | undefined
let generation = 0
const argTexts = new Map<string, string[]>()

EXAMPLES.forEach((e, i) => exampleSelect.add(new Option(e.title, String(i))))
$('csp-note').textContent = codeGenerationAllowed()
  ? ''
  : 'This page forbids generated code (Content-Security-Policy): programs run on the interpreter.'

function current() {
  if (!compiled?.ok) return undefined
  return compiled.module[fnSelect.value]
}

function renderArgs() {
  const f = current()
  argsBox.replaceChildren()
  lossSelect.replaceChildren()
  if (!f) return
  const saved = argTexts.get(fnSelect.value) ?? []
  paramsOf(f).forEach((p, i) => {
    const label = document.createElement('label')
    label.textContent = `${p.name}: ${p.text} `
    const input = document.createElement('input')
    input.id = `arg-${i}`
    input.value = saved[i] ?? (p.text.endsWith('[]') ? '[1, 2, 3]' : '1')
    input.addEventListener('input', () => {
      argTexts.set(fnSelect.value, texts())
    })
    label.append(input)
    argsBox.append(label)
    if (p.text === 'f64' || p.text === 'f32') lossSelect.add(new Option(p.name, String(i)))
  })
}

const texts = () => [...argsBox.querySelectorAll('input')].map((i) => (i as HTMLInputElement).value)

function renderFunction() {
  const f = current()
  for (const id of ['inverse', 'adjoint', 'run-out', 'grad-out']) $(id).textContent = ''
  $('graph').innerHTML = ''
  if (!f) return
  const p = printed(f)
  $('inverse').textContent = p.inverse
  $('adjoint').textContent = p.adjoint
  $('graph').innerHTML = graphOf(f)
  renderArgs()
}

async function recompile() {
  const mine = ++generation
  status.textContent = 'compiling…'
  const result = await compileSource(editor.value, backendSelect.value as BackendChoice)
  if (mine !== generation) return // a newer edit won
  compiled = result
  if (!result.ok) {
    errors.textContent = result.error
    errors.hidden = false
    status.textContent = 'error'
    return
  }
  errors.hidden = true
  errors.textContent = ''
  status.textContent = `ok — ${result.backend}`
  const keep = fnSelect.value
  fnSelect.replaceChildren(...result.names.map((n) => new Option(n, n)))
  if (result.names.includes(keep)) fnSelect.value = keep
  renderFunction()
}

let timer: ReturnType<typeof setTimeout> | undefined
editor.addEventListener('input', () => {
  clearTimeout(timer)
  timer = setTimeout(recompile, 250)
})
backendSelect.addEventListener('change', recompile)
fnSelect.addEventListener('change', renderFunction)

function show(id: string, r: { ok: boolean; text: string }) {
  const el = $(id)
  el.textContent = r.text
  el.className = r.ok ? 'out' : 'out bad'
}
$('run-forward').addEventListener('click', () => {
  const f = current()
  if (f) show('run-out', runFunction(f, texts(), false))
})
$('run-inverse').addEventListener('click', () => {
  const f = current()
  if (f) show('run-out', runFunction(f, texts(), true))
})
$('run-grad').addEventListener('click', () => {
  const f = current()
  if (!f) return
  if (!lossSelect.value) {
    show('grad-out', { ok: false, text: 'this function has no f64/f32 scalar parameter to be the loss' })
    return
  }
  show('grad-out', gradientOf(f, texts(), Number(lossSelect.value)))
})

function renderSchedule() {
  const kind = $<HTMLSelectElement>('sched-kind').value as 'bennett' | 'revolve'
  const steps = Math.max(1, Math.min(512, Number($<HTMLInputElement>('sched-steps').value) || 16))
  const param = Number($<HTMLInputElement>('sched-param').value) || 2
  try {
    const s = scheduleOf(kind, steps, param)
    $('schedule').innerHTML = s.svg
    $('sched-cost').textContent = s.cost
  } catch (e) {
    $('sched-cost').textContent = e instanceof Error ? e.message : String(e)
  }
}
for (const id of ['sched-kind', 'sched-steps', 'sched-param']) $(id).addEventListener('input', renderSchedule)

function loadExample(i: number) {
  const e = EXAMPLES[i]!
  editor.value = e.source
  argTexts.set(e.fn, e.args)
  void recompile().then(() => {
    if (compiled?.ok && compiled.names.includes(e.fn)) {
      fnSelect.value = e.fn
      renderFunction()
      lossSelect.value = String(e.loss)
    }
  })
}
exampleSelect.addEventListener('change', () => loadExample(Number(exampleSelect.value)))

loadExample(0)
renderSchedule()
