// The dsh v0 oracle: drives the published @deepseek-ai/dsh-session-persistence-jsonl
// (installed by install.sh) for tailproof's differential tests. It reads one
// JSON request per stdin line and writes one JSON answer per stdout line:
//
//   {"op":"write","root","compression","packChunks","id","cwd","seed","turns","big"?}
//       generates a session (seeded; turns of text, reasoning, tool calls and a
//       compaction) and appends it through JsonlSessionPersistence, one
//       append() — one zstd frame or one raw batch — per checkpoint. Answers
//       {"events": [...]} (the logical log as written).
//   {"op":"load","root","compression","id"}
//       answers what the package makes of the file: loadStored() (the
//       physical prefix and its torn marker), inspect() (the balanced view,
//       no write), then load() (which repairs the file). Each part is
//       {"ok":...} or {"error": message}.
//
// Every backend instance is built fresh per request, so nothing is cached
// between cuts. Written for tailproof; no code is taken from dsh.
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { createInterface } from 'node:readline'

const dir = process.env.TAILPROOF_DSH_ORACLE
const req = createRequire(dir + '/package.json')
const load = (name) => import(pathToFileURL(req.resolve(name)).href)
const { Context } = await load('@deepseek-ai/cordis')
const { SessionStore, Session } = await load('@deepseek-ai/dsh-session')
const { JsonlSessionPersistence } = await load('@deepseek-ai/dsh-session-persistence-jsonl')

async function backend(root, compression, packChunks) {
  const ctx = new Context()
  await ctx.plugin(SessionStore)
  await ctx.plugin(JsonlSessionPersistence, { root, compression, packChunks: packChunks ?? true })
  return { ctx, p: ctx.sessionPersistence }
}

