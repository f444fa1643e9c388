// A resumable event stream over the API's WebSocket (docs/events.md): it holds the cursor
// <epoch>:<seq> of the last frame handed to the page and reconnects with it, so the page sees
// every event once and in order, or a fresh `init` when the server cannot replay the gap.
import { getToken } from '../auth/token'

export type StreamState = 'connecting' | 'open' | 'reconnecting' | 'closed'

/** What the stream itself reads of a frame (the frame types: chat/events.gen.ts). */
export interface Positioned {
  type: string
  seq?: number
  epoch?: string
}

export interface StreamOptions<F extends Positioned> {
  path: string // e.g. /api/agents/<id>/ws
  onFrame: (f: F) => void
  onState?: (s: StreamState, detail?: string) => void
}

const backoff = [250, 500, 1000, 2000, 4000, 8000]

export class EventStream<F extends Positioned> {
  private ws: WebSocket | null = null
  private cursor: string | null = null
  private attempts = 0
  private timer: number | undefined
  private stopped = false
  private readonly opts: StreamOptions<F>

  constructor(opts: StreamOptions<F>) {
    this.opts = opts
    this.connect()
  }

  /** The cursor of the last frame handed to onFrame (null before init). */
  get position() {
    return this.cursor
  }

  send(cmd: Record<string, unknown>): boolean {
    if (this.ws?.readyState !== WebSocket.OPEN) return false
    this.ws.send(JSON.stringify(cmd))
    return true
  }

  close() {
    this.stopped = true
    window.clearTimeout(this.timer)
    this.ws?.close(1000)
    this.opts.onState?.('closed')
  }

  private connect() {
    const token = getToken()
    if (!token) {
      this.opts.onState?.('closed', 'signed out')
      return
    }
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:'
    const q = this.cursor ? `?after=${encodeURIComponent(this.cursor)}` : ''
    // The token travels as a subprotocol, not in the URL (URLs end up in logs). Commands are
    // answered with ack / command_error frames, which reach onFrame too.
    const ws = new WebSocket(`${proto}//${location.host}${this.opts.path}${q}`, ['bearer', token])
    this.ws = ws
    this.opts.onState?.(this.attempts === 0 && !this.cursor ? 'connecting' : 'reconnecting')
    ws.onopen = () => {
      this.attempts = 0
      this.opts.onState?.('open')
    }
    ws.onmessage = (m) => {
      let f: F
      try {
        // The server's frames match schemas/events.schema.json (its tests check every one).
        f = JSON.parse(m.data as string) as F
      } catch {
        return
      }
      if (f.type !== 'ack' && f.type !== 'command_error' && typeof f.seq === 'number' && typeof f.epoch === 'string') {
        this.cursor = `${f.epoch}:${f.seq}`
      }
      this.opts.onFrame(f)
    }
    ws.onclose = (e) => {
      if (this.ws !== ws) return
      this.ws = null
      if (this.stopped) return
      switch (e.code) {
        case 4003: // access revoked: reconnecting is refused
          this.stopped = true
          this.opts.onState?.('closed', 'Your access to this workspace ended.')
          return
        case 4008: {
          // Fell behind: the reason names the cursor of the last event sent.
          const m = /after=([0-9a-z]+:\d+)/.exec(e.reason)
          if (m) this.cursor = m[1]
          break
        }
        case 4001: // token expired: the session layer refreshes it; reconnect with the cursor
        case 4009: // events lost: reconnect with the cursor (backlog or a fresh init)
        default:
      }
      this.opts.onState?.('reconnecting', e.reason || undefined)
      const delay = e.code === 4008 ? 0 : backoff[Math.min(this.attempts, backoff.length - 1)]
      this.attempts++
      this.timer = window.setTimeout(() => this.connect(), delay)
    }
  }
}
