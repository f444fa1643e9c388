// The Clean Core distribution as a hand-written SVG bar chart (no chart library) with the same
// figures in a table: the chart is one image with a text summary for screen readers, the table
// is the text alternative everyone can read and copy.
import { useId } from 'react'
import { barLength, niceMax, shareText, ticks } from './chart'
import { captionClass, formatNumber, tableClass, tdClass, thClass } from './shared'
import type { Level } from './types'

const fill: Record<Level, string> = { A: '#15803d', B: '#65a30d', C: '#d97706', D: '#b91c1c' }
const meaning: Record<Level, string> = {
  A: 'released APIs only',
  B: 'also classic APIs',
  C: 'reads SAP-internal objects',
  D: 'writes SAP tables, modifies SAP or uses no-API objects',
}

export interface LevelDatum {
  level: Level
  objects: number
  share?: number // 0–1, when the API gives it
}

export function LevelChart({ title, data, compact = false, selected, onSelect }: {
  title: string
  data: LevelDatum[]
  compact?: boolean
  selected?: string
  onSelect?: (level: Level) => void
}) {
  const id = useId()
  const total = data.reduce((s, d) => s + d.objects, 0)
  const axisMax = niceMax(Math.max(0, ...data.map((d) => d.objects)))
  const labelW = 40, valueW = 70, barArea = 300, rowH = compact ? 22 : 30, top = 4, axisH = 18
  const width = labelW + barArea + valueW
  const height = top + data.length * rowH + axisH
  const share = (d: LevelDatum) => d.share ?? (total > 0 ? d.objects / total : 0)
  const summary = data.map((d) => `${d.level}: ${formatNumber(d.objects)} (${shareText(share(d))})`).join(', ')
  return (
    <figure className="space-y-2" aria-labelledby={`${id}-t`}>
      <figcaption id={`${id}-t`} className="text-sm font-semibold text-slate-800">{title}</figcaption>
      <svg role="img" aria-label={`${title} chart. ${summary}`} viewBox={`0 0 ${width} ${height}`}
        className={`w-full ${compact ? 'max-w-sm' : 'max-w-xl'}`} preserveAspectRatio="xMinYMin meet">
        {ticks(axisMax).map((t) => {
          const x = labelW + (t / axisMax) * barArea
          return (
            <g key={t} aria-hidden="true">
              <line x1={x} x2={x} y1={top} y2={top + data.length * rowH} stroke="#e2e8f0" />
              <text x={x} y={height - 4} fontSize="10" textAnchor="middle" fill="#475569">{formatNumber(t)}</text>
            </g>
          )
        })}
        {data.map((d, i) => {
          const y = top + i * rowH
          const w = barLength(d.objects, axisMax, barArea)
          return (
            <g key={d.level} aria-hidden="true">
              <text x={labelW - 8} y={y + rowH / 2 + 4} fontSize="12" textAnchor="end" fill="#0f172a" fontWeight={selected === d.level ? 700 : 400}>{d.level}</text>
              <rect x={labelW} y={y + 4} width={w} height={rowH - 8} fill={fill[d.level]} rx="2" />
              <text x={labelW + w + 6} y={y + rowH / 2 + 4} fontSize="11" fill="#0f172a">{formatNumber(d.objects)}</text>
            </g>
          )
        })}
      </svg>
      <table className={`${tableClass} ${compact ? 'max-w-sm' : 'max-w-xl'}`}>
        <caption className={compact ? 'sr-only' : captionClass}>{title} (table)</caption>
        <thead>
          <tr>
            <th scope="col" className={thClass}>Level</th>
            {!compact && <th scope="col" className={thClass}>Meaning</th>}
            <th scope="col" className={`${thClass} text-right`}>Objects</th>
            <th scope="col" className={`${thClass} text-right`}>Share</th>
          </tr>
        </thead>
        <tbody>
          {data.map((d) => (
            <tr key={d.level} className={selected === d.level ? 'bg-brand-50' : undefined}>
              <th scope="row" className={`${tdClass} font-semibold`}>
                <span aria-hidden className="mr-1.5 inline-block h-2.5 w-2.5 rounded-sm align-middle" style={{ backgroundColor: fill[d.level] }} />
                {onSelect ? (
                  <button type="button" className="underline decoration-dotted hover:text-brand-700" aria-pressed={selected === d.level}
                    onClick={() => onSelect(d.level)}>
                    {d.level}<span className="sr-only"> (show objects of level {d.level})</span>
                  </button>
                ) : d.level}
              </th>
              {!compact && <td className={tdClass}>{meaning[d.level]}</td>}
              <td className={`${tdClass} text-right`}>{formatNumber(d.objects)}</td>
              <td className={`${tdClass} whitespace-nowrap text-right`}>{shareText(share(d))}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  )
}
