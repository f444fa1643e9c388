// The chat's state, folded from the agent's event stream (docs/events.md) and the page's own
// actions (socket state, messages the user sent that the server has not stored yet). Pure: the
// same events give the same state, whatever the order of reconnects, resyncs and duplicates.
import type { StreamState } from '../api/stream'
import type { Agent, AgentFrame, AgentInitFrame, AckFrame, CommandErrorFrame, Message, Part, PendingApproval } from './events.gen'

export type { Part, PendingApproval } from './events.gen'

/** A stored transcript message, as `message` frames, `init` and GET /messages carry it. */
export type ChatMessage = Message

/** Text of a message still being generated. */
export interface PartialReply {
  message_id: string
  text: string
  reasoning: string
  /** The beginning is missing (init could not rebuild it): shown with a leading "…". */
  incomplete: boolean
  thinking: boolean
  ended: boolean
  /** The `n` of the stream reset the text starts from: frames numbered below it are late copies. */
  resetN?: number
}

export type ToolStatus = 'awaiting_approval' | 'approved' | 'queued' | 'running' | 'done' | 'error' | 'rejected'

export interface ToolState {
  tool_call_id: string
  tool: string
  status: ToolStatus
  arguments?: string
  result?: string
  error?: string
  reason?: string
  decided_by?: string
  /** The full output is stored by reference (result is its preview), size bytes in all. */
  stored?: boolean
  size?: number
  /** While queued: about its place in line for a sandbox (1: next). */
  position?: number
}

export type OutgoingState = 'sending' | 'queued' | 'sent' | 'failed'

/** A message the user sent that has no `message` event yet. */
export interface Outgoing {
  client_message_id: string
  content: string
  attachments: { id: string; name: string; size: number; content_type?: string }[]
  state: OutgoingState
  error?: string
}

export interface ChatState {
  initialized: boolean
  agent: Agent | null
  messages: ChatMessage[] // by message seq, one per id
  partials: PartialReply[] // in the order they started
  tools: Record<string, ToolState>
  approvals: PendingApproval[]
  status: string
  title: string
  connection: StreamState
  connectionDetail?: string
  epoch: string | null
  seq: number // last event seq applied in `epoch`
  outgoing: Outgoing[]
  error?: string
  retryAttempt?: number
}

export const initialState: ChatState = {
  initialized: false,
  agent: null,
  messages: [],
  partials: [],
  tools: {},
  approvals: [],
  status: 'idle',
  title: '',
  connection: 'connecting',
  epoch: null,
  seq: 0,
  outgoing: [],
}

export type LocalAction =
  | { type: 'local/socket'; state: StreamState; detail?: string }
  | { type: 'local/send'; outgoing: Omit<Outgoing, 'state'> & { state?: OutgoingState } }
  | { type: 'local/sent'; client_message_id: string; queued: number }
  | { type: 'local/send_failed'; client_message_id: string; error: string }
  | { type: 'local/discard'; client_message_id: string }
  | { type: 'local/resend'; client_message_id: string }
  | { type: 'local/older'; messages: ChatMessage[] }
  | { type: 'local/batch'; events: AgentFrame[] }
  | { type: 'local/dismiss_error' }

export type Action = AgentFrame | LocalAction

/** The frames applyEvent folds: everything but the snapshot and command answers. */
type LiveFrame = Exclude<AgentFrame, AgentInitFrame | AckFrame | CommandErrorFrame>

