// What every landscape tab shares: the workspace, whether the user may start syncs, and the
// live runs from the workspace topic (one socket for the whole page).
import { createContext, useContext } from 'react'
import type { StreamState } from '../api/stream'
import type { LiveRuns } from './progress'

export interface LandscapeContextValue {
  wsId: string
  isAdmin: boolean
  runs: LiveRuns
  streamState: StreamState
  /** Grows when a sync ended: paged lists (which SWR's key filter cannot reach) read again. */
  version: number
}

export const LandscapeContext = createContext<LandscapeContextValue | null>(null)

export function useLandscape(): LandscapeContextValue {
  const v = useContext(LandscapeContext)
  if (!v) throw new Error('useLandscape outside LandscapePage')
  return v
}
