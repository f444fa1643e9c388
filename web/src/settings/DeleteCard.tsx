import { useState, type ReactNode } from 'react'
import { Button, Card } from '../ui/controls'
import { startDeletion } from './api'
import { ConfirmDialog, DeletionProgress } from './parts'

/**
 * Deletes a workspace or an organization: a confirm dialog, DELETE (202 with a status URL), then
 * the deletion's progress until it is done.
 */
export function DeleteCard({ what, name, path, explanation, description, onStarted, onDone }: {
  what: 'workspace' | 'organization'
  name: string
  path: string // the resource's API path (DELETE)
  explanation: string
  description: ReactNode
  onStarted?: () => void
  onDone: () => void
}) {
  const [open, setOpen] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const [statusUrl, setStatusUrl] = useState<string | null>(null)
  async function confirm() {
    setBusy(true)
    setError(null)
    try {
      const d = await startDeletion(path)
      setStatusUrl(d.status_url)
      setOpen(false)
      onStarted?.()
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  return (
    <Card title={`Delete ${what}`}>
      <p className="text-sm text-slate-700">{explanation}</p>
      {statusUrl ? <DeletionProgress statusUrl={statusUrl} onDone={onDone} /> : (
        <Button variant="danger" className="mt-3" onClick={() => setOpen(true)}>Delete {what}…</Button>
      )}
      <ConfirmDialog open={open} onOpenChange={setOpen} busy={busy} error={error}
        title={`Delete ${what} ${name}?`} confirmLabel={`Delete ${what}`} onConfirm={confirm} description={description} />
    </Card>
  )
}
