// Small accessible building blocks every page uses: labelled fields that show the API's error
// next to the field, buttons with visible focus, and an error banner with the API's message.
import { useId, type ButtonHTMLAttributes, type ReactNode } from 'react'
import { ApiError } from '../api/client'

type Variant = 'primary' | 'secondary' | 'danger' | 'ghost'
const variants: Record<Variant, string> = {
  primary: 'bg-brand-600 text-white hover:bg-brand-700 disabled:bg-slate-400',
  secondary: 'border border-slate-300 bg-white text-slate-800 hover:bg-slate-100 disabled:text-slate-400',
  danger: 'bg-red-700 text-white hover:bg-red-800 disabled:bg-slate-400',
  ghost: 'text-slate-700 hover:bg-slate-200 disabled:text-slate-400',
}

export function Button({ variant = 'primary', className = '', ...props }: ButtonHTMLAttributes<HTMLButtonElement> & { variant?: Variant }) {
  return (
    <button
      type="button"
      {...props}
      className={`inline-flex items-center justify-center gap-1 rounded-md px-3 py-1.5 text-sm font-medium disabled:cursor-not-allowed ${variants[variant]} ${className}`}
    />
  )
}

interface FieldProps {
  label: string
  name: string
  value: string
  onChange: (v: string) => void
  error?: string
  hint?: string
  type?: string
  required?: boolean
  autoFocus?: boolean
  autoComplete?: string
  placeholder?: string
  disabled?: boolean
}

export function TextField({ label, name, value, onChange, error, hint, type = 'text', ...rest }: FieldProps) {
  const id = useId()
  const hintId = hint ? id + '-hint' : undefined
  const errId = error ? id + '-error' : undefined
  return (
    <div className="space-y-1">
      <label htmlFor={id} className="block text-sm font-medium text-slate-800">{label}</label>
      <input
        id={id}
        name={name}
        type={type}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={[hintId, errId].filter(Boolean).join(' ') || undefined}
        className={`block w-full rounded-md border px-3 py-1.5 text-sm ${error ? 'border-red-600' : 'border-slate-300'}`}
        {...rest}
      />
      {hint && <p id={hintId} className="text-xs text-slate-600">{hint}</p>}
      {error && <p id={errId} role="alert" className="text-xs text-red-700">{error}</p>}
    </div>
  )
}

export function SelectField({ label, name, value, onChange, options, error, hint, disabled }: Omit<FieldProps, 'type'> & { options: { value: string; label: string }[] }) {
  const id = useId()
  const errId = error ? id + '-error' : undefined
  const hintId = hint ? id + '-hint' : undefined
  return (
    <div className="space-y-1">
      <label htmlFor={id} className="block text-sm font-medium text-slate-800">{label}</label>
      <select id={id} name={name} value={value} disabled={disabled} onChange={(e) => onChange(e.target.value)}
        aria-invalid={error ? true : undefined} aria-describedby={[hintId, errId].filter(Boolean).join(' ') || undefined}
        className={`block w-full rounded-md border bg-white px-3 py-1.5 text-sm ${error ? 'border-red-600' : 'border-slate-300'}`}>
        {options.map((o) => <option key={o.value} value={o.value}>{o.label}</option>)}
      </select>
      {hint && <p id={hintId} className="text-xs text-slate-600">{hint}</p>}
      {error && <p id={errId} role="alert" className="text-xs text-red-700">{error}</p>}
    </div>
  )
}

export function ErrorBanner({ error, className = '' }: { error: unknown; className?: string }) {
  if (!error) return null
  const msg = error instanceof ApiError ? error.message : error instanceof Error ? error.message : String(error)
  const code = error instanceof ApiError ? error.code : undefined
  return (
    <div role="alert" className={`rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-800 ${className}`}>
      {msg}
      {code && <span className="ml-2 font-mono text-xs text-red-700">({code})</span>}
    </div>
  )
}

export function Spinner({ label = 'Loading' }: { label?: string }) {
  return (
    <span role="status" className="inline-flex items-center gap-2 text-sm text-slate-600">
      <span aria-hidden className="h-4 w-4 animate-spin rounded-full border-2 border-slate-300 border-t-brand-600" />
      {label}…
    </span>
  )
}

export function PageHeader({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <header className="flex flex-wrap items-center justify-between gap-3 border-b border-slate-200 bg-white px-6 py-3">
      <h1 className="text-lg font-semibold">{title}</h1>
      <div className="flex items-center gap-2">{children}</div>
    </header>
  )
}

export function Card({ title, children, className = '' }: { title?: string; children: ReactNode; className?: string }) {
  return (
    <section className={`rounded-lg border border-slate-200 bg-white p-4 ${className}`} aria-label={title}>
      {title && <h2 className="mb-3 text-base font-semibold">{title}</h2>}
      {children}
    </section>
  )
}
