// Building blocks of the settings screens: a confirm dialog, a modal, a labelled switch and a
// deletion progress line. Radix primitives trap focus and close with Escape.
import { useEffect, useId, type ReactNode } from 'react'
import { AlertDialog, Dialog, Switch } from 'radix-ui'
import useSWR from 'swr'
import { ApiError } from '../api/client'
import { Button, ErrorBanner, Spinner } from '../ui/controls'
import { describeDeletion, isDeletionStatusUrl, type Deletion } from './deletion'

const overlay = 'fixed inset-0 z-40 bg-slate-900/40'

/**
 * The dimmed backdrop. Not Radix's Overlay: that one locks scrolling with an injected <style>
 * element, which the page's CSP (style-src 'self') blocks and reports on every opening. The
 * content still traps focus, hides the rest from screen readers and closes on outside clicks.
 */
function Backdrop() {
  return <div className={overlay} aria-hidden="true" />
}
const panel = 'fixed left-1/2 top-1/2 z-50 max-h-[90vh] w-[min(40rem,calc(100vw-2rem))] -translate-x-1/2 -translate-y-1/2 overflow-y-auto rounded-lg bg-white p-5 shadow-xl'

/** Asks before something that cannot be undone; stays open (buttons disabled) while it runs. */
export function ConfirmDialog({ open, onOpenChange, title, description, confirmLabel, onConfirm, busy, error }: {
  open: boolean
  onOpenChange: (open: boolean) => void
  title: string
  description: ReactNode
  confirmLabel: string
  onConfirm: () => void
  busy?: boolean
  error?: unknown
}) {
  return (
    <AlertDialog.Root open={open} onOpenChange={(o) => !busy && onOpenChange(o)}>
      <AlertDialog.Portal>
        <Backdrop />
        <AlertDialog.Content className={panel}>
          <AlertDialog.Title className="text-base font-semibold">{title}</AlertDialog.Title>
          <AlertDialog.Description asChild>
            <div className="mt-2 text-sm text-slate-700">{description}</div>
          </AlertDialog.Description>
          <ErrorBanner error={error} className="mt-3" />
          <div className="mt-4 flex justify-end gap-2">
            <AlertDialog.Cancel asChild>
              <Button variant="secondary" disabled={busy}>Cancel</Button>
            </AlertDialog.Cancel>
            <Button variant="danger" disabled={busy} onClick={onConfirm}>{busy ? 'Working…' : confirmLabel}</Button>
          </div>
        </AlertDialog.Content>
      </AlertDialog.Portal>
    </AlertDialog.Root>
  )
}

/** A modal dialog with a title; Escape and the Close button close it. */
export function Modal({ open, onOpenChange, title, description, children }: {
  open: boolean
  onOpenChange: (open: boolean) => void
  title: string
  description?: string
  children: ReactNode
}) {
  return (
    <Dialog.Root open={open} onOpenChange={onOpenChange}>
      <Dialog.Portal>
        <Backdrop />
        <Dialog.Content className={panel}>
          <div className="mb-3 flex items-start justify-between gap-3">
            <div>
              <Dialog.Title className="text-base font-semibold">{title}</Dialog.Title>
              {description ? <Dialog.Description className="mt-1 text-sm text-slate-600">{description}</Dialog.Description>
                : <Dialog.Description className="sr-only">{title}</Dialog.Description>}
            </div>
            <Dialog.Close asChild>
              <Button variant="ghost" aria-label="Close">✕</Button>
            </Dialog.Close>
          </div>
          {children}
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  )
}

/** A labelled on/off switch with a one-sentence explanation. */
export function SwitchField({ label, description, checked, onChange, disabled }: {
  label: string
  description: string
  checked: boolean
  onChange: (v: boolean) => void
  disabled?: boolean
}) {
  const id = useId()
  return (
    <div className="flex items-start justify-between gap-4 py-2">
      <div>
        <label htmlFor={id} className="text-sm font-medium text-slate-800">{label}</label>
        <p id={id + '-desc'} className="text-xs text-slate-600">{description}</p>
      </div>
      <Switch.Root id={id} checked={checked} onCheckedChange={onChange} disabled={disabled} aria-describedby={id + '-desc'}
        className="relative h-6 w-11 shrink-0 rounded-full bg-slate-300 transition-colors data-[state=checked]:bg-brand-600 disabled:opacity-50">
        <Switch.Thumb className="block h-5 w-5 translate-x-0.5 rounded-full bg-white shadow transition-transform data-[state=checked]:translate-x-[22px]" />
      </Switch.Root>
    </div>
  )
}

/** Polls a deletion's status URL every second until it is done, then calls onDone once. */
export function DeletionProgress({ statusUrl, onDone }: { statusUrl: string; onDone: () => void }) {
  const valid = isDeletionStatusUrl(statusUrl)
  const { data, error } = useSWR<Deletion>(valid ? statusUrl : null, {
    refreshInterval: (d) => (d?.done ? 0 : 1000),
    revalidateOnFocus: false,
  })
  // After the deletion finished its record may be gone: a 404 then means done, too.
  const gone = error instanceof ApiError && error.status === 404
  const done = !!data?.done || gone
  useEffect(() => {
    if (done) onDone()
  }, [done, onDone])
  if (!valid) return <ErrorBanner error={new Error('The server answered an unexpected status URL.')} />
  return (
    <div role="status" aria-live="polite" className="mt-3 rounded-md border border-slate-200 bg-slate-50 px-3 py-2 text-sm">
      {done ? 'Deleted.' : <Spinner label={`Deleting: ${describeDeletion(data)}`} />}
      {error && !gone && <ErrorBanner error={error} className="mt-2" />}
    </div>
  )
}

/** Shows a mutation's state next to its button: "Saving…", then "Saved". */
export function SaveState({ saving, saved }: { saving: boolean; saved: boolean }) {
  return <span role="status" className="text-xs text-slate-600">{saving ? 'Saving…' : saved ? 'Saved' : ''}</span>
}
