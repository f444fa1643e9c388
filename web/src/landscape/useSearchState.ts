// Filter state kept in the URL's query, so a filtered list survives opening an object and
// coming back, and can be shared as a link.
import { useCallback } from 'react'
import { useSearchParams } from 'react-router'

export function useSearchState<K extends string>(names: readonly K[]) {
  const [params, setParams] = useSearchParams()
  const values = Object.fromEntries(names.map((n) => [n, params.get(n) ?? ''])) as Record<K, string>
  const set = useCallback((patch: Partial<Record<K, string>>) => {
    setParams((prev) => {
      const next = new URLSearchParams(prev)
      for (const [k, v] of Object.entries(patch) as [string, string | undefined][]) {
        if (v) next.set(k, v)
        else next.delete(k)
      }
      return next
    }, { replace: true })
  }, [setParams])
  return [values, set] as const
}
