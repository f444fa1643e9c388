// The conversation screens' API: agents, their transcript, models and tool outputs
// (docs/api.md), typed from the generated schema. Commands sent over REST when the socket is
// down go through postCommand (useChatStream).
import { api, type Page, type ResponseOf } from '../api/client'
import { keys } from '../api/keys'
import type { Agent } from '../api/types'
import type { ChatMessage } from './reducer'

export type ModelInfo = ResponseOf<'getModels'>['data'][number]
export type ToolOutput = ResponseOf<'getAgentsByIdToolOutputsByToolCallId'>

export const chatKeys = {
  models: '/api/models',
}

export const createAgent = (wsId: string, name: string) =>
  api<Agent>('/api/agents', { method: 'POST', body: { workspace_id: wsId, name } })

/** Chooses the agent's model (provider:model). */
export const setAgentModel = (agentId: string, model: string) => api<Agent>(keys.agent(agentId), { method: 'PATCH', body: { model } })

export const archiveAgent = (agentId: string) => api<Agent>(`/api/agents/${agentId}/archive`, { method: 'POST' })
export const restoreAgent = (agentId: string) => api<Agent>(keys.agent(agentId), { method: 'PATCH', body: { archived: false } })

/** The newest limit messages older than seq before, in seq order. */
export const messagesBefore = (agentId: string, before: number, limit: number) =>
  api<Page<ChatMessage>>(`/api/agents/${agentId}/messages?before=${before}&limit=${limit}`)

// The whole output behind a preview ({tool_call_id, content, size}; docs/api.md).
const fullOutputPath = (agentId: string, toolCallId: string) =>
  `/api/agents/${agentId}/tool-outputs/${encodeURIComponent(toolCallId)}`

/** A stored tool output; a text answer (not JSON) is the content itself. */
export const toolOutput = (agentId: string, toolCallId: string) => api<ToolOutput | string>(fullOutputPath(agentId, toolCallId))

/** A command's REST twin (POST message, approve or stop): its JSON answer. */
export const postCommand = (restPath: string, body: Record<string, unknown>) =>
  api<Record<string, unknown>>(restPath, { method: 'POST', body })
