/**
 * Progress on stderr: a redrawn bar when stderr is a terminal, one plain line per step otherwise
 * (CI logs, pipes).
 */
export interface Progress {
  start(total: number): void
  step(label: string): void
  note(message: string): void
  done(): void
}

export function createProgress(stream: NodeJS.WriteStream = process.stderr, enabled = true): Progress {
  let total = 0
  let current = 0
  const tty = Boolean(stream.isTTY)
  const started = performance.now()
  const elapsed = (): string => `${((performance.now() - started) / 1000).toFixed(1)}s`
  const draw = (label: string): void => {
    const width = 28
    const filled = total ? Math.round((current / total) * width) : 0
    const bar = `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`
    const cols = stream.columns ?? 100
    const line = `${bar} ${current}/${total} ${elapsed()} ${label}`
    stream.write(`\r\x1b[2K${line.slice(0, cols - 1)}`)
  }
  return {
    start(n) {
      total = n
      current = 0
      if (!enabled) return
      if (tty) draw('')
      else stream.write(`[bench] ${n} measurements planned\n`)
    },
    step(label) {
      current++
      if (!enabled) return
      if (tty) draw(label)
      else stream.write(`[bench] ${current}/${total} ${elapsed()} ${label}\n`)
    },
    note(message) {
      if (!enabled) return
      if (tty) stream.write(`\r\x1b[2K${message}\n`)
      else stream.write(`[bench] ${message}\n`)
      if (tty) draw('')
    },
    done() {
      if (!enabled) return
      if (tty) stream.write(`\r\x1b[2K`)
      stream.write(`[bench] done in ${elapsed()}\n`)
    },
  }
}
