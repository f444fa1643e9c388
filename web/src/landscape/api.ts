// The landscape's actions (docs/api.md): starting and cancelling syncs, pausing, resuming and
// triggering schedules. Its reads are SWR keys in paths.ts.
import { api, type BodyOf, type ResponseOf } from '../api/client'
import { landscapePaths } from './paths'

export type SyncMode = NonNullable<BodyOf<'postWorkspacesByIdIndex'>['mode']>
export type ScheduleAction = 'pause' | 'unpause' | 'trigger'

/** Starts a manual sync (admin); 409 sync_running while one runs. */
export const startSync = (wsId: string, connectionId: string, mode: SyncMode) =>
  api<ResponseOf<'postWorkspacesByIdIndex'>>(landscapePaths.index(wsId), { method: 'POST', body: { connection_id: connectionId, mode } })

export const cancelSyncRun = (wsId: string, runId: string) => api<void>(`${landscapePaths.syncRuns(wsId)}/${runId}/cancel`, { method: 'POST' })

export const scheduleAction = (wsId: string, connectionId: string, mode: string, action: ScheduleAction) =>
  api<ResponseOf<'postWorkspacesByIdSyncSchedulesByConnIdByModeByAction'>>(
    `${landscapePaths.schedules(wsId)}/${connectionId}/${mode}/${action}`, { method: 'POST' })
