// "Same state as the transcript": random conversations are turned into the events a server
// would publish, delivered as a client could receive them (in order, with duplicates, a 4008
// reconnect that replays a backlog, a 4009 resync to a fresh init, a new epoch mid-reply), and
// folded by the reducer; the result must be the stored transcript, whatever the delivery.
import { describe, expect, it } from 'vitest'
import type { AgentFrame } from './events.gen'
import { chatReducer, initialState, toolResultsByCall, toolView, type ChatMessage, type ChatState, type Part, type PendingApproval } from './reducer'

/** A frame as the tests write it: the fields a case is about (the reducer reads no others). */
type ServerEvent = { type: string; seq?: number; epoch?: string; [k: string]: unknown }

/** Hands a test's frame to the reducer as the wire type it stands for. */
const wire = (e: ServerEvent) => e as unknown as AgentFrame

function rng(seed: number) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)),
    chance: (p: number) => next() < p,
  }
}
type Rng = ReturnType<typeof rng>

const words = ['alpha', 'beta', 'gamma', 'delta', 'MARA', 'VBAK', 'ünïcode', '表', '**bold**', '`code`', '\n\n', '- item\n']

function sentence(r: Rng, n: number, prefix = '') {
  const out: string[] = []
  for (let i = 0; i < n; i++) out.push(prefix + words[r.int(0, words.length - 1)])
  return out.join(' ')
}

function chunks(r: Rng, text: string): string[] {
  const out: string[] = []
  let i = 0
  while (i < text.length) {
    const n = r.int(1, 7)
    out.push(text.slice(i, i + n))
    i += n
  }
  return out
}

interface Snapshot {
  messages: ChatMessage[]
  approvals: PendingApproval[]
  status: string
  title: string
}

/** A conversation as the server publishes it: the events and, after each, what is stored. */
interface Conversation {
  events: ServerEvent[]
  after: Snapshot[] // after[i]: the stored state once events[i] was published
  transcript: ChatMessage[]
  title: string
  userIds: string[]
}

