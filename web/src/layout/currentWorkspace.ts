import { useParams } from 'react-router'
import useSWR from 'swr'
import { keys } from '../api/keys'
import type { Workspace } from '../api/types'

/** The workspace of the current route (/w/:wsId/…), loaded once and shared through SWR. */
export function useCurrentWorkspace() {
  const { wsId } = useParams()
  const { data, error, mutate } = useSWR<Workspace>(wsId ? keys.workspace(wsId) : null)
  return { wsId, workspace: data, error, mutate }
}
