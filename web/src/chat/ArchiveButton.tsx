import { useState } from 'react'
import { useSWRConfig } from 'swr'
import { keys } from '../api/keys'
import { Button } from '../ui/controls'
import { archiveAgent, restoreAgent } from './api'

/** Archives the conversation (it leaves the sidebar's list) or restores an archived one. */
export function ArchiveButton({ agentId, wsId, archived, onChange, onError }: {
  agentId: string
  wsId: string
  archived: boolean
  onChange: (archived: boolean) => void
  onError: (e: unknown) => void
}) {
  const { mutate } = useSWRConfig()
  const [busy, setBusy] = useState(false)
  async function toggle() {
    setBusy(true)
    try {
      if (archived) await restoreAgent(agentId)
      else await archiveAgent(agentId)
      onChange(!archived)
      await Promise.all([mutate(keys.agents(wsId)), mutate(keys.agents(wsId, true))])
    } catch (e) {
      onError(e)
    } finally {
      setBusy(false)
    }
  }
  return (
    <Button variant="secondary" onClick={toggle} disabled={busy}>
      {archived ? 'Restore chat' : 'Archive chat'}
    </Button>
  )
}