function generate(r: Rng): Conversation {
  const events: ServerEvent[] = []
  const after: Snapshot[] = []
  const messages: ChatMessage[] = []
  let approvals: PendingApproval[] = []
  let status = 'idle'
  let title = ''
  let msgSeq = 0
  let ids = 0
  const userIds: string[] = []
  const id = (p: string) => `${p}-${++ids}`
  const emit = (e: ServerEvent) => {
    events.push({ ...e, id: `ev-${events.length}` })
    after.push({ messages: [...messages], approvals: [...approvals], status, title })
  }
  const store = (m: Omit<ChatMessage, 'seq' | 'created_at' | 'agent_id'>) => {
    const full: ChatMessage = { ...m, seq: ++msgSeq, agent_id: 'agent-1', created_at: `2026-01-01T00:00:${String(msgSeq % 60).padStart(2, '0')}Z` }
    messages.push(full)
    emit({ type: 'message', message: full })
  }
  const setStatus = (s: string) => {
    if (status === s) return
    status = s
    emit({ type: 'status', status: s })
  }

  const turns = r.int(1, 4)
  for (let t = 0; t < turns; t++) {
    const uid = id('user')
    userIds.push(uid)
    const content = `question ${t}: ${sentence(r, r.int(1, 5))}`
    store({ id: uid, role: 'user', content, status: 'complete', parts: [{ type: 'text', text: content }] })
    setStatus('active')
    const steps = r.int(1, 3)
    for (let s = 0; s < steps; s++) {
      const aid = id('asst')
      const reasoning = r.chance(0.5) ? sentence(r, r.int(1, 6)) : ''
      const text = sentence(r, r.int(1, 30))
      // An abandoned attempt (a lost worker): its text must vanish on `retry`.
      if (r.chance(0.3)) {
        const lost = sentence(r, r.int(1, 8), 'LOST')
        if (reasoning) emit({ type: 'thinking_start', message_id: aid })
        for (const c of chunks(r, lost).slice(0, r.int(1, 5))) emit({ type: 'stream', message_id: aid, delta: c })
        emit({ type: 'retry', message_id: aid, attempt: 2 })
      }
      if (reasoning) {
        emit({ type: 'thinking_start', message_id: aid })
        for (const c of chunks(r, reasoning)) emit({ type: 'thinking', message_id: aid, delta: c })
        emit({ type: 'thinking_end', message_id: aid, size: reasoning.length })
      }
      const pieces = chunks(r, text)
      const outcome = r.next()
      if (outcome < 0.1) {
        // Stopped mid-reply: the partial text is stored as a `stopped` message.
        const kept = pieces.slice(0, r.int(0, pieces.length))
        for (const c of kept) emit({ type: 'stream', message_id: aid, delta: c })
        const partial = kept.join('')
        store({ id: aid, role: 'assistant', content: partial, status: 'stopped', parts: [{ type: 'text', text: partial }] })
        emit({ type: 'stopped', message_id: uid })
        break
      }
      if (outcome < 0.15) {
        for (const c of pieces.slice(0, r.int(0, pieces.length))) emit({ type: 'stream', message_id: aid, delta: c })
        emit({ type: 'error', error: 'model unavailable' })
        break
      }
      for (const c of pieces) emit({ type: 'stream', message_id: aid, delta: c })
      emit({ type: 'stream_end', message_id: aid })
      const last = s === steps - 1
      const calls = last ? [] : Array.from({ length: r.int(1, 2) }, (_, k) => ({ id: id('call'), name: k % 2 ? 'save_note' : 'sap_read_table', arguments: JSON.stringify({ table: 'T00' + k }) }))
      const parts: Part[] = [
        ...(reasoning ? [{ type: 'reasoning' as const, text: reasoning, size: reasoning.length }] : []),
        { type: 'text', text },
        ...calls.map((c) => ({ type: 'tool_call' as const, ...c })),
      ]
      store({ id: aid, role: 'assistant', content: text, status: 'complete', model: 'offline:demo', parts })
      if (t === 0 && s === 0) {
        title = `Title ${r.int(1, 99)}`
        emit({ type: 'title_update', title })
      }
      for (const c of calls) {
        const ask = r.chance(0.5)
        let result = `rows of ${c.arguments}`
        let rejected = false
        if (ask) {
          approvals = [...approvals, { tool_call_id: c.id, tool: c.name, arguments: c.arguments, mode: 'confirm_before_execution', requested_by: 'alice' }]
          emit({ type: 'approval_needed', tool_call_id: c.id, tool: c.name, arguments: c.arguments, mode: 'confirm_before_execution', requested_by: 'alice' })
          setStatus('waiting')
          approvals = approvals.filter((a) => a.tool_call_id !== c.id)
          if (r.chance(0.5)) {
            emit({ type: 'tool_approved', tool_call_id: c.id, tool: c.name, mode: 'confirm_before_execution', decided_by: 'alice' })
          } else {
            rejected = true
            result = 'User rejected this tool call'
            emit({ type: 'tool_rejected', tool_call_id: c.id, tool: c.name, reason: 'no', decided_by: 'alice' })
          }
          setStatus('active')
        }
        if (!rejected) {
          emit({ type: 'tool_update', tool_call_id: c.id, tool: c.name, status: 'running', arguments: c.arguments })
          emit({ type: 'tool_update', tool_call_id: c.id, tool: c.name, status: 'done', result })
        }
        store({ id: id('tool'), role: 'tool', content: result, status: 'complete', tool_call_id: c.id,
          parts: [{ type: 'tool_result', tool_call_id: c.id, name: c.name, content: result, is_error: rejected, rejected: rejected || undefined, stored: false, size: result.length }] })
      }
    }
    setStatus('idle')
  }
  return { events, after, transcript: [...messages], title, userIds }
}

/** Numbers the events: seq 1.. in epoch e1, or restarting at 1 in e2 from index `breakAt`. */
function number(events: ServerEvent[], breakAt = Infinity): ServerEvent[] {
  let seq = 0
  return events.map((e, i) => {
    if (i === breakAt) seq = 0
    return { ...e, seq: ++seq, epoch: i >= breakAt ? 'e2' : 'e1' }
  })
}

