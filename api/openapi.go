package api

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/sapagent/sapagent/api/index"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/workflows"
)

//go:generate go run ./openapigen

// routeDoc describes one route for /api/openapi.json. A test fails when a registered gin
// route has no entry here, so the document cannot drift from the router.
type routeDoc struct {
	Method, Path, Summary string
	Body                  map[string]any // JSON schema of the request body (nil: none)
	OptionalBody          bool           // the body may be left out
	Status                int            // success status
	Public                bool
	Query                 []queryParam   // query parameters
	Response              map[string]any // JSON schema of the success body (nil: not described)
	AlsoMarkdown          bool           // the success body can also be text/markdown (Accept or ?format=)
	Errors                []int          // error statuses besides the ones every route has
	Unavailable           map[string]any // JSON schema of a 503 body that is not the error (nil: the error)
}

// queryParam is one documented query parameter.
type queryParam struct {
	Name     string
	Schema   map[string]any
	Required bool
}

// obj is a closed object schema; required lists the fields always present (none: omitted,
// since OpenAPI refuses an empty or null list).
func obj(required []string, props map[string]any) map[string]any {
	s := map[string]any{"type": "object", "additionalProperties": false, "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func str(maxLen int) map[string]any { return map[string]any{"type": "string", "maxLength": maxLen} }

var (
	uuidStr     = map[string]any{"type": "string", "format": "uuid"}
	memberBody  = obj([]string{"user_id", "role"}, map[string]any{"user_id": str(200), "role": map[string]any{"enum": []string{"owner", "admin", "member"}}})
	connectionB = obj(nil, map[string]any{"name": str(100), "system_type": map[string]any{"enum": []string{"ECC", "S4HANA"}},
		"connector_url": str(2048), "environment": map[string]any{"enum": []string{"development", "test", "production"}},
		"simulated":       map[string]any{"type": "boolean"},
		"credential_mode": map[string]any{"enum": []string{"user_login_required", "technical_user_reads", "technical_user_all"}},
		"sync_full_cron":  map[string]any{"type": "string", "description": "cron (5 fields) of the weekly full sync; default 0 2 * * 0"},
		"sync_delta_cron": map[string]any{"type": "string", "description": "cron (5 fields) of the daily delta sync; default 0 3 * * *"},
		"sync_timezone":   map[string]any{"type": "string", "description": "IANA time zone of both crons; default UTC"}})
)

var (
	policyEnum       = enum("ask_every_time", "run_reads_only", "run_everything")
	toolPolicySchema = props(map[string]any{"policy": policyEnum, "effective_policy": policyEnum, "max_tool_policy": policyEnum, "four_eyes": boolean})
	auditEntrySchema = props(map[string]any{"id": uuidStr, "workspace_id": uuidStr, "actor": strType,
		"action":     enum("workspace.update", "workspace.settings", "member.add", "member.role", "member.remove", "member.tool_policy"),
		"subject":    map[string]any{"type": "string", "description": "the member a member change concerns; empty for workspace changes"},
		"before":     map[string]any{"type": "object", "description": "the changed values before the change ({} for an addition)"},
		"after":      map[string]any{"type": "object", "description": "the changed values after it ({} for a removal)"},
		"created_at": map[string]any{"type": "string", "format": "date-time"}})
)

var routeDocs = []routeDoc{
	{Method: "GET", Path: "/api/health", Summary: "Dependency health (200 ok, 503 degraded)", Status: 200, Public: true, Response: healthSchema, Unavailable: healthSchema},
	{Method: "GET", Path: "/api/openapi.json", Summary: "This document", Status: 200, Public: true, Response: anyObject},
	{Method: "POST", Path: "/api/dev/token", Summary: "Development sign-in: a 12-hour bearer token for a user name (only when ENVIRONMENT is not production and AUTH_JWT_SECRET is set; otherwise 404)", Status: 200, Public: true,
		Body:     obj([]string{"user"}, map[string]any{"user": map[string]any{"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$"}}),
		Response: props(map[string]any{"token": strType, "user": strType, "expires_at": map[string]any{"type": "string", "format": "date-time"}}), Errors: []int{404}},

	{Method: "GET", Path: "/api/auth/config", Summary: "How the web page signs in: mode oidc (authorization code with PKCE against issuer, as public client client_id; wins when configured, dev_sign_in says whether POST /api/dev/token exists too), dev (POST /api/dev/token only) or none (not configured)", Status: 200, Public: true,
		Response: map[string]any{"type": "object", "required": []string{"mode"}, "additionalProperties": false, "properties": map[string]any{
			"mode": map[string]any{"enum": []string{"dev", "oidc", "none"}}, "issuer": strType, "client_id": strType, "scopes": strType,
			"audience":    map[string]any{"type": "string", "description": "only when OIDC_AUDIENCE is set: the authorize request's audience parameter"},
			"dev_sign_in": map[string]any{"type": "boolean", "description": "mode oidc only: the development sign-in (POST /api/dev/token) exists too"}}}},
	{Method: "GET", Path: "/api/models", Summary: "Models an agent may use (PATCH /api/agents/{id} model), the default (PRIMARY_MODEL) first", Status: 200,
		Response: props(map[string]any{"data": arrayOf(props(map[string]any{"id": map[string]any{"type": "string", "description": "provider:model"},
			"provider": strType, "model": strType, "default": boolean, "context_tokens": integer}))})},

	{Method: "GET", Path: "/api/orgs", Summary: "List the caller's organizations", Status: 200, Response: listOf(orgSchema, nil)},
	{Method: "POST", Path: "/api/orgs", Summary: "Create an organization (caller becomes owner)", Status: 201, Body: obj([]string{"name"}, map[string]any{"name": str(200)}), Response: orgSchema},
	{Method: "GET", Path: "/api/orgs/{id}", Summary: "Get an organization", Status: 200, Response: orgSchema},
	{Method: "PATCH", Path: "/api/orgs/{id}", Summary: "Rename an organization (admin)", Status: 200, Body: obj([]string{"name"}, map[string]any{"name": str(200)}), Response: orgSchema},
	{Method: "DELETE", Path: "/api/orgs/{id}", Summary: "Delete an organization and everything in it (owner): hidden at once, removed by a deletion workflow", Status: 202, Response: deletionStartedSchema},
	{Method: "GET", Path: "/api/orgs/{id}/members", Summary: "List members", Status: 200, Response: listOf(memberSchema, nil)},
	{Method: "POST", Path: "/api/orgs/{id}/members", Summary: "Add a member (admin; owners grant owner)", Status: 201, Body: memberBody, Response: memberSchema},
	{Method: "PATCH", Path: "/api/orgs/{id}/members/{userId}", Summary: "Change a member's role", Status: 200, Body: memberBody, Response: memberSchema},
	{Method: "DELETE", Path: "/api/orgs/{id}/members/{userId}", Summary: "Remove a member (or leave)", Status: 204},

	{Method: "GET", Path: "/api/workspaces", Summary: "List visible workspaces (?org_id=)", Status: 200, Response: listOf(workspaceSchema, nil)},
	{Method: "POST", Path: "/api/workspaces", Summary: "Create a workspace (org admin)", Status: 201, Body: obj([]string{"org_id", "name"}, map[string]any{"org_id": uuidStr, "name": str(200)}), Response: workspaceSchema},
	{Method: "GET", Path: "/api/workspaces/{id}", Summary: "Get a workspace", Status: 200, Response: workspaceSchema},
	{Method: "PATCH", Path: "/api/workspaces/{id}", Summary: "Rename a workspace, set who may decide tool calls and the members' maximum tool policy (admin; recorded in the audit log)", Status: 200,
		Body: obj(nil, map[string]any{"name": str(200), "admins_may_approve": boolean, "four_eyes": boolean, "max_tool_policy": policyEnum}), Response: workspaceSchema},
	{Method: "DELETE", Path: "/api/workspaces/{id}", Summary: "Delete a workspace and everything in it (admin): hidden at once, removed by a deletion workflow", Status: 202, Response: deletionStartedSchema},
	{Method: "GET", Path: "/api/deletions/{kind}/{id}", Summary: "Progress of a deletion (kind workspace or org; the requester or an org owner)", Status: 200, Response: deletionStatusSchema},
	{Method: "GET", Path: "/api/workspaces/{id}/members", Summary: "List workspace members", Status: 200, Response: listOf(memberSchema, nil)},
	{Method: "POST", Path: "/api/workspaces/{id}/members", Summary: "Add an org member to the workspace (admin)", Status: 201, Body: memberBody, Response: memberSchema},
	{Method: "DELETE", Path: "/api/workspaces/{id}/members/{userId}", Summary: "Remove a workspace member (or leave)", Status: 204},
	{Method: "GET", Path: "/api/workspaces/{id}/settings", Summary: "Workspace settings object", Status: 200, Response: anyObject},
	{Method: "PUT", Path: "/api/workspaces/{id}/settings", Summary: "Replace workspace settings (admin, ≤ 64 KB)", Status: 200, Body: map[string]any{"type": "object"}, Response: anyObject},

	{Method: "GET", Path: "/api/workspaces/{id}/tool-policy", Summary: "The caller's tool policy in this workspace: chosen, effective (bounded by max_tool_policy) and four eyes", Status: 200,
		Response: toolPolicySchema},
	{Method: "PUT", Path: "/api/workspaces/{id}/tool-policy", Summary: "Set the caller's tool policy (recorded in the audit log)", Status: 200,
		Body: obj([]string{"policy"}, map[string]any{"policy": policyEnum}), Response: toolPolicySchema},
	{Method: "GET", Path: "/api/workspaces/{id}/audit-log", Summary: "Every change of the workspace's settings and members: who, what, before, after, when; newest first (admin)", Status: 200,
		Query: pageQuery, Response: listOf(auditEntrySchema, nil)},
	{Method: "GET", Path: "/api/workspaces/{id}/actions", Summary: "Action log of the workspace (?tool=&user_id=&success=&agent_id=)", Status: 200, Response: listOf(actionSchema, nil)},
	{Method: "GET", Path: "/api/workspaces/{id}/ws", Summary: "WebSocket of the workspace's events (sync progress; resume with ?after=<epoch>:<seq>)", Status: 101},
	{Method: "GET", Path: "/api/workspaces/{id}/source", Summary: "ABAP source of an object: from the index when it holds the custom object (from: index), else or with live=true from the connector as the caller's SAP user (from: live)", Status: 200,
		Query:    []queryParam{{"connection_id", uuidStr, false}, {"type", str(4), false}, {"object_type", str(4), false}, {"name", str(120), true}, {"live", boolean, false}},
		Response: sourceSchema, Errors: []int{422, 502, 504}},
	{Method: "GET", Path: "/api/workspaces/{id}/index", Summary: "Every connection's SAP index: status (none, syncing, ready, failed), generation, counts, the running sync's progress and the last run", Status: 200,
		Response: listOf(indexConnectionSchema, nil)},
	{Method: "POST", Path: "/api/workspaces/{id}/index", Summary: "Start a manual sync of one connection (admin); 409 sync_running with the running run while one runs", Status: 202,
		Body:     obj([]string{"connection_id"}, map[string]any{"connection_id": uuidStr, "mode": enum("full", "delta", "enrich-only")}),
		Response: props(map[string]any{"run_id": strType, "workflow_id": strType, "connection_id": uuidStr, "mode": strType, "status": strType}), Errors: []int{404, 409}},
	{Method: "GET", Path: "/api/workspaces/{id}/sync-runs", Summary: "Sync runs, newest first (?connection_id=)", Status: 200,
		Query: append([]queryParam{{"connection_id", uuidStr, false}}, pageQuery...), Response: listOf(syncRunFullSchema, nil), Errors: []int{404}},
	{Method: "GET", Path: "/api/workspaces/{id}/sync-runs/{runId}", Summary: "One sync run; a running one with the workflow's live progress", Status: 200,
		Response: obj([]string{"run"}, map[string]any{"run": syncRunFullSchema, "progress": map[string]any{"type": "object"}}), Errors: []int{404}},
	{Method: "POST", Path: "/api/workspaces/{id}/sync-runs/{runId}/cancel", Summary: "Cancel a running sync (admin): its build is removed, the index in use stays; 409 when it has finished", Status: 202, Errors: []int{404, 409},
		Response: props(map[string]any{"run_id": uuidStr, "status": enum("cancelling")})},
	{Method: "GET", Path: "/api/workspaces/{id}/sync-schedules", Summary: "The connections' sync schedules (Temporal Schedules: weekly full, daily delta) with pause state and next run times (?connection_id=)", Status: 200,
		Query: []queryParam{{"connection_id", uuidStr, false}}, Response: listOf(scheduleSchema, nil), Errors: []int{404}},
	{Method: "POST", Path: "/api/workspaces/{id}/sync-schedules/{connId}/{mode}/{action}", Summary: "Pause, unpause or trigger a connection's full or delta schedule (admin)", Status: 200, OptionalBody: true,
		Body: obj(nil, map[string]any{"note": str(500)}), Response: scheduleSchema, Errors: []int{404}},
	{Method: "GET", Path: "/api/workspaces/{id}/dashboard", Summary: "Analytics of each connection's index: objects by type and package, custom code size, Clean Core distribution, relationships, last syncs (no index: status none)", Status: 200,
		Query: []queryParam{{"top", map[string]any{"type": "integer", "minimum": 1, "maximum": 100}, false}}, Response: dashboardSchema},
	{Method: "GET", Path: "/api/workspaces/{id}/dashboard/diff", Summary: "Two indexed connections compared: counts and one page of objects only in one or changed; a page walks at most 50,000 objects, so it may be short or empty with has_more (409 no_index)", Status: 200,
		Query:    append([]queryParam{{"left", uuidStr, true}, {"right", uuidStr, true}, {"kind", enum("only_left", "only_right", "changed"), false}}, objectQuery...),
		Response: diffSchema, Errors: []int{409}},
	{Method: "GET", Path: "/api/workspaces/{id}/dashboard/objects", Summary: "Object inventory of an indexed connection, (type, name) order (409 no_index)", Status: 200,
		Query: append([]queryParam{{"connection_id", uuidStr, true}}, objectQuery...), Response: listOf(objectSchema, map[string]any{"generation": integer}), Errors: []int{409}},
	{Method: "GET", Path: "/api/workspaces/{id}/clean-core", Summary: "Clean Core summary by level and a page of the objects with findings, each with its worst reasons and successors (409 no_index)", Status: 200,
		Query:    append([]queryParam{{"connection_id", uuidStr, true}, {"level", enum("A", "B", "C", "D"), false}, {"package", str(40), false}}, pageQuery...),
		Response: listOf(findingSchema, map[string]any{"summary": cleanCoreSummarySchema, "generation": integer, "connection_id": uuidStr, "system_type": strType}), Errors: []int{409}},
	{Method: "GET", Path: "/api/workspaces/{id}/clean-core/objects/{type}/{name}", Summary: "One object's Clean Core level with every reason and its conversion items (name may contain /)", Status: 200,
		Query: []queryParam{{"connection_id", uuidStr, true}}, Response: cleanCoreObjectSchema, Errors: []int{409}},
	{Method: "GET", Path: "/api/workspaces/{id}/docs", Summary: "Generated docs of an indexed connection, (kind, subject) order", Status: 200,
		Query:    append([]queryParam{{"connection_id", uuidStr, true}, {"kind", enum("package", "object", "er_diagram", "business_process"), false}}, pageQuery...),
		Response: listOf(docSchema, map[string]any{"generation": integer}), Errors: []int{409}},
	{Method: "GET", Path: "/api/workspaces/{id}/docs/{kind}/{subject}", Summary: "One generated doc: JSON, or its Markdown with Accept: text/markdown or ?format=markdown (subject may contain /)", Status: 200,
		Query: []queryParam{{"connection_id", uuidStr, true}, {"format", enum("json", "markdown"), false}}, Response: docSchema, AlsoMarkdown: true, Errors: []int{409}},
	{Method: "GET", Path: "/api/workspaces/{id}/connector-health", Summary: "Whether each connection's connector answers (?connection_id=)", Status: 200, Response: connectorHealthSchema},
	{Method: "POST", Path: "/api/workspaces/{id}/test-connection", Summary: "Connection and permission checks of a saved connection, as the caller", Status: 200,
		Body: obj(nil, map[string]any{"connection_id": uuidStr}), Response: checksSchema},
	{Method: "POST", Path: "/api/workspaces/{id}/test-connection-preview", Summary: "The same checks on unsaved settings (admin; nothing is stored)", Status: 200,
		Body: obj([]string{"system_type"}, map[string]any{"system_type": map[string]any{"enum": []string{"ECC", "S4HANA"}}, "connector_url": str(2048),
			"connector_key": str(4096), "sap_user": str(40), "sap_password": str(200), "environment": map[string]any{"enum": []string{"development", "test", "production"}},
			"simulated": map[string]any{"type": "boolean"}}), Response: checksSchema},
	{Method: "GET", Path: "/api/workspaces/{id}/connections", Summary: "List SAP connections", Status: 200, Response: listOf(connectionSchema, nil)},
	{Method: "POST", Path: "/api/workspaces/{id}/connections", Summary: "Add an SAP connection (admin)", Status: 201, Body: connectionB, Response: connectionSchema},
	{Method: "GET", Path: "/api/workspaces/{id}/connections/{connId}", Summary: "Get a connection", Status: 200, Response: connectionSchema},
	{Method: "PATCH", Path: "/api/workspaces/{id}/connections/{connId}", Summary: "Update a connection (admin)", Status: 200, Body: connectionB, Response: connectionSchema},
	{Method: "DELETE", Path: "/api/workspaces/{id}/connections/{connId}", Summary: "Delete a connection (admin)", Status: 204},
	{Method: "GET", Path: "/api/workspaces/{id}/connections/{connId}/secrets", Summary: "List secret names (admin; values are write-only)", Status: 200, Response: listOf(schemaOf(store.SecretName{}), nil)},
	{Method: "PUT", Path: "/api/workspaces/{id}/connections/{connId}/secrets/{name}", Summary: "Set a secret (admin; encrypted at rest)", Status: 200, Body: obj([]string{"value"}, map[string]any{"value": str(8192)}), Response: secretSetSchema},
	{Method: "DELETE", Path: "/api/workspaces/{id}/connections/{connId}/secrets/{name}", Summary: "Delete a secret (admin)", Status: 204},

	{Method: "GET", Path: "/api/user/sap-credentials", Summary: "List the caller's SAP logins (no passwords)", Status: 200, Response: listOf(credentialSchema, nil)},
	{Method: "PUT", Path: "/api/user/sap-credentials/{connId}", Summary: "Set the caller's SAP login for a connection", Status: 200, Body: obj([]string{"sap_user", "password"}, map[string]any{"sap_user": str(40), "password": str(512)}), Response: credentialSchema},
	{Method: "DELETE", Path: "/api/user/sap-credentials/{connId}", Summary: "Delete the caller's SAP login", Status: 204},

	{Method: "POST", Path: "/api/files", Summary: "Upload a file (multipart: workspace_id, file; PDF, images, text, CSV)", Status: 201,
		Body: map[string]any{"type": "object", "properties": map[string]any{"workspace_id": uuidStr, "file": map[string]any{"type": "string", "format": "binary"}}}, Response: fileSchema},
	{Method: "GET", Path: "/api/files/{id}", Summary: "File metadata (size, sha256)", Status: 200, Response: fileSchema},
	{Method: "GET", Path: "/api/files/{id}/content", Summary: "Download a file", Status: 200},
	{Method: "DELETE", Path: "/api/files/{id}", Summary: "Delete a file (its uploader or a workspace admin)", Status: 204},

	{Method: "GET", Path: "/api/agents", Summary: "List a workspace's agents (?workspace_id=, ?archived=)", Status: 200, Response: listOf(agentSchema, nil)},
	{Method: "POST", Path: "/api/agents", Summary: "Create an agent and start its conversation", Status: 201, Body: obj([]string{"workspace_id"}, map[string]any{"workspace_id": uuidStr, "name": str(200)}), Response: agentSchema},
	{Method: "GET", Path: "/api/agents/{id}", Summary: "Get an agent", Status: 200, Response: agentSchema},
	{Method: "PATCH", Path: "/api/agents/{id}", Summary: "Rename, archive/restore an agent or choose its model (provider:model)", Status: 200, Body: obj(nil, map[string]any{"name": str(200), "archived": map[string]any{"type": "boolean"}, "model": str(200)}), Response: agentSchema},
	{Method: "POST", Path: "/api/agents/{id}/archive", Summary: "Archive an agent", Status: 200, Response: agentSchema},
	{Method: "POST", Path: "/api/agents/{id}/message", Summary: "Send a message (update-with-start)", Status: 202, Body: obj([]string{"content"}, map[string]any{"content": str(102400), "client_message_id": uuidStr,
		"attachments": map[string]any{"type": "array", "maxItems": 10, "uniqueItems": true, "items": uuidStr,
			"description": "IDs of files of the agent's workspace (POST /api/files); anything else is 400 invalid_attachment"}}), Response: messageAcceptedSchema},
	{Method: "GET", Path: "/api/agents/{id}/approvals", Summary: "Tool calls waiting for a decision", Status: 200, Response: listOf(pendingApprovalSchema, nil)},
	{Method: "POST", Path: "/api/agents/{id}/approve", Summary: "Approve or reject pending tool calls (403 not allowed to decide, 404 unknown, 409 already decided)", Status: 200,
		Body: obj([]string{"decisions"}, map[string]any{"decisions": map[string]any{"type": "array", "items": obj([]string{"tool_call_id", "approved"},
			map[string]any{"tool_call_id": str(200), "approved": map[string]any{"type": "boolean"}, "reason": str(1000)})}}), Response: schemaOf(workflows.ApproveResult{})},
	{Method: "POST", Path: "/api/agents/{id}/stop", Summary: "Stop the running turn (partial text is kept)", Status: 200, Response: schemaOf(workflows.StopResult{})},
	{Method: "GET", Path: "/api/agents/{id}/actions", Summary: "Action log of the agent", Status: 200, Response: listOf(actionSchema, nil)},
	{Method: "GET", Path: "/api/agents/{id}/tool-outputs/{toolCallId}", Summary: "A tool call's full stored output (parts with stored: true hold a preview)", Status: 200,
		Response: obj([]string{"tool_call_id", "content", "size"}, map[string]any{"tool_call_id": str(200), "content": map[string]any{"type": "string"}, "size": map[string]any{"type": "integer"}})},
	{Method: "GET", Path: "/api/agents/{id}/messages", Summary: "Transcript in seq order (?cursor=&limit=; ?before=<seq> pages back from the newest)", Status: 200,
		Query: []queryParam{{Name: "cursor", Schema: str(20)}, {Name: "before", Schema: map[string]any{"type": "integer", "minimum": 1}}, {Name: "limit", Schema: map[string]any{"type": "integer", "minimum": 1, "maximum": 500}}}, Response: listOf(messageSchema, nil)},
	{Method: "GET", Path: "/api/agents/{id}/events", Summary: "Server-Sent Events twin of /ws (resume with Last-Event-ID or ?after=<epoch>:<seq>)", Status: 200},
	{Method: "GET", Path: "/api/agents/{id}/ws", Summary: "WebSocket of the agent's events (docs/events.md); token via subprotocol 'bearer, <jwt>' or ?access_token=", Status: 101},

	{Method: "POST", Path: "/api/codec/decode", Summary: "Decrypt Temporal payloads for the Temporal UI (operators only; bearer or the sapagent_codec cookie; header X-Namespace)", Status: 200, Body: payloadsBody, Response: payloadsBody},
	{Method: "POST", Path: "/api/codec/encode", Summary: "Encrypt Temporal payloads for the Temporal UI (operators only)", Status: 200, Body: payloadsBody, Response: payloadsBody},
	{Method: "OPTIONS", Path: "/api/codec/decode", Summary: "CORS preflight for CODEC_ALLOWED_ORIGINS", Status: 204, Public: true},
	{Method: "OPTIONS", Path: "/api/codec/encode", Summary: "CORS preflight for CODEC_ALLOWED_ORIGINS", Status: 204, Public: true},
}

// payloadsBody is Temporal's Payloads in proto JSON: metadata values and data are base64.
var payloadsBody = obj([]string{"payloads"}, map[string]any{"payloads": map[string]any{"type": "array", "items": map[string]any{
	"type": "object", "properties": map[string]any{
		"metadata": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string", "contentEncoding": "base64"}},
		"data":     map[string]any{"type": "string", "contentEncoding": "base64"},
	}}}})

var ginParam = regexp.MustCompile(`[:*]([A-Za-z]+)`)

// OpenAPIPath converts a gin route path to OpenAPI form (:id and the wildcard *name → {id}, {name}).
func OpenAPIPath(p string) string { return ginParam.ReplaceAllString(p, "{$1}") }

// OpenAPIJSON is the document as schemas/openapi.json holds it (make generate writes it; the
// page's REST types are generated from that file).
func OpenAPIJSON() ([]byte, error) {
	raw, err := json.MarshalIndent(OpenAPIDocument(), "", "  ")
	return append(raw, '\n'), err
}

// OpenAPIDocument builds the OpenAPI 3.1 description of every route.
func OpenAPIDocument() map[string]any {
	errResp := map[string]any{"description": "error", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/Error"}}}}
	paths := map[string]any{}
	for _, r := range routeDocs {
		item, _ := paths[r.Path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[r.Path] = item
		}
		op := map[string]any{"summary": r.Summary, "operationId": operationID(r.Method, r.Path), "tags": []string{tagOf(r.Path)},
			"responses": map[string]any{
				strconv.Itoa(r.Status): map[string]any{"description": http.StatusText(r.Status)},
				"400":                  errResp, "404": errResp, "503": errResp,
			}}
		var params []any
		for _, m := range regexp.MustCompile(`\{([A-Za-z]+)\}`).FindAllStringSubmatch(r.Path, -1) {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
		}
		for _, q := range r.Query {
			params = append(params, map[string]any{"name": q.Name, "in": "query", "required": q.Required, "schema": q.Schema})
		}
		if params != nil {
			op["parameters"] = params
		}
		if r.Response != nil {
			content := map[string]any{"application/json": map[string]any{"schema": r.Response}}
			if r.AlsoMarkdown {
				content["text/markdown"] = map[string]any{"schema": map[string]any{"type": "string"}}
			}
			op["responses"].(map[string]any)[strconv.Itoa(r.Status)] = map[string]any{"description": http.StatusText(r.Status), "content": content}
		}
		if r.Unavailable != nil {
			op["responses"].(map[string]any)["503"] = map[string]any{"description": http.StatusText(http.StatusServiceUnavailable),
				"content": map[string]any{"application/json": map[string]any{"schema": r.Unavailable}}}
		}
		for _, code := range r.Errors {
			op["responses"].(map[string]any)[strconv.Itoa(code)] = errResp
		}
		if r.Public {
			op["security"] = []any{} // the document's default is the bearer token
		} else {
			resp := op["responses"].(map[string]any)
			resp["401"], resp["403"] = errResp, errResp
			// Mutations, SAP reads and index reads are rate-limited; streams are capped per user.
			route := regexp.MustCompile(`\{([A-Za-z]+)\}`).ReplaceAllString(r.Path, ":$1")
			if r.Method != "GET" || sapReadRoutes[route] || index.ReadRoutes[route] || streamRoutes[route] {
				resp["429"] = errResp
			}
		}
		if r.Body != nil {
			ct := "application/json"
			if strings.HasPrefix(r.Summary, "Upload") {
				ct = "multipart/form-data"
			}
			op["requestBody"] = map[string]any{"required": !r.OptionalBody, "content": map[string]any{ct: map[string]any{"schema": r.Body}}}
		}
		item[strings.ToLower(r.Method)] = op
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{"title": "sapagent API", "version": "1",
			"description": "The REST half of sapagent; the event streams' frames are in schemas/events.schema.json (docs/events.md)."},
		"servers":  []any{map[string]any{"url": "/", "description": "the API is served by the same origin as the page"}},
		"security": []any{map[string]any{"bearer": []any{}}},
		"tags":     apiTags,
		"paths":    paths,
		"components": map[string]any{
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}},
			"schemas":         map[string]any{"Error": obj([]string{"error", "code"}, map[string]any{"error": map[string]any{"type": "string"}, "code": map[string]any{"type": "string"}})},
		},
	}
}

// apiTags are the API's domains, one per package under api/ that serves routes.
var apiTags = []any{
	map[string]any{"name": "ops", "description": "Health, sign-in configuration, models, this document and the Temporal codec"},
	map[string]any{"name": "tenancy", "description": "Organizations, workspaces, members, settings, tool policies, deletions"},
	map[string]any{"name": "connections", "description": "SAP connections, their secrets and checks, the users' SAP logins"},
	map[string]any{"name": "landscape", "description": "The SAP index: syncs, schedules, dashboard, Clean Core, docs, sources"},
	map[string]any{"name": "files", "description": "Uploaded files"},
	map[string]any{"name": "chat", "description": "Agents, their messages, approvals, actions and event streams"},
}

// tagOf names the domain that serves a path (see apiTags).
func tagOf(path string) string {
	segs := strings.Split(strings.TrimPrefix(path, "/api/"), "/")
	switch segs[0] {
	case "orgs", "deletions":
		return "tenancy"
	case "agents":
		return "chat"
	case "files":
		return "files"
	case "user":
		return "connections"
	case "workspaces":
		if len(segs) < 3 {
			return "tenancy"
		}
		switch sub := segs[2]; {
		case sub == "connections" || strings.HasPrefix(sub, "test-connection") || sub == "connector-health":
			return "connections"
		case sub == "actions" || sub == "ws":
			return "chat"
		case sub == "index" || strings.HasPrefix(sub, "sync-") || sub == "dashboard" || sub == "clean-core" || sub == "docs" || sub == "source":
			return "landscape"
		}
		return "tenancy"
	}
	return "ops"
}

// operationID names an operation after its method and path: GET /api/workspaces/{id}/sync-runs
// is getWorkspacesByIdSyncRuns (the page's generated types name operations so).
func operationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, seg := range strings.Split(strings.TrimPrefix(path, "/api/"), "/") {
		if strings.HasPrefix(seg, "{") {
			b.WriteString("By")
			seg = strings.Trim(seg, "{}")
		}
		for _, word := range strings.FieldsFunc(seg, func(r rune) bool { return r == '-' || r == '.' }) {
			b.WriteString(strings.ToUpper(word[:1]) + word[1:])
		}
	}
	return b.String()
}

func (s *Server) openAPI(c *gin.Context) { c.JSON(http.StatusOK, OpenAPIDocument()) }
