// Tool policy: how much runs without asking, for the signed-in user in this workspace.
import { useId, useState } from 'react'
import { RadioGroup } from 'radix-ui'
import useSWR from 'swr'
import { Card, ErrorBanner, Spinner } from '../ui/controls'
import { SaveState } from './parts'
import { setToolPolicy, settingsKeys, type PolicyView, type ToolPolicy } from './api'

const CHOICES: { value: ToolPolicy; label: string; help: string }[] = [
  { value: 'ask_every_time', label: 'Ask every time', help: 'Every tool call waits for your approval, reads included.' },
  { value: 'run_reads_only', label: 'Run reads, ask for writes', help: 'Reads run at once; anything that could change SAP waits for approval (the default).' },
  { value: 'run_everything', label: 'Run everything', help: 'Reads and writes run without asking; use it only where mistakes are cheap.' },
]

export function ToolPolicyTab({ wsId }: { wsId: string }) {
  const key = settingsKeys.toolPolicy(wsId)
  const { data, error, mutate } = useSWR<PolicyView>(key)
  const [saving, setSaving] = useState(false)
  const [saved, setSaved] = useState(false)
  const [saveError, setSaveError] = useState<unknown>(null)
  const labelId = useId()

  async function choose(policy: string) {
    setSaving(true)
    setSaved(false)
    setSaveError(null)
    try {
      const p = await setToolPolicy(wsId, policy as ToolPolicy) // one of CHOICES
      await mutate(p, { revalidate: false })
      setSaved(true)
    } catch (err) {
      setSaveError(err)
    } finally {
      setSaving(false)
    }
  }

  return (
    <Card title="Tool policy">
      <p id={labelId} className="mb-3 text-sm text-slate-700">
        Which of your tool calls run without asking you first, in this workspace. A tool may still ask for some inputs (a final note, a real data load).
      </p>
      {error && <ErrorBanner error={error} />}
      {!data && !error && <Spinner />}
      {data && (
        <RadioGroup.Root aria-labelledby={labelId} value={data.policy} onValueChange={choose} disabled={saving} className="space-y-2">
          {CHOICES.map((c) => (
            <div key={c.value} className="flex items-start gap-3 rounded-md border border-slate-200 p-3">
              <RadioGroup.Item id={`policy-${c.value}`} value={c.value} aria-describedby={`policy-${c.value}-help`}
                className="mt-0.5 flex h-4 w-4 shrink-0 items-center justify-center rounded-full border border-slate-500 bg-white data-[state=checked]:border-brand-600">
                <RadioGroup.Indicator className="block h-2 w-2 rounded-full bg-brand-600" />
              </RadioGroup.Item>
              <div>
                <label htmlFor={`policy-${c.value}`} className="text-sm font-medium">{c.label}</label>
                <p id={`policy-${c.value}-help`} className="text-xs text-slate-600">{c.help}</p>
              </div>
            </div>
          ))}
        </RadioGroup.Root>
      )}
      {data?.effective_policy && data.effective_policy !== data.policy && (
        <p className="mt-2 text-sm text-slate-700">
          This workspace allows at most “{CHOICES.find((c) => c.value === data.effective_policy)?.label ?? data.effective_policy}”: that applies to your calls.
        </p>
      )}
      {data?.four_eyes && (
        <p className="mt-2 text-sm text-slate-700">Four-eyes rule: every write waits for another member's approval, whatever you choose here.</p>
      )}
      <div className="mt-2"><SaveState saving={saving} saved={saved} /></div>
      <ErrorBanner error={saveError} className="mt-2" />
    </Card>
  )
}
