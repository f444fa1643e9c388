// The message box: Enter sends, Shift+Enter starts a new line; files come by drag and drop or
// the "Attach files" button and are uploaded at once, shown as chips (name, size, remove).
import { memo, useId, useRef, useState, type DragEvent, type FormEvent, type KeyboardEvent } from 'react'
import { ApiError } from '../api/client'
import { Button } from '../ui/controls'
import { acceptedFiles, formatSize, uploadFile, type StoredFile } from './files'
import { newId } from './useChatStream'

interface Chip {
  key: string
  name: string
  size: number
  file?: StoredFile
  error?: string
}

interface Props {
  workspaceId: string
  onSend: (content: string, files: StoredFile[]) => Promise<void>
  disabled?: boolean
  disabledReason?: string
}

export const Composer = memo(function Composer({ workspaceId, onSend, disabled, disabledReason }: Props) {
  const [text, setText] = useState('')
  const [chips, setChips] = useState<Chip[]>([])
  const [dragging, setDragging] = useState(false)
  const fileInput = useRef<HTMLInputElement>(null)
  const textId = useId()
  const hintId = useId()

  const uploading = chips.some((c) => !c.file && !c.error)
  const ready = chips.filter((c) => c.file).map((c) => c.file!)
  const canSend = !disabled && !uploading && text.trim() !== ''

  function addFiles(files: FileList | File[]) {
    for (const f of Array.from(files)) {
      const key = newId()
      setChips((cs) => [...cs, { key, name: f.name, size: f.size }])
      uploadFile(workspaceId, f).then(
        (stored) => setChips((cs) => cs.map((c) => (c.key === key ? { ...c, file: stored, name: stored.name || c.name, size: stored.size } : c))),
        (e: unknown) => {
          const msg = e instanceof ApiError ? e.message : String(e)
          setChips((cs) => cs.map((c) => (c.key === key ? { ...c, error: msg } : c)))
        },
      )
    }
  }

  function submit(e?: FormEvent) {
    e?.preventDefault()
    if (!canSend) return
    const content = text.trim()
    // The outgoing bubble shows the message from here on (and keeps it with Retry if sending
    // fails), so the box is free for the next one at once: messages queue behind a turn.
    setText('')
    setChips([])
    void onSend(content, ready)
  }

  function onKeyDown(e: KeyboardEvent<HTMLTextAreaElement>) {
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault()
      submit()
    }
  }

  function onDrop(e: DragEvent) {
    e.preventDefault()
    setDragging(false)
    if (e.dataTransfer.files.length) addFiles(e.dataTransfer.files)
  }

  return (
    <form onSubmit={submit} aria-label="Send a message"
      onDragOver={(e) => { e.preventDefault(); setDragging(true) }} onDragLeave={() => setDragging(false)} onDrop={onDrop}
      className={`border-t border-slate-200 bg-white px-4 py-3 ${dragging ? 'ring-2 ring-brand-600 ring-inset' : ''}`}>
      {chips.length > 0 && (
        <ul aria-label="Attachments" className="mb-2 flex flex-wrap gap-2">
          {chips.map((c) => (
            <li key={c.key} className={`inline-flex items-center gap-1 rounded-full border px-2 py-0.5 text-xs ${c.error ? 'border-red-400 bg-red-50' : 'border-slate-300 bg-slate-50'}`}>
              <span aria-hidden>📎</span>
              <span>{c.name}</span>
              <span className="text-slate-600">{formatSize(c.size)}</span>
              {!c.file && !c.error && <span className="text-slate-600">uploading…</span>}
              {c.error && <span role="alert" className="text-red-800">{c.error}</span>}
              <button type="button" aria-label={`Remove ${c.name}`} onClick={() => setChips((cs) => cs.filter((x) => x.key !== c.key))}
                className="rounded-full px-1 text-slate-700 hover:bg-slate-200">×</button>
            </li>
          ))}
        </ul>
      )}
      <label htmlFor={textId} className="sr-only">Message</label>
      <textarea id={textId} value={text} onChange={(e) => setText(e.target.value)} onKeyDown={onKeyDown} rows={3}
        aria-describedby={hintId} placeholder={dragging ? 'Drop files to attach' : 'Ask about your SAP system…'}
        className="block w-full resize-y rounded-md border border-slate-300 px-3 py-2 text-sm" />
      <div className="mt-2 flex flex-wrap items-center gap-2">
        <input ref={fileInput} type="file" multiple accept={acceptedFiles} aria-label="Files to attach" tabIndex={-1} className="sr-only"
          onChange={(e) => { if (e.target.files) addFiles(e.target.files); e.target.value = '' }} />
        <Button variant="secondary" onClick={() => fileInput.current?.click()} disabled={disabled}>Attach files</Button>
        <p id={hintId} className="flex-1 text-xs text-slate-600">
          {disabled && disabledReason ? disabledReason : 'Enter sends, Shift+Enter adds a line. Files: PDF, images, text, CSV.'}
        </p>
        <Button type="submit" disabled={!canSend}>Send</Button>
      </div>
    </form>
  )
})