/** The `init` the server sends after events[0..i] (i = -1: before any): the stored state, and
 * partial text rebuilt from the log of the current epoch (incomplete when its start is older). */
function initAt(conv: Conversation, wire: ServerEvent[], i: number): ServerEvent {
  const snap: Snapshot = i >= 0 ? conv.after[i] : { messages: [], approvals: [], status: 'idle', title: '' }
  const epoch = i >= 0 ? (wire[i].epoch as string) : 'e1'
  const seq = i >= 0 ? (wire[i].seq as number) : 0
  const stored = new Set(snap.messages.map((m) => m.id))
  const partial = new Map<string, { message_id: string; text: string; reasoning: string; incomplete?: boolean }>()
  let live = true // no idle/stop/error since: partial text is still streaming
  for (let k = i; k >= 0; k--) {
    const e = wire[k]
    if (e.type === 'stopped' || e.type === 'error' || (e.type === 'status' && e.status === 'idle')) live = false
    if (!live || e.type === 'status') break // the turn in progress starts at its last status change
  }
  if (live) {
    const starts = new Map<string, number>() // since the last retry of each message
    for (let k = 0; k <= i; k++) {
      const e = conv.events[k]
      const mid = e.message_id as string
      if (e.type === 'retry') starts.set(mid, k + 1)
      else if ((e.type === 'stream' || e.type === 'thinking' || e.type === 'thinking_start') && !starts.has(mid)) starts.set(mid, k)
    }
    for (const [mid, from] of starts) {
      if (stored.has(mid)) continue
      const p = { message_id: mid, text: '', reasoning: '' } as { message_id: string; text: string; reasoning: string; incomplete?: boolean }
      let seen = false
      for (let k = from; k <= i; k++) {
        const e = wire[k]
        if (e.message_id !== mid) continue
        if (e.epoch !== epoch) {
          p.incomplete = true
          continue
        }
        if (e.type === 'stream') p.text += e.delta
        if (e.type === 'thinking') p.reasoning += e.delta
        seen = true
      }
      if (seen || p.incomplete) partial.set(mid, p)
    }
  }
  return {
    type: 'init', seq, epoch,
    agent: { id: 'agent-1', title: snap.title, model: 'offline:demo' },
    status: snap.status,
    messages: snap.messages,
    pending_approvals: snap.approvals,
    partial: [...partial.values()],
  }
}

/** Applies one frame and checks the streaming text at each `stream_end`: no gap, no duplicate. */
function apply(state: ChatState, f: ServerEvent, conv: Conversation): ChatState {
  const next = chatReducer(state, wire(f))
  if (f.type === 'stream_end') {
    const p = next.partials.find((x) => x.message_id === f.message_id)
    const final = conv.transcript.find((m) => m.id === f.message_id)
    if (p && final) {
      if (p.incomplete) expect(final.content.endsWith(p.text)).toBe(true)
      else expect(p.text).toBe(final.content)
    }
  }
  if (f.type === 'retry' && next !== state) expect(next.partials.find((x) => x.message_id === f.message_id)).toBeUndefined()
  return next
}

