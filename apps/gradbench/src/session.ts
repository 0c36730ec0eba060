/**
 * Driving a GradBench tool process from JavaScript, as GradBench's harness does: write one
 * message line, read one response line. Used by the replay tests and the `replay` script.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { createInterface } from 'node:readline'

/** A running tool: `send` writes a message and resolves with the parsed response line. */
export interface ToolSession {
  send(message: unknown): Promise<Record<string, unknown>>
  /** Every stdout line received, for checking that nothing else was written. */
  readonly lines: string[]
  /** Everything written to stderr. */
  stderr(): string
  close(): Promise<number | null>
}

/** Starts `command args…` and talks GradBench's protocol with it. */
export function startTool(command: string, args: string[]): ToolSession {
  const child: ChildProcessWithoutNullStreams = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] })
  const lines: string[] = []
  const waiting: Array<(line: string) => void> = []
  const queued: string[] = []
  let err = ''
  let exited = false
  child.stderr.on('data', (d: Buffer) => (err += d.toString()))
  const exit = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      exited = true
      for (const w of waiting.splice(0)) w('')
      resolve(code)
    }),
  )
  createInterface({ input: child.stdout, crlfDelay: Infinity }).on('line', (line) => {
    lines.push(line)
    const w = waiting.shift()
    if (w) w(line)
    else queued.push(line)
  })
  const next = (): Promise<string> => {
    const line = queued.shift()
    if (line !== undefined) return Promise.resolve(line)
    if (exited) return Promise.resolve('')
    return new Promise((resolve) => waiting.push(resolve))
  }
  return {
    lines,
    stderr: () => err,
    async send(message) {
      child.stdin.write((typeof message === 'string' ? message : JSON.stringify(message)) + '\n')
      const line = await next()
      if (line === '') throw new Error(`the tool closed its output (stderr: ${err.slice(-2000)})`)
      return JSON.parse(line) as Record<string, unknown>
    },
    close() {
      child.stdin.end()
      return exit
    },
  }
}