// mulberry32: a small seeded PRNG so a session is reproducible from its seed.
function rng(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const WORDS = ['the', 'file', 'é', 'listing', 'src', 'main.go', '"quoted"', 'tab\there', 'line\nbreak', '日本', '😀', 'done.', ' ', 'x']

// generate builds a plausible v0 log in the shapes the published package's
// types declare (dsh-session 0.1.0-rc.8 lib/types/types.d.ts), with
// checkpoints where the real checkpoint policy flushes: before model
// dispatch, before tool dispatch and after each step.
function generate(seed, turns, big) {
  const r = rng(seed)
  const pick = (xs) => xs[Math.floor(r() * xs.length)]
  const words = (n) => Array.from({ length: n }, () => pick(WORDS)).join(' ')
  const events = []
  const checkpoints = []
  let time = 1781000000000 + seed
  const push = (type, data, extra) => {
    time += Math.floor(r() * 3)
    events.push({ type, seq: events.length, time, data, ...(extra ?? {}) })
    return events.length - 1
  }
  const cut = () => { if (checkpoints.at(-1) !== events.length) checkpoints.push(events.length) }
  const surface = []
  const model = { kind: 'model', provider: 'deepseek', model: 'deepseek-chat' }
  for (let turn = 1; turn <= turns; turn++) {
    push('turn/start', { turn })
    surface.push(push('user/message', { id: `u${turn}`, role: 'user', content: [{ type: 'text', text: words(3) }], source: { kind: 'user' } }, { surfaceOp: 'append' }))
    const steps = 1 + Math.floor(r() * 3)
    for (let step = 1; step <= steps; step++) {
      push('step/start', { turn, step })
      if (step === 1 && turn === 1) push('request/header', { header: { config: { provider: 'deepseek', model: 'deepseek-chat' } }, reason: 'initial' })
      cut() // before model dispatch
      const content = []
      if (r() < 0.5) {
        const n = 1 + Math.floor(r() * 6)
        push('assistant/chunk', { turn, step, chunk: { type: 'block-start', index: 0, blockType: 'reasoning' } })
        let text = ''
        for (let i = 0; i < n; i++) { const t = words(1); text += t; push('assistant/chunk', { turn, step, chunk: { type: 'reasoning-delta', index: 0, text: t } }) }
        push('assistant/chunk', { turn, step, chunk: { type: 'block-end', index: 0, block: { type: 'reasoning', text } } })
        content.push({ type: 'reasoning', text })
      }
      const callTool = step < steps || r() < 0.3
      if (callTool) {
        const id = `call_${turn}_${step}`
        const args = JSON.stringify({ command: words(2) })
        const index = content.length
        push('assistant/chunk', { turn, step, chunk: { type: 'block-start', index, blockType: 'tool-call' } })
        const parts = [args.slice(0, 3), args.slice(3, 7), args.slice(7)]
        parts.forEach((p, i) => push('assistant/chunk', { turn, step, chunk: { type: 'tool-call-delta', index, id, ...(i === 0 ? { name: 'bash' } : {}), argumentsDelta: p } }))
        push('assistant/chunk', { turn, step, chunk: { type: 'block-end', index, block: { type: 'tool-call', id, name: 'bash', arguments: args } } })
        content.push({ type: 'tool-call', id, name: 'bash', arguments: args })
        push('assistant/chunk', { turn, step, chunk: { type: 'finish', reason: { kind: 'tool-calls' } } })
        surface.push(push('assistant/message', { turn, step, message: { id: `a${turn}.${step}`, role: 'assistant', content, source: model } }, { surfaceOp: 'append' }))
        cut() // before tool dispatch
        const callSeq = push('tool/call', { turn, step, callId: id, name: 'bash', arguments: args })
        if (r() < 0.5) cut()
        // big: the first result is ~400 KB, so its frame holds several zstd blocks.
        const text = big && turn === 1 && step === 1 ? Array.from({ length: 40000 }, () => words(2)).join('\n') : words(4)
        surface.push(push('tool/result', { turn, step, message: { id: `r${turn}.${step}`, role: 'user', content: [{ type: 'tool-result', toolCallId: id, content: [{ type: 'text', text }] }], source: { kind: 'tool', callId: id } } }, { surfaceOp: 'append', sourceEventSeqs: [callSeq] }))
      } else {
        const n = Math.floor(r() * 8)
        const index = content.length
        push('assistant/chunk', { turn, step, chunk: { type: 'block-start', index, blockType: 'text' } })
        let text = ''
        for (let i = 0; i < n; i++) { const t = words(1 + Math.floor(r() * 2)); text += t; push('assistant/chunk', { turn, step, chunk: { type: 'text-delta', index, text: t } }) }
        push('assistant/chunk', { turn, step, chunk: { type: 'block-end', index, block: { type: 'text', text } } })
        content.push({ type: 'text', text })
        push('assistant/chunk', { turn, step, chunk: { type: 'finish', reason: { kind: 'stop' } } })
        surface.push(push('assistant/message', { turn, step, message: { id: `a${turn}.${step}`, role: 'assistant', content, source: model }, usage: { inputTokens: 100 + turn, outputTokens: n } }, { surfaceOp: 'append' }))
      }
      push('step/end', { turn, step })
      cut() // after each step
    }
    if (turn % 3 === 0 && surface.length >= 2) {
      // A compaction: log-only brackets and a summary message that replaces
      // the surface so far (SurfaceOp replace, citing every shadowed node).
      push('compaction/start', { turn })
      const shadowed = surface.splice(0, surface.length)
      surface.push(push('user/message', { id: `c${turn}`, role: 'user', content: [{ type: 'text', text: 'summary: ' + words(5) }], source: { kind: 'user' } },
        { surfaceOp: { op: 'replace', start: shadowed[0], end: shadowed.at(-1) }, sourceEventSeqs: shadowed }))
      push('compaction/end', { turn })
    }
    push('turn/end', { turn, reason: { kind: 'completed' } })
    cut()
  }
  return { events, checkpoints }
}

async function part(fn) {
  try { return { ok: await fn() } } catch (e) { return { error: String(e?.message ?? e) + (e?.cause ? ' (cause: ' + String(e.cause?.message ?? e.cause) + ')' : '') } }
}

async function handle(m) {
  if (m.op === 'write') {
    const { events, checkpoints } = generate(m.seed, m.turns, m.big)
    Session.create(m.id, events) // the package's own validation of the generated shapes
    const { ctx, p } = await backend(m.root, m.compression, m.packChunks)
    await p.create({ version: 0, id: m.id, createdAt: 1781000000000, ...(m.cwd ? { cwd: m.cwd } : {}), delegationDepth: 0 })
    let from = 0
    for (const end of checkpoints) { await p.append(m.id, events.slice(from, end)); from = end }
    await ctx.dispose?.()
    return { events }
  }
  if (m.op === 'load') {
    const { ctx, p } = await backend(m.root, m.compression)
    const stored = await part(async () => {
      const s = await p.loadStored(m.id)
      return { events: s.events.length, tornMarker: s.tornMarker ? { truncateTo: s.tornMarker.truncateTo, recovered: s.tornMarker.recoveredEvents.length } : null }
    })
    const inspect = await part(async () => (await p.inspect(m.id)).events)
    const loaded = await part(async () => (await p.load(m.id)).events)
    await ctx.dispose?.()
    return { stored, inspect, load: loaded }
  }
  if (m.op === 'zstd') {
    // Node's own zstd, as the backend calls it: compress one checksummed
    // frame (compressZstdFrame), and decode a torn frame's bytes with
    // ZSTD_e_flush (decompressZstdPrefix), for the frame decoder's checks.
    const { zstdCompressSync, zstdDecompressSync, constants } = await import('node:zlib')
    if (m.compress !== undefined) return { frame: zstdCompressSync(Buffer.from(m.compress, 'base64'), { params: { [constants.ZSTD_c_checksumFlag]: 1 } }).toString('base64') }
    try {
      return { plain: zstdDecompressSync(Buffer.from(m.prefix, 'base64'), { finishFlush: constants.ZSTD_e_flush }).toString('base64') }
    } catch (e) {
      return { error: String(e?.message ?? e) }
    }
  }
  throw new Error('unknown op ' + m.op)
}

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity })
for await (const line of rl) {
  if (line.trim() === '') continue
  let out
  try { out = await handle(JSON.parse(line)) } catch (e) { out = { fatal: String(e?.stack ?? e) } }
  process.stdout.write(JSON.stringify(out) + '\n')
}