function deliver(conv: Conversation, r: Rng, mode: 'plain' | 'dupes' | 'backlog' | 'resync' | 'epoch'): ChatState {
  const n = conv.events.length
  const breakAt = mode === 'epoch' ? r.int(0, n - 1) : Infinity
  const wire = number(conv.events, breakAt)
  let s = chatReducer(initialState, { type: 'local/socket', state: 'connecting' })
  // The page opens before anything happened, or somewhere in the middle.
  let start = mode === 'plain' ? -1 : r.int(-1, Math.min(n - 1, breakAt - 1))
  s = apply(s, initAt(conv, wire, start), conv)
  const sendOptimistic = (i: number) => {
    const e = conv.events[i]
    const m = e.message as ChatMessage | undefined
    if (e.type === 'message' && m?.role === 'user' && r.chance(0.7)) {
      s = chatReducer(s, { type: 'local/send', outgoing: { client_message_id: m.id, content: m.content, attachments: [] } })
      s = chatReducer(s, { type: 'local/sent', client_message_id: m.id, queued: r.int(0, 1) })
    }
  }
  let i = start + 1
  while (i < n) {
    if (i === breakAt) {
      // The relay sees a new epoch: 4009, the client reconnects with its old cursor and gets a
      // fresh init somewhere at or after the break (what happened in between is in it).
      s = chatReducer(s, { type: 'local/socket', state: 'reconnecting' })
      const j = r.int(breakAt - 1, n - 1)
      s = apply(s, initAt(conv, wire, j), conv)
      s = chatReducer(s, { type: 'local/socket', state: 'open' })
      i = j + 1
      continue
    }
    sendOptimistic(i)
    s = apply(s, wire[i], conv)
    if (mode === 'dupes' && r.chance(0.3)) s = apply(s, wire[r.int(Math.max(0, start + 1), i)], conv)
    if (mode === 'backlog' && r.chance(0.05)) {
      // 4008: reconnect with the cursor; a backlog replays what follows (and overlaps here).
      s = chatReducer(s, { type: 'local/socket', state: 'reconnecting' })
      for (let k = Math.max(start + 1, i - r.int(0, 5)); k <= i; k++) s = apply(s, wire[k], conv)
    }
    if (mode === 'resync' && r.chance(0.05)) {
      // 4009: events lost; the server cannot replay, so a fresh init at a later point.
      const j = r.int(i, n - 1)
      s = apply(s, initAt(conv, wire, j), conv)
      start = j
      i = j + 1
      continue
    }
    i++
  }
  return s
}

function expectTranscriptState(s: ChatState, conv: Conversation) {
  expect(s.messages).toEqual(conv.transcript)
  expect(new Set(s.messages.map((m) => m.id)).size).toBe(s.messages.length)
  expect(s.partials).toEqual([])
  expect(s.approvals).toEqual([])
  expect(s.outgoing).toEqual([])
  expect(s.status).toBe('idle')
  expect(s.title).toBe(conv.title)
  // Every tool call's card ends in the state its stored result says.
  const results = toolResultsByCall(s.messages)
  for (const m of s.messages) {
    for (const p of m.parts ?? []) {
      if (p.type !== 'tool_call') continue
      const v = toolView(p, results, s.tools[p.id!])
      const stored = results.get(p.id!)!
      expect(v.status).toBe(stored.rejected ? 'rejected' : 'done')
      expect(v.result).toBe(stored.content)
    }
  }
}

describe('chat reducer: same state as the transcript', () => {
  for (const mode of ['plain', 'dupes', 'backlog', 'resync', 'epoch'] as const) {
    it(`random conversations, delivery: ${mode}`, () => {
      for (let seed = 1; seed <= 300; seed++) {
        const conv = generate(rng(seed))
        const s = deliver(conv, rng(seed * 7919), mode)
        try {
          expectTranscriptState(s, conv)
        } catch (e) {
          throw new Error(`seed ${seed}: ${(e as Error).message}`, { cause: e })
        }
      }
    })
  }
})