export function chatReducer(state: ChatState, action: Action): ChatState {
  switch (action.type) {
    case 'local/batch': {
      let s = state
      for (const e of action.events) s = chatReducer(s, e)
      return s
    }
    case 'local/socket': {
      const a = action as Extract<LocalAction, { type: 'local/socket' }>
      return { ...state, connection: a.state, connectionDetail: a.detail }
    }
    case 'local/send': {
      const a = action as Extract<LocalAction, { type: 'local/send' }>
      const id = a.outgoing.client_message_id
      if (state.messages.some((m) => m.id === id) || state.outgoing.some((o) => o.client_message_id === id)) return state
      return { ...state, outgoing: [...state.outgoing, { ...a.outgoing, state: a.outgoing.state ?? 'sending' }] }
    }
    case 'local/sent': {
      const a = action as Extract<LocalAction, { type: 'local/sent' }>
      return patchOutgoing(state, a.client_message_id, { state: a.queued > 0 ? 'queued' : 'sent', error: undefined })
    }
    case 'local/send_failed': {
      const a = action as Extract<LocalAction, { type: 'local/send_failed' }>
      return patchOutgoing(state, a.client_message_id, { state: 'failed', error: a.error })
    }
    case 'local/resend': {
      const a = action as Extract<LocalAction, { type: 'local/resend' }>
      return patchOutgoing(state, a.client_message_id, { state: 'sending', error: undefined })
    }
    case 'local/discard': {
      const a = action as Extract<LocalAction, { type: 'local/discard' }>
      return { ...state, outgoing: state.outgoing.filter((o) => o.client_message_id !== a.client_message_id) }
    }
    case 'local/older': {
      // Earlier messages than init's window (GET /messages): only those before the first held.
      const a = action as Extract<LocalAction, { type: 'local/older' }>
      const first = state.messages.length ? state.messages[0].seq : Infinity
      const held = new Set(state.messages.map((m) => m.id))
      const older = sortMessages(dedupe(a.messages.filter((m) => m.seq < first && !held.has(m.id))))
      return older.length ? { ...state, messages: [...older, ...state.messages] } : state
    }
    case 'local/dismiss_error':
      return { ...state, error: undefined }
    case 'init':
      return applyInit(state, action)
    case 'ack':
    case 'command_error':
      return state
  }
  const e: LiveFrame = action
  // Exactly-once: an event of the current epoch at or below the cursor was applied already.
  if (typeof e.seq === 'number') {
    if (e.epoch === state.epoch && e.seq <= state.seq) return state
    state = { ...state, seq: e.seq, epoch: typeof e.epoch === 'string' ? e.epoch : state.epoch }
  }
  return applyEvent(state, e)
}

function patchOutgoing(state: ChatState, id: string, patch: Partial<Outgoing>): ChatState {
  if (!state.outgoing.some((o) => o.client_message_id === id)) return state
  return { ...state, outgoing: state.outgoing.map((o) => (o.client_message_id === id ? { ...o, ...patch } : o)) }
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : ''
}

function applyInit(state: ChatState, e: AgentInitFrame): ChatState {
  const incoming = sortMessages(dedupe(e.messages ?? []))
  // The snapshot holds the newest 500 messages: keep older ones the page already had (a
  // transcript only grows), replace everything the snapshot covers.
  const first = incoming.length ? incoming[0].seq : Infinity
  const older = state.messages.filter((m) => m.seq < first && !incoming.some((n) => n.id === m.id))
  const messages = older.length ? [...older, ...incoming] : incoming
  const stored = new Set(messages.map((m) => m.id))
  const partials: PartialReply[] = (e.partial ?? [])
    .filter((p) => !stored.has(p.message_id))
    .map((p) => ({ message_id: p.message_id, text: p.text ?? '', reasoning: p.reasoning ?? '', incomplete: !!p.incomplete, thinking: false, ended: false,
      ...(p.reset ? { resetN: p.reset } : {}) }))
  const approvals = dedupeApprovals(e.pending_approvals ?? [])
  // Live tool states are rebuilt: stored tool results tell the rest (see toolView).
  const tools: Record<string, ToolState> = {}
  for (const a of approvals) tools[a.tool_call_id] = { tool_call_id: a.tool_call_id, tool: a.tool, status: 'awaiting_approval', arguments: a.arguments }
  const agent = e.agent ?? state.agent
  return {
    ...state,
    initialized: true,
    agent,
    messages,
    partials,
    tools,
    approvals,
    status: str(e.status) || 'idle',
    title: agent?.title ?? state.title,
    epoch: typeof e.epoch === 'string' ? e.epoch : null,
    seq: typeof e.seq === 'number' ? e.seq : 0,
    outgoing: state.outgoing.filter((o) => !stored.has(o.client_message_id)),
    retryAttempt: undefined,
  }
}

function dedupe(ms: ChatMessage[]): ChatMessage[] {
  const byId = new Map<string, ChatMessage>()
  for (const m of ms) byId.set(m.id, m)
  return [...byId.values()]
}

function dedupeApprovals(as: PendingApproval[]): PendingApproval[] {
  const seen = new Set<string>()
  return as.filter((a) => (seen.has(a.tool_call_id) ? false : (seen.add(a.tool_call_id), true)))
}

function sortMessages(ms: ChatMessage[]): ChatMessage[] {
  return [...ms].sort((a, b) => a.seq - b.seq)
}

/** Inserts or replaces a message, keeping seq order (appends are the common case). */
function upsertMessage(ms: ChatMessage[], m: ChatMessage): ChatMessage[] {
  const i = ms.findIndex((x) => x.id === m.id)
  if (i >= 0) {
    const next = [...ms]
    next[i] = m
    return next[i - 1]?.seq > m.seq || next[i + 1]?.seq < m.seq ? sortMessages(next) : next
  }
  if (!ms.length || ms[ms.length - 1].seq < m.seq) return [...ms, m]
  return sortMessages([...ms, m])
}

