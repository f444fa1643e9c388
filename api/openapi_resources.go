package api

import (
	"github.com/google/uuid"

	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/workflows"
)

// JSON schemas of the tenancy, connection, file and chat routes for /api/openapi.json: the
// store records are described from their structs (schemaOf), the handlers' own maps by hand.

var (
	anyObject       = map[string]any{"type": "object"}
	orgSchema       = narrowed(schemaOf(store.Org{}), map[string]any{"role": enum(store.RoleOwner, store.RoleAdmin, store.RoleMember)})
	memberSchema    = schemaOf(store.Member{})
	workspaceSchema = narrowed(schemaOf(store.Workspace{}), map[string]any{"settings": anyObject, "max_tool_policy": policyEnum,
		"role": map[string]any{"enum": []string{store.RoleAdmin, store.RoleMember, ""}, "description": "the caller's effective role"}})
	connectionSchema = narrowed(schemaOf(store.Connection{}), map[string]any{"system_type": enum("ECC", "S4HANA"),
		"environment":     enum("development", "test", "production"),
		"credential_mode": enum("user_login_required", "technical_user_reads", "technical_user_all")})
	credentialSchema      = schemaOf(store.Credential{})
	fileSchema            = schemaOf(store.File{})
	agentSchema           = schemaOf(store.Agent{})
	messageSchema         = schemaOf(store.Message{})
	actionSchema          = schemaOf(store.Action{})
	pendingApprovalSchema = schemaOf(workflows.PendingApproval{})
	deletionStartedSchema = props(map[string]any{"deletion_id": strType,
		"status_url": map[string]any{"type": "string", "description": "GET it for the deletion's progress"}})
	deletionStatusSchema = schemaOf(struct {
		DeletionID string `json:"deletion_id"`
		workflows.DeletionStatus
	}{})
	messageAcceptedSchema = schemaOf(struct {
		MessageID string    `json:"message_id"`
		AgentID   uuid.UUID `json:"agent_id"`
		Queued    int       `json:"queued"`
	}{})
	secretSetSchema = props(map[string]any{"name": strType, "connection_id": uuidStr})
	healthSchema    = props(map[string]any{"status": enum("ok", "degraded"),
		"checks": map[string]any{"type": "object", "additionalProperties": enum("ok", "unavailable")},
		"failed": arrayOf(strType)})
	// connectorHealthSchema: reachable connections carry the system's identity, others the error.
	connectorHealthSchema = props(map[string]any{"data": arrayOf(obj([]string{"connection_id", "name", "reachable", "latency_ms"},
		map[string]any{"connection_id": strType, "name": strType, "reachable": boolean, "latency_ms": integer,
			"error": strType, "system_id": strType, "system_type": strType, "release": strType}))})
	checksSchema = props(map[string]any{"ok": boolean, "checks": arrayOf(obj([]string{"name", "ok", "ms"},
		map[string]any{"name": strType, "ok": boolean, "ms": integer, "error": strType, "info": strType}))})
)
