import { useState, type FormEvent } from 'react'
import { Button, Card, ErrorBanner, TextField } from '../ui/controls'
import { nameFields, splitError } from './fieldErrors'
import { SaveState } from './parts'

/** A card that renames something (a workspace, an organization): the API's error shows under the name. */
export function RenameCard({ title, label, current, disabled, save }: {
  title: string
  label: string
  current: string
  disabled: boolean
  save: (name: string) => Promise<void>
}) {
  const [name, setName] = useState(current)
  const [saving, setSaving] = useState(false)
  const [saved, setSaved] = useState(false)
  const [error, setError] = useState<unknown>(null)
  async function submit(e: FormEvent) {
    e.preventDefault()
    setSaving(true)
    setSaved(false)
    setError(null)
    try {
      await save(name)
      setSaved(true)
    } catch (err) {
      setError(err)
    } finally {
      setSaving(false)
    }
  }
  const errs = splitError(error, nameFields)
  return (
    <Card title={title}>
      <form onSubmit={submit} className="space-y-3">
        <TextField label={label} name="name" value={name} onChange={setName} disabled={disabled} required error={errs.field.name} />
        <ErrorBanner error={errs.banner} />
        {!disabled && (
          <div className="flex items-center gap-3">
            <Button type="submit" disabled={saving || name.trim() === current}>Save name</Button>
            <SaveState saving={saving} saved={saved} />
          </div>
        )}
      </form>
    </Card>
  )
}