function updatePartial(state: ChatState, id: string, f: (p: PartialReply) => PartialReply): ChatState {
  // A completed message is never streamed again: late deltas for it are dropped.
  if (state.messages.some((m) => m.id === id && m.role !== 'user')) return state
  const i = state.partials.findIndex((p) => p.message_id === id)
  if (i < 0) {
    const fresh: PartialReply = { message_id: id, text: '', reasoning: '', incomplete: false, thinking: false, ended: false }
    return { ...state, partials: [...state.partials, f(fresh)] }
  }
  const partials = [...state.partials]
  partials[i] = f(partials[i])
  return { ...state, partials }
}

function setTool(state: ChatState, id: string, patch: Partial<ToolState> & { tool?: string }): ChatState {
  const prev = state.tools[id]
  const next: ToolState = { ...prev, ...patch, status: patch.status ?? prev?.status ?? 'running', tool_call_id: id, tool: patch.tool || prev?.tool || '' }
  return { ...state, tools: { ...state.tools, [id]: next } }
}

function dropApproval(state: ChatState, id: string): ChatState {
  if (!state.approvals.some((a) => a.tool_call_id === id)) return state
  return { ...state, approvals: state.approvals.filter((a) => a.tool_call_id !== id) }
}

function applyEvent(state: ChatState, e: LiveFrame): ChatState {
  switch (e.type) {
    case 'message': {
      const m = e.message
      if (!m || !m.id) return state
      return {
        ...state,
        messages: upsertMessage(state.messages, m),
        partials: state.partials.some((p) => p.message_id === m.id) ? state.partials.filter((p) => p.message_id !== m.id) : state.partials,
        outgoing: state.outgoing.some((o) => o.client_message_id === m.id) ? state.outgoing.filter((o) => o.client_message_id !== m.id) : state.outgoing,
        retryAttempt: m.role === 'assistant' ? undefined : state.retryAttempt,
      }
    }
    case 'status': {
      const status = str(e.status) || state.status
      // An idle conversation streams nothing: what was not stored is gone.
      if (status !== 'idle') return { ...state, status }
      return { ...state, status, partials: state.partials.length ? [] : state.partials, approvals: state.approvals.length ? [] : state.approvals, retryAttempt: undefined }
    }
    // A frame with `text` is a reset (the stream's log was lost): the whole text so far, in
    // place of what this client holds, which is then no longer incomplete.
    // Frames numbered below the last reset applied are late copies of timed-out publishes.
    case 'stream': {
      const n = typeof e.n === 'number' ? e.n : 0
      return updatePartial(state, str(e.message_id), (p) => {
        if (n && n < (p.resetN ?? 0)) return p
        return typeof e.text === 'string'
          ? { ...p, text: e.text, incomplete: false, thinking: false, resetN: n }
          : { ...p, text: p.text + str(e.delta), thinking: false }
      })
    }
    case 'stream_end':
      return updatePartial(state, str(e.message_id), (p) => ({ ...p, ended: true, thinking: false }))
    case 'thinking_start':
      return updatePartial(state, str(e.message_id), (p) => ({ ...p, thinking: true }))
    case 'thinking':
      return updatePartial(state, str(e.message_id), (p) => ({ ...p, reasoning: typeof e.text === 'string' ? e.text : p.reasoning + str(e.delta), thinking: true }))
    case 'thinking_end':
      return updatePartial(state, str(e.message_id), (p) => ({ ...p, thinking: false }))
    case 'retry':
      return {
        ...state,
        partials: state.partials.filter((p) => p.message_id !== e.message_id),
        retryAttempt: typeof e.attempt === 'number' ? e.attempt : (state.retryAttempt ?? 1) + 1,
      }
    case 'approval_needed': {
      const a: PendingApproval = {
        tool_call_id: str(e.tool_call_id),
        tool: str(e.tool),
        arguments: str(e.arguments),
        mode: str(e.mode),
        // A confirm_after_execution call's result is its text here; init holds the whole result.
        result: typeof e.result === 'string' ? { tool_call_id: str(e.tool_call_id), name: str(e.tool), content: e.result, is_error: false } : undefined,
        requested_by: str(e.requested_by) || undefined,
        four_eyes: e.four_eyes === true || undefined,
      }
      const approvals = state.approvals.some((x) => x.tool_call_id === a.tool_call_id)
        ? state.approvals.map((x) => (x.tool_call_id === a.tool_call_id ? a : x))
        : [...state.approvals, a]
      return setTool({ ...state, approvals }, a.tool_call_id, { tool: a.tool, status: 'awaiting_approval', arguments: a.arguments })
    }
    case 'tool_update': {
      const id = str(e.tool_call_id)
      // queued: a script waits for a free sandbox; a status this page does not know is shown as running.
      const status: ToolStatus = e.status === 'done' ? 'done' : e.status === 'queued' ? 'queued' : 'running'
      const patch: Partial<ToolState> = { tool: str(e.tool), status, position: status === 'queued' && typeof e.position === 'number' ? e.position : undefined }
      if (typeof e.arguments === 'string') patch.arguments = e.arguments
      if (typeof e.result === 'string') Object.assign(patch, { result: e.result }, storedOutput(e.result))
      // The server says so itself (stored, size); the preview's mark covers older servers.
      if (e.stored === true) Object.assign(patch, { stored: true, size: typeof e.size === 'number' ? e.size : patch.size })
      return setTool(dropApproval(state, id), id, patch)
    }
    case 'tool_error': {
      const id = str(e.tool_call_id)
      return setTool(dropApproval(state, id), id, { tool: str(e.tool), status: 'error', error: str(e.error) })
    }
    case 'tool_approved': {
      const id = str(e.tool_call_id)
      const prev = state.tools[id]?.status
      // Approving a call that already ran (confirm_after_execution) keeps it done.
      const status: ToolStatus = prev === 'done' || prev === 'queued' || prev === 'running' || prev === 'error' ? prev : 'approved'
      return setTool(dropApproval(state, id), id, { tool: str(e.tool), status, decided_by: str(e.decided_by) || undefined })
    }
    case 'tool_rejected': {
      const id = str(e.tool_call_id)
      return setTool(dropApproval(state, id), id, { tool: str(e.tool), status: 'rejected', reason: str(e.reason), decided_by: str(e.decided_by) || undefined })
    }
    case 'title_update':
      return { ...state, title: str(e.title), agent: state.agent ? { ...state.agent, title: str(e.title) } : state.agent }
    case 'stopped':
      // The partial text is stored as a `stopped` message (its own `message` event).
      return { ...state, partials: [], retryAttempt: undefined }
    case 'error':
      // Naming a message: it will never be answered (its sender was removed while it was
      // queued). Only that message fails; another member's turn may be streaming meanwhile.
      if (e.message_id) return patchOutgoing(state, e.message_id, { state: 'failed', error: str(e.error) })
      return { ...state, error: str(e.error) || 'The turn failed.', partials: [], retryAttempt: undefined }
    default:
      return state
  }
}

