// The conversation's model: a list from GET /api/models when the API has it (404 → only the
// current model is shown), changed with PATCH /api/agents/:id {"model"}.
import { memo, useId, useState } from 'react'
import useSWR, { useSWRConfig } from 'swr'
import { ApiError } from '../api/client'
import { keys } from '../api/keys'
import { chatKeys, setAgentModel, type ModelInfo } from './api'

export const ModelPicker = memo(function ModelPicker({ agentId, current, onChanged }: { agentId: string; current: string; onChanged: (m: string) => void }) {
  const id = useId()
  const { data, error } = useSWR<{ data: ModelInfo[] }>(chatKeys.models)
  const { mutate } = useSWRConfig()
  const [saving, setSaving] = useState(false)
  const [err, setErr] = useState('')
  const models = data?.data ?? []
  const fallback = models.find((m) => m.default)

  if (error || !models.length) {
    return (
      <span className="text-xs text-slate-700">
        Model: <span className="font-mono">{current || (error instanceof ApiError && error.status !== 404 ? 'unknown' : 'default')}</span>
      </span>
    )
  }

  async function change(model: string) {
    setSaving(true)
    setErr('')
    try {
      await setAgentModel(agentId, model)
      onChanged(model)
      void mutate(keys.agent(agentId))
    } catch (e) {
      setErr(e instanceof Error ? e.message : String(e))
    } finally {
      setSaving(false)
    }
  }

  const options = models.some((m) => m.id === current) || !current ? models : [{ id: current, provider: '', model: current, default: false }, ...models]
  return (
    <div className="flex items-center gap-2">
      <label htmlFor={id} className="text-xs font-medium text-slate-800">Model</label>
      <select id={id} value={current} disabled={saving} onChange={(e) => void change(e.target.value)}
        aria-invalid={err ? true : undefined} aria-describedby={err ? id + '-err' : undefined}
        className="rounded-md border border-slate-300 bg-white px-2 py-1 text-xs">
        <option value="">Default{fallback ? ` (${fallback.id})` : ''}</option>
        {options.map((m) => <option key={m.id} value={m.id}>{m.id}</option>)}
      </select>
      {err && <span id={id + '-err'} role="alert" className="text-xs text-red-700">{err}</span>}
    </div>
  )
})
