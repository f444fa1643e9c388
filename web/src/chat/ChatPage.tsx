// The chat screen (/w/:wsId/chat/:agentId): the conversation as it streams, tool calls and
// their approvals, the queue of messages waiting behind a running turn, stop, attachments and
// the model picker. State comes from the agent's event stream (reducer.ts).
import { useCallback, useEffect, useRef, useState } from 'react'
import { useParams } from 'react-router'
import useSWR, { useSWRConfig } from 'swr'
import type { Page } from '../api/client'
import { keys } from '../api/keys'
import type { Org } from '../api/types'
import { useUser } from '../auth/AuthProvider'
import { useCurrentWorkspace } from '../layout/currentWorkspace'
import { Button, ErrorBanner, PageHeader, Spinner } from '../ui/controls'
import { ApprovalPanel, type Decision } from './ApprovalCard'
import { messagesBefore } from './api'
import { ArchiveButton } from './ArchiveButton'
import { allowedDecisions } from './approvalRules'
import { Composer } from './Composer'
import type { StoredFile } from './files'
import { MessageList } from './MessageList'
import { ModelPicker } from './ModelPicker'
import type { ChatState, Outgoing, PendingApproval } from './reducer'
import { commandError, newId, useChatStream } from './useChatStream'

export default function ChatPage() {
  const { wsId = '', agentId = '' } = useParams()
  // A new conversation starts from a fresh state and socket.
  return <ChatView key={agentId} wsId={wsId} agentId={agentId} />
}

const statusLabel: Record<string, string> = { idle: 'Idle', active: 'Working…', waiting: 'Waiting for approval' }

function ConnectionBanner({ state }: { state: ChatState }) {
  if (state.connection === 'reconnecting') {
    return (
      <div role="status" className="border-b border-amber-300 bg-amber-50 px-4 py-2 text-sm text-amber-900">
        Connection lost — reconnecting…{state.connectionDetail ? ` (${state.connectionDetail})` : ''}
      </div>
    )
  }
  if (state.connection === 'closed' && state.connectionDetail) {
    return <div role="alert" className="border-b border-red-300 bg-red-50 px-4 py-2 text-sm text-red-800">{state.connectionDetail}</div>
  }
  return null
}