// Tool results are stored without a `message` event: a live card learns of a stored output from
// tool_update's `stored` and `size`, or (servers before those fields) from the line the
// preview ends with (activities/tools.go).
const truncatedMark = /\n\[output truncated: (\d+) bytes in total\]$/

/** A live preview's stored-output mark: the card then offers the full output at once. */
export function storedOutput(result: string): Pick<ToolState, 'stored' | 'size'> {
  const m = truncatedMark.exec(result)
  return m ? { stored: true, size: Number(m[1]) } : {}
}

/** What a tool card shows: the stored result wins over live events (it is the final word). */
export interface ToolView {
  status: ToolStatus | 'unknown'
  arguments?: string
  result?: string
  error?: string
  stored?: boolean
  size?: number
  reason?: string
  decided_by?: string
  position?: number
}

export function toolResultsByCall(messages: ChatMessage[]): Map<string, Part> {
  const out = new Map<string, Part>()
  for (const m of messages) {
    if (m.role !== 'tool') continue
    for (const p of m.parts ?? []) if (p.type === 'tool_result' && p.tool_call_id) out.set(p.tool_call_id, p)
    if (m.tool_call_id && !out.has(m.tool_call_id)) out.set(m.tool_call_id, { type: 'tool_result', tool_call_id: m.tool_call_id, content: m.content })
  }
  return out
}

export function toolView(call: Part, results: Map<string, Part>, live: ToolState | undefined): ToolView {
  const r = call.id ? results.get(call.id) : undefined
  if (r) {
    const rejected = r.rejected || live?.status === 'rejected'
    return {
      status: rejected ? 'rejected' : r.is_error ? 'error' : 'done',
      arguments: call.arguments,
      result: r.content,
      stored: r.stored,
      size: r.size,
      reason: live?.reason,
      decided_by: live?.decided_by,
    }
  }
  if (live) return { ...live, arguments: live.arguments ?? call.arguments }
  return { status: 'unknown', arguments: call.arguments }
}