describe('chat reducer: specific sequences', () => {
  const user: ChatMessage = { id: 'u1', agent_id: 'agent-1', seq: 1, role: 'user', content: 'Hi', status: 'complete', parts: [], created_at: '' }
  const reply: ChatMessage = { id: 'a1', agent_id: 'agent-1', seq: 2, role: 'assistant', content: 'Hello world', status: 'complete', parts: [], created_at: '' }
  const ev = (seq: number, e: { type: string; [k: string]: unknown }) => wire({ ...e, seq, epoch: 'e1' })

  it('streams, drops text on retry, ignores replays and ends with the message', () => {
    let s = chatReducer(initialState, wire({ type: 'init', seq: 0, epoch: 'e1', status: 'idle', messages: [], pending_approvals: [], partial: [] }))
    s = chatReducer(s, { type: 'local/send', outgoing: { client_message_id: 'u1', content: 'Hi', attachments: [] } })
    expect(s.outgoing.map((o) => o.state)).toEqual(['sending'])
    s = chatReducer(s, ev(1, { type: 'message', message: user }))
    expect(s.outgoing).toEqual([])
    s = chatReducer(s, ev(2, { type: 'stream', message_id: 'a1', delta: 'Bye' }))
    s = chatReducer(s, ev(3, { type: 'retry', message_id: 'a1', attempt: 2 }))
    expect(s.partials).toEqual([])
    expect(s.retryAttempt).toBe(2)
    s = chatReducer(s, ev(4, { type: 'stream', message_id: 'a1', delta: 'Hello' }))
    s = chatReducer(s, ev(4, { type: 'stream', message_id: 'a1', delta: 'Hello' })) // duplicate
    s = chatReducer(s, ev(5, { type: 'stream', message_id: 'a1', delta: ' world' }))
    expect(s.partials[0].text).toBe('Hello world')
    s = chatReducer(s, ev(6, { type: 'stream_end', message_id: 'a1' }))
    s = chatReducer(s, ev(7, { type: 'message', message: reply }))
    expect(s.partials).toEqual([])
    expect(s.messages.map((m) => m.content)).toEqual(['Hi', 'Hello world'])
  })

  it('an incomplete partial from init continues with the following deltas', () => {
    let s = chatReducer(initialState, wire({ type: 'init', seq: 40, epoch: 'e2', status: 'active', messages: [user], pending_approvals: [],
      partial: [{ message_id: 'a1', text: 'lo', incomplete: true }] }))
    s = chatReducer(s, wire({ type: 'stream', message_id: 'a1', delta: ' world', seq: 41, epoch: 'e2' }))
    expect(s.partials[0]).toMatchObject({ text: 'lo world', incomplete: true })
    s = chatReducer(s, wire({ type: 'message', message: reply, seq: 42, epoch: 'e2' }))
    expect(s.messages[1].content).toBe('Hello world')
  })

  it('a reset frame replaces the partial text with the whole text so far', () => {
    // Redis lost its data mid-reply: this client synchronised in the new epoch, got one delta,
    // then the publisher's reset with everything streamed so far.
    let s = chatReducer(initialState, wire({ type: 'init', seq: 0, epoch: 'e2', status: 'active', messages: [user], pending_approvals: [], partial: [] }))
    s = chatReducer(s, wire({ type: 'stream', message_id: 'a1', delta: 'wor', seq: 1, epoch: 'e2' }))
    s = chatReducer(s, wire({ type: 'stream', message_id: 'a1', delta: '', text: 'Hello wor', seq: 2, epoch: 'e2' }))
    s = chatReducer(s, wire({ type: 'stream', message_id: 'a1', delta: 'ld', seq: 3, epoch: 'e2' }))
    expect(s.partials[0]).toMatchObject({ text: 'Hello world', incomplete: false })
    // An incomplete partial from init becomes whole with a reset too.
    s = chatReducer(initialState, wire({ type: 'init', seq: 40, epoch: 'e2', status: 'active', messages: [user], pending_approvals: [],
      partial: [{ message_id: 'a1', text: 'lo', incomplete: true }] }))
    s = chatReducer(s, wire({ type: 'stream', message_id: 'a1', delta: '', text: 'Hello', seq: 41, epoch: 'e2' }))
    expect(s.partials[0]).toMatchObject({ text: 'Hello', incomplete: false })
  })

  it('a frame numbered below the last reset is a late copy and is ignored', () => {
    // Frame 3 timed out in a hung Redis and landed after the reset (4) that followed it.
    let s = chatReducer(initialState, wire({ type: 'init', seq: 0, epoch: 'e1', status: 'active', messages: [user], pending_approvals: [], partial: [] }))
    s = chatReducer(s, wire({ type: 'stream', message_id: 'a1', delta: 'Hel', n: 1, seq: 1, epoch: 'e1' }))
    s = chatReducer(s, wire({ type: 'stream', message_id: 'a1', delta: '', text: 'Hello wor', n: 4, seq: 2, epoch: 'e1' }))
    s = chatReducer(s, wire({ type: 'stream', message_id: 'a1', delta: 'lo wor', n: 3, seq: 3, epoch: 'e1' }))
    s = chatReducer(s, wire({ type: 'stream', message_id: 'a1', delta: 'ld', n: 5, seq: 4, epoch: 'e1' }))
    expect(s.partials[0]).toMatchObject({ text: 'Hello world' })
    // An init's partial says which reset its text starts from.
    s = chatReducer(initialState, wire({ type: 'init', seq: 2, epoch: 'e1', status: 'active', messages: [user], pending_approvals: [],
      partial: [{ message_id: 'a1', text: 'Hello wor', reset: 4 }] }))
    s = chatReducer(s, wire({ type: 'stream', message_id: 'a1', delta: 'lo wor', n: 3, seq: 3, epoch: 'e1' }))
    s = chatReducer(s, wire({ type: 'stream', message_id: 'a1', delta: 'ld', n: 5, seq: 4, epoch: 'e1' }))
    expect(s.partials[0]).toMatchObject({ text: 'Hello world' })
  })

  it('a resync init keeps older loaded messages and does not duplicate the ones it holds', () => {
    const older = Array.from({ length: 5 }, (_, k): ChatMessage => ({ ...user, id: `m${k}`, seq: k + 1 }))
    let s = chatReducer(initialState, wire({ type: 'init', seq: 10, epoch: 'e1', status: 'idle', messages: older, pending_approvals: [], partial: [] }))
    s = chatReducer(s, wire({ type: 'init', seq: 3, epoch: 'e9', status: 'idle', messages: older.slice(2), pending_approvals: [], partial: [] }))
    expect(s.messages.map((m) => m.id)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4'])
    expect(s.epoch).toBe('e9')
    // Events of the new epoch apply from its seq on, even where seqs are lower than before.
    s = chatReducer(s, wire({ type: 'title_update', title: 'New', seq: 4, epoch: 'e9' }))
    expect(s.title).toBe('New')
  })

  it('earlier messages load in front, once', () => {
    const ms = Array.from({ length: 6 }, (_, k): ChatMessage => ({ ...user, id: `m${k}`, seq: k + 1 }))
    let s = chatReducer(initialState, wire({ type: 'init', seq: 1, epoch: 'e1', status: 'idle', messages: ms.slice(3), pending_approvals: [], partial: [] }))
    s = chatReducer(s, { type: 'local/older', messages: ms.slice(0, 5) })
    s = chatReducer(s, { type: 'local/older', messages: ms.slice(1, 3) })
    expect(s.messages.map((m) => m.seq)).toEqual([1, 2, 3, 4, 5, 6])
  })

  it('a live result that previews a stored output offers the full output before any reload', () => {
    let s = chatReducer(initialState, wire({ type: 'init', seq: 0, epoch: 'e1', status: 'active', messages: [user], pending_approvals: [], partial: [] }))
    const call: Part = { type: 'tool_call', id: 'c1', name: 'list_notes', arguments: '{}' }
    s = chatReducer(s, ev(1, { type: 'tool_update', tool_call_id: 'c1', tool: 'list_notes', status: 'done', result: 'x'.repeat(2048) + '\n[output truncated: 19891 bytes in total]' }))
    expect(toolView(call, new Map(), s.tools.c1)).toMatchObject({ status: 'done', stored: true, size: 19891 })
    s = chatReducer(s, ev(2, { type: 'tool_update', tool_call_id: 'c2', tool: 'list_notes', status: 'done', result: '{"notes":[]}' }))
    expect(s.tools.c2.stored).toBeUndefined()
    // The server's own fields win (a preview whose text lacks the mark).
    s = chatReducer(s, ev(3, { type: 'tool_update', tool_call_id: 'c3', tool: 'list_notes', status: 'done', result: 'y'.repeat(100), stored: true, size: 9000 }))
    expect(s.tools.c3).toMatchObject({ stored: true, size: 9000 })
  })

  it('a script waiting for a sandbox shows queued with its place, then running; an unknown status shows running', () => {
    let s = chatReducer(initialState, wire({ type: 'init', seq: 0, epoch: 'e1', status: 'active', messages: [user], pending_approvals: [], partial: [] }))
    const call: Part = { type: 'tool_call', id: 'c1', name: 'execute_code', arguments: '{}' }
    s = chatReducer(s, ev(1, { type: 'tool_update', tool_call_id: 'c1', tool: 'execute_code', status: 'running', arguments: '{}' }))
    s = chatReducer(s, ev(2, { type: 'tool_update', tool_call_id: 'c1', tool: 'execute_code', status: 'queued', position: 3 }))
    expect(toolView(call, new Map(), s.tools.c1)).toMatchObject({ status: 'queued', position: 3, arguments: '{}' })
    s = chatReducer(s, ev(3, { type: 'tool_update', tool_call_id: 'c1', tool: 'execute_code', status: 'running' }))
    expect(s.tools.c1).toMatchObject({ status: 'running', position: undefined })
    s = chatReducer(s, ev(4, { type: 'tool_update', tool_call_id: 'c2', tool: 'execute_code', status: 'paused-by-a-newer-server' }))
    expect(s.tools.c2.status).toBe('running')
  })

  it('approvals leave when decided; a queued message stays until stored', () => {
    let s = chatReducer(initialState, wire({ type: 'init', seq: 0, epoch: 'e1', status: 'active', messages: [user], pending_approvals: [], partial: [] }))
    s = chatReducer(s, ev(1, { type: 'approval_needed', tool_call_id: 'c1', tool: 'save_note', arguments: '{}', mode: 'confirm_before_execution', requested_by: 'bob' }))
    expect(s.approvals.map((a) => a.requested_by)).toEqual(['bob'])
    expect(s.tools.c1.status).toBe('awaiting_approval')
    s = chatReducer(s, { type: 'local/send', outgoing: { client_message_id: 'u2', content: 'next', attachments: [] } })
    s = chatReducer(s, { type: 'local/sent', client_message_id: 'u2', queued: 1 })
    expect(s.outgoing[0].state).toBe('queued')
    s = chatReducer(s, ev(2, { type: 'tool_rejected', tool_call_id: 'c1', tool: 'save_note', reason: 'not now', decided_by: 'carol' }))
    expect(s.approvals).toEqual([])
    expect(s.tools.c1).toMatchObject({ status: 'rejected', reason: 'not now', decided_by: 'carol' })
    s = chatReducer(s, { type: 'local/send_failed', client_message_id: 'u2', error: 'queue is full' })
    expect(s.outgoing[0]).toMatchObject({ state: 'failed', error: 'queue is full' })
  })

  it('a live confirm_after_execution approval carries the result to review, as init does', () => {
    let s = chatReducer(initialState, wire({ type: 'init', seq: 0, epoch: 'e1', status: 'active', messages: [user], pending_approvals: [], partial: [] }))
    s = chatReducer(s, ev(1, { type: 'approval_needed', tool_call_id: 'c1', tool: 'sap_write', arguments: '{}', mode: 'confirm_after_execution', result: 'written 3 rows' }))
    expect(s.approvals[0].result?.content).toBe('written 3 rows')
    s = chatReducer(s, ev(2, { type: 'approval_needed', tool_call_id: 'c2', tool: 'save_note', arguments: '{}', mode: 'confirm_before_execution' }))
    expect(s.approvals[1].result).toBeUndefined()
  })

  it('a queued message dropped because its sender was removed stops showing as queued; the streaming turn goes on', () => {
    let s = chatReducer(initialState, wire({ type: 'init', seq: 0, epoch: 'e1', status: 'active', messages: [user], pending_approvals: [], partial: [] }))
    s = chatReducer(s, { type: 'local/send', outgoing: { client_message_id: 'u2', content: 'next', attachments: [] } })
    s = chatReducer(s, { type: 'local/sent', client_message_id: 'u2', queued: 1 })
    s = chatReducer(s, ev(1, { type: 'stream', message_id: 'a1', delta: 'Hello' }))
    const why = 'message not answered: its sender was removed from the workspace'
    s = chatReducer(s, ev(2, { type: 'error', error: why, message_id: 'u2' }))
    expect(s.outgoing[0]).toMatchObject({ state: 'failed', error: why })
    expect(s.partials.map((p) => p.text)).toEqual(['Hello'])
    expect(s.error).toBeUndefined()
    s = chatReducer(s, ev(3, { type: 'error', error: why, message_id: 'someone-elses' }))
    expect(s.partials.map((p) => p.text)).toEqual(['Hello'])
  })
})