function ChatView({ wsId, agentId }: { wsId: string; agentId: string }) {
  const user = useUser()
  const { state, dispatch, command } = useChatStream(agentId)
  const { workspace } = useCurrentWorkspace()
  const { data: orgs } = useSWR<Page<Org>>(keys.orgs)
  const orgRole = orgs?.data.find((o) => o.id === workspace?.org_id)?.role
  const { mutate } = useSWRConfig()
  const [model, setModel] = useState<string | null>(null)
  const [actionError, setActionError] = useState<unknown>(null)

  const title = state.title || state.agent?.name || 'New chat'
  useEffect(() => {
    document.title = `${title} · sapagent`
  }, [title])

  // A title_update renames the conversation in the sidebar too, and a status change moves its
  // working / waiting dot (the status is stored before it is announced).
  const lastSeen = useRef<string | null>(null)
  useEffect(() => {
    if (!state.initialized) return
    const seen = `${state.status}\n${state.title}`
    if (lastSeen.current !== null && lastSeen.current !== seen) void mutate(keys.agents(wsId))
    lastSeen.current = seen
  }, [state.initialized, state.title, state.status, wsId, mutate])

  const deliver = useCallback(
    async (o: Pick<Outgoing, 'client_message_id' | 'content' | 'attachments'>) => {
      const body: Record<string, unknown> = { content: o.content, client_message_id: o.client_message_id }
      // Only with attachments: an API without the field rejects unknown fields.
      if (o.attachments.length) body.attachments = o.attachments.map((a) => a.id)
      const r = await command('message', body, `/api/agents/${agentId}/message`)
      if (r.http_status >= 200 && r.http_status < 300) {
        dispatch({ type: 'local/sent', client_message_id: o.client_message_id, queued: Number(r.result?.queued) || 0 })
      } else {
        const err = commandError(r)
        const wait = err.status === 429 && typeof r.result?.retry_after === 'number' ? ` Try again in ${r.result.retry_after} s.` : ''
        dispatch({ type: 'local/send_failed', client_message_id: o.client_message_id, error: `${err.message} (${err.code}).${wait}` })
      }
    },
    [agentId, command, dispatch],
  )

  const onSend = useCallback(
    async (content: string, files: StoredFile[]) => {
      const o = { client_message_id: newId(), content, attachments: files.map((f) => ({ id: f.id, name: f.name, size: f.size, content_type: f.content_type })) }
      dispatch({ type: 'local/send', outgoing: o })
      await deliver(o)
    },
    [deliver, dispatch],
  )

  const onRetry = useCallback(
    (o: Outgoing) => {
      // The same client_message_id: a message that did arrive is not delivered twice.
      dispatch({ type: 'local/resend', client_message_id: o.client_message_id })
      void deliver(o)
    },
    [deliver, dispatch],
  )
  const onDiscard = useCallback((id: string) => dispatch({ type: 'local/discard', client_message_id: id }), [dispatch])

  async function stop() {
    setActionError(null)
    const r = await command('stop', {}, `/api/agents/${agentId}/stop`)
    if (r.http_status === 0 || r.http_status >= 400) setActionError(commandError(r))
  }

  const decide = useCallback(
    async (decisions: Decision[]) => {
      const r = await command('approve', { decisions }, `/api/agents/${agentId}/approve`)
      if (r.http_status > 0 && r.http_status < 400) return null
      // not_allowed: the workspace's approval flags may have changed since they were loaded.
      if (r.http_status === 403) void mutate(keys.workspace(wsId))
      return commandError(r)
    },
    [agentId, command, mutate, wsId],
  )

  const allowedFor = useCallback(
    (a: PendingApproval) =>
      allowedDecisions(a, {
        user,
        workspaceRole: workspace?.role ?? '',
        orgRole,
        adminsMayApprove: !!workspace?.admins_may_approve,
        fourEyes: !!workspace?.four_eyes,
      }),
    [user, workspace, orgRole],
  )

  // init holds the newest 500 messages; older ones come from the transcript route on demand.
  const firstSeq = state.messages[0]?.seq ?? 1
  const loadOlder = useCallback(async () => {
    // The newest 500 messages older than the oldest one shown.
    const page = await messagesBefore(agentId, firstSeq, 500)
    const before = page.data.filter((m) => m.seq < firstSeq)
    dispatch({ type: 'local/older', messages: before })
    return before.length
  }, [agentId, firstSeq, dispatch])

  const running = state.status === 'active' || state.status === 'waiting'
  const [archivedNow, setArchivedNow] = useState<boolean | null>(null)
  const archived = archivedNow ?? !!state.agent?.archived_at

  return (
    <main className="flex min-h-0 flex-1 flex-col" aria-busy={!state.initialized}>
      <PageHeader title={title}>
        <ModelPicker agentId={agentId} current={model ?? state.agent?.model ?? ''} onChanged={setModel} />
        <span className="text-xs text-slate-700">{statusLabel[state.status] ?? state.status}</span>
        {running && <Button variant="danger" onClick={stop}>Stop</Button>}
        <ArchiveButton agentId={agentId} wsId={wsId} archived={archived} onChange={setArchivedNow} onError={setActionError} />
      </PageHeader>
      <ConnectionBanner state={state} />
      {(!!state.error || !!actionError) && (
        <div className="space-y-2 px-4 pt-2">
          {state.error && (
            <div className="flex items-start gap-2">
              <ErrorBanner error={state.error} className="flex-1" />
              <Button variant="ghost" onClick={() => dispatch({ type: 'local/dismiss_error' })}>Dismiss</Button>
            </div>
          )}
          <ErrorBanner error={actionError} />
        </div>
      )}
      {state.initialized ? (
        <MessageList agentId={agentId} messages={state.messages} partials={state.partials} outgoing={state.outgoing} tools={state.tools}
          retryAttempt={state.retryAttempt} onRetry={onRetry} loadOlder={firstSeq > 1 ? loadOlder : undefined} onDiscard={onDiscard} emptyText="No messages yet. Ask something to start." />
      ) : (
        <div className="flex-1 p-6"><Spinner label="Loading conversation" /></div>
      )}
      {!!state.retryAttempt && state.partials.length === 0 && (
        <p role="status" className="px-4 py-1 text-xs text-slate-700">The model call is being retried (attempt {state.retryAttempt})…</p>
      )}
      <ApprovalPanel approvals={state.approvals} allowedFor={allowedFor} decide={decide} />
      <Composer workspaceId={wsId} onSend={onSend} disabled={archived}
        disabledReason={archived ? 'This conversation is archived; restore it to continue.' : undefined} />
    </main>
  )
}
