// Shapes of the landscape and sync routes, the simpler ones from the generated schema
// (docs/api.md "SAP landscape reads", docs/sync.md; api/index/landscape.go, api/index/sync.go).
import type { ResponseOf } from '../api/client'

export type Level = 'A' | 'B' | 'C' | 'D'
export const levels: Level[] = ['A', 'B', 'C', 'D']

export interface IndexCounts {
  entries?: number
  tables?: number
  functions?: number
  bapis?: number
  custom_objects?: number
  custom_code?: number
  code_lines?: number
  relationships?: number
  enhancements?: number
  extensions?: number
  docs?: number
  clean_core?: Record<string, number>
}

export interface RunSummary {
  id: string
  mode: string
  trigger: string
  status: string
  generation: number
  error: string
  started_at: string
  finished_at: string | null
}

export interface Dashboard {
  connection_id: string
  name: string
  system_type: string
  status: 'ready' | 'none'
  sync_status: 'none' | 'syncing' | 'ready' | 'failed'
  generation: number
  last_full_sync_at: string | null
  last_delta_sync_at: string | null
  counts: IndexCounts
  objects: number
  custom_objects: number
  by_type: { type: string; objects: number; custom: number }[] | null
  by_package: { name: string; objects: number; custom: number }[] | null
  by_component: { name: string; objects: number; custom: number }[] | null
  custom_code: { objects: number; lines: number }
  clean_core: Record<string, number> | null
  relationships: number
  last_runs: RunSummary[] | null
}

export interface SyncRun {
  id: string
  connection_id: string
  workflow_id: string
  workflow_run_id: string
  mode: string
  trigger: string
  status: string // running | succeeded | failed | cancelled | skipped
  requested_by: string
  generation: number
  phases: unknown
  counts: IndexCounts | null
  error?: string
  started_at: string
  finished_at: string | null
  duration_ms?: number | null
  /** Set while the connector fails and the run's phase is retried (docs/sync.md "Waiting for SAP"). */
  waiting?: SyncWaiting | null
}

export interface SyncWaiting {
  reason: string
  phase?: string
  attempt: number
  since: string
}

export interface ProgressPayload {
  run_id?: string
  mode?: string
  phase?: string
  done?: number
  total?: number
  at?: string
}

export interface IndexStatus {
  connection_id: string
  name: string
  system_type: string
  status: 'none' | 'syncing' | 'ready' | 'failed'
  index: {
    generation: number
    status: string
    last_full_sync_at: string | null
    last_delta_sync_at: string | null
    counts: IndexCounts | null
    progress: ProgressPayload | null
    updated_at: string
  } | null
  last_run: SyncRun | null
}

export interface Schedule {
  id: string
  connection_id: string
  mode: 'full' | 'delta'
  cron: string
  time_zone: string
  paused: boolean
  note?: string
  next_runs: string[] | null
  recent_runs: string[] | null
  missing?: boolean
}

export interface ObjectRef {
  type: string
  name: string
}

/**
 * A Clean Core reason as the analysis stores it: the used object flat (type, name, kind, line);
 * the cleancore.Reason form nests it in `usage`. reasonUsage reads either.
 */
export interface Reason {
  type?: string
  name?: string
  kind?: string
  line?: number
  usage?: { type: string; name: string; kind: string }
  state: string
  level: Level
  why: string
  deprecated?: boolean
  successors?: ObjectRef[]
  successorConcept?: string
}

export interface Finding {
  object_type: string
  object_name: string
  package: string
  level: Level
  reasons: number
  top_reasons: Reason[] | null
  successors: ObjectRef[] | null
}

export interface CleanCoreSummary {
  objects: number
  levels: { level: Level; objects: number; share: number }[]
}

/** A conversion item: the used object flat (type, name) or nested in `object`. */
export interface ConversionItem {
  type?: string
  name?: string
  object?: ObjectRef
  state: string
  deprecated?: boolean
  successors?: ObjectRef[]
  successorConcept?: string
}

export interface CleanCoreObject {
  object_type: string
  object_name: string
  package: string
  level: Level
  reasons: Reason[] | null
  conversion: ConversionItem[] | null
  generation: number
}

export type InventoryObject = ResponseOf<'getWorkspacesByIdDashboardObjects'>['data'][number]

export interface DiffSide {
  package: string
  title: string
  release_state: string
}

export interface DiffItem {
  object_type: string
  object_name: string
  custom: boolean
  left: DiffSide | null
  right: DiffSide | null
  fields?: string[]
}

export type DiffKind = 'changed' | 'only_left' | 'only_right'

export type DiffCounts = ResponseOf<'getWorkspacesByIdDashboardDiff'>['counts']

export type DocEntry = ResponseOf<'getWorkspacesByIdDocsByKindBySubject'>

export type DocKind = 'package' | 'object' | 'er_diagram' | 'business_process'

export type Source = ResponseOf<'getWorkspacesByIdSource'>

export type Action = ResponseOf<'getWorkspacesByIdActions'>['data'][number]
