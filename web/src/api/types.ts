// Shapes of the API's resources the pages share, as schemas/openapi.json describes them.
import type { ResponseOf } from './client'

export type Org = ResponseOf<'getOrgsById'>
export type Workspace = ResponseOf<'getWorkspacesById'>
export type Member = ResponseOf<'getOrgsByIdMembers'>['data'][number]
export type Connection = ResponseOf<'getWorkspacesByIdConnectionsByConnId'>

// A conversation, as the event protocol's init frame carries it too (generated from Go).
export type { Agent } from '../chat/events.gen'
