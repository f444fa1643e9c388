package chat

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/workflows"
)

const maxNameLength = 200

type createAgentRequest struct {
	Name        string `json:"name"`
	WorkspaceID string `json:"workspace_id"`
}

// createAgent stores the agent and starts its conversation workflow; if the workflow cannot
// be started the row is rolled back, so no agent exists without its conversation.
func (s *Conversations) createAgent(c *gin.Context) {
	var req createAgentRequest
	if !httpx.DecodeJSON(c, 16<<10, &req) {
		return
	}
	req.Name = strings.TrimSpace(req.Name)
	if utf8.RuneCountInString(req.Name) > maxNameLength || strings.ContainsRune(req.Name, 0) {
		httpx.BadRequest(c, "invalid_name", fmt.Sprintf("name must be at most %d characters without NUL", maxNameLength))
		return
	}
	if req.WorkspaceID == "" {
		httpx.BadRequest(c, "missing_field", "workspace_id is required")
		return
	}
	workspaceID, err := uuid.Parse(req.WorkspaceID)
	if err != nil {
		httpx.BadRequest(c, "invalid_id", "workspace_id is not a UUID")
		return
	}
	if _, ok := s.Access.WorkspaceByID(c, workspaceID, false); !ok {
		return
	}
	ctx := c.Request.Context()
	tx, err := s.Store.Pool.Begin(ctx)
	if err != nil {
		httpx.Unavailable(c, "the database")
		return
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // no-op after commit
	agent, err := store.CreateAgent(ctx, tx, store.Agent{ID: uuid.New(), WorkspaceID: workspaceID, Name: req.Name, CreatedBy: httpx.User(c)})
	if err != nil {
		s.Log.Error("create agent", "error", err)
		httpx.Unavailable(c, "the database")
		return
	}
	tctx, cancel := httpx.TemporalContext(ctx, s.TemporalTimeout)
	_, err = s.Temporal.ExecuteWorkflow(tctx, s.conversationStart(agent), workflows.ConversationWorkflowName, s.conversationInput(agent))
	cancel()
	if err != nil {
		httpx.LogTemporalFailure(ctx, s.Log, s.TemporalTimeout, "start conversation", err)
		httpx.Unavailable(c, "the workflow service")
		return
	}
	if err := tx.Commit(ctx); err != nil {
		httpx.Unavailable(c, "the database")
		return
	}
	c.JSON(http.StatusCreated, agent)
}

// listAgents lists a workspace's agents (?workspace_id=, required), newest first;
// ?archived=true lists the archived ones.
func (s *Conversations) listAgents(c *gin.Context) {
	cur, limit, ok := httpx.ListParams(c)
	if !ok {
		return
	}
	wsID, err := uuid.Parse(c.Query("workspace_id"))
	if err != nil {
		httpx.BadRequest(c, "invalid_id", "workspace_id query parameter is missing or not a UUID")
		return
	}
	archived := c.Query("archived") == "true"
	if v := c.Query("archived"); v != "" && v != "true" && v != "false" {
		httpx.BadRequest(c, "invalid_field", "archived must be true or false")
		return
	}
	agents, err := s.Store.ListAgentsFor(c.Request.Context(), wsID, httpx.User(c), archived, cur, limit+1)
	if err != nil {
		s.Access.StoreFailed(c, err, "agents")
		return
	}
	if len(agents) == 0 { // empty, or not visible: tell 403/404 apart
		if _, ok := s.Access.WorkspaceByID(c, wsID, false); !ok {
			return
		}
	}
	httpx.Page(c, agents, limit, func(a store.Agent) store.Cursor { return store.Cursor{CreatedAt: a.CreatedAt, ID: a.ID} })
}

type updateAgentRequest struct {
	Name     *string `json:"name"`
	Archived *bool   `json:"archived"`
	Model    *string `json:"model"` // provider:model, "" for PRIMARY_MODEL
}

// updateAgent renames (name) and/or archives or restores (archived) an agent.
func (s *Conversations) updateAgent(c *gin.Context) {
	id, ok := httpx.UUIDParam(c, "id", "agent")
	if !ok {
		return
	}
	var req updateAgentRequest
	if !httpx.DecodeJSON(c, 16<<10, &req) {
		return
	}
	if req.Name == nil && req.Archived == nil && req.Model == nil {
		httpx.BadRequest(c, "missing_field", "nothing to update: give name, archived and/or model")
		return
	}
	if req.Model != nil && *req.Model != "" && s.ValidateModel != nil {
		if err := s.ValidateModel(*req.Model); err != nil {
			httpx.BadRequest(c, "invalid_model", err.Error())
			return
		}
	}
	if req.Name != nil {
		name, ok := httpx.RequiredName(c, "name", *req.Name, maxNameLength)
		if !ok {
			return
		}
		req.Name = &name
	}
	s.saveAgent(c, id, req)
}

func (s *Conversations) archiveAgent(c *gin.Context) {
	id, ok := httpx.UUIDParam(c, "id", "agent")
	if !ok {
		return
	}
	yes := true
	s.saveAgent(c, id, updateAgentRequest{Archived: &yes})
}

func (s *Conversations) saveAgent(c *gin.Context, id uuid.UUID, req updateAgentRequest) {
	agent, err := s.Store.UpdateAgent(c.Request.Context(), id, httpx.User(c), req.Name, req.Archived, req.Model)
	if err != nil {
		s.Access.StoreFailed(c, err, "agent")
		return
	}
	c.JSON(http.StatusOK, agent)
}

func (s *Conversations) conversationStart(a store.Agent) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                       workflows.ConversationWorkflowID(a.ID.String()),
		TaskQueue:                s.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowTaskTimeout:      workflows.ConversationTaskTimeout,
		StaticSummary:            conversationSummary(a),
		TypedSearchAttributes: temporal.NewSearchAttributes(
			workflows.SearchWorkspaceID.ValueSet(a.WorkspaceID.String()),
			workflows.SearchAgentID.ValueSet(a.ID.String()),
		),
	}
}

func conversationSummary(a store.Agent) string {
	if a.Name != "" {
		return "Conversation: " + a.Name
	}
	return "Conversation " + a.ID.String()
}

func (s *Conversations) conversationInput(a store.Agent) workflows.ConversationInput {
	return workflows.ConversationInput{AgentID: a.ID.String(), WorkspaceID: a.WorkspaceID.String(), IdleTimeout: s.IdleTimeout,
		MaxSteps: s.MaxLoopSteps, MaxQueued: s.MaxQueued, ApprovalTimeout: s.ApprovalTimeout, RunEvents: s.RunEvents}
}

// loadAgent resolves :id or writes the 400/404/503 and returns false.
func (s *Conversations) loadAgent(c *gin.Context) (store.Agent, bool) {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		httpx.BadRequest(c, "invalid_id", "agent id is not a UUID")
		return store.Agent{}, false
	}
	agent, err := s.Store.GetAgentFor(c.Request.Context(), id, httpx.User(c))
	if errors.Is(err, store.ErrNotFound) {
		httpx.NotFound(c, "agent")
		return agent, false
	}
	if err != nil {
		s.Log.Error("load agent", "error", err)
		httpx.Unavailable(c, "the database")
		return agent, false
	}
	return agent, true
}

func (s *Conversations) getAgent(c *gin.Context) {
	if agent, ok := s.loadAgent(c); ok {
		c.JSON(http.StatusOK, agent)
	}
}

type sendMessageRequest struct {
	Content         string `json:"content"`
	ClientMessageID string `json:"client_message_id"`
	// Attachments are IDs of files of the agent's workspace (POST /api/files) the model sees
	// with the message; at most workflows.MaxAttachments.
	Attachments []string `json:"attachments"`
}

// sendMessage delivers a message with update-with-start: a running conversation gets it, a
// completed (idle-expired) or missing one is started first and restores from Postgres.
func (s *Conversations) sendMessage(c *gin.Context) {
	agent, ok := s.loadAgent(c)
	if !ok {
		return
	}
	var req sendMessageRequest
	// JSON escaping can make a body several times larger than its content; the content limit
	// below is the one users see.
	if !httpx.DecodeJSON(c, int64(6*s.MaxMessageBytes+4096), &req) {
		return
	}
	respond(c, s.deliver(c.Request.Context(), agent, httpx.User(c), req))
}

// outcome is an action's answer, shared by the REST handlers and the WebSocket commands.
type outcome struct {
	status int
	body   any
}

func failure(status int, code, message string) outcome {
	return outcome{status, httpx.Error{Error: message, Code: code}}
}

func respond(c *gin.Context, o outcome) {
	if o.status == http.StatusTooManyRequests {
		c.Header("Retry-After", "5")
	}
	if o.status >= 400 {
		httpx.Abort(c, o.status, o.body)
		return
	}
	c.JSON(o.status, o.body)
}

func (s *Conversations) deliver(ctx context.Context, agent store.Agent, user string, req sendMessageRequest) outcome {
	switch {
	case strings.TrimSpace(req.Content) == "":
		return failure(http.StatusBadRequest, "empty_message", "content is empty")
	case len(req.Content) > s.MaxMessageBytes:
		return failure(http.StatusBadRequest, "message_too_large", fmt.Sprintf("content is %d bytes; the limit is %d", len(req.Content), s.MaxMessageBytes))
	case !utf8.ValidString(req.Content) || strings.ContainsRune(req.Content, 0):
		return failure(http.StatusBadRequest, "invalid_message", "content must be valid UTF-8 without NUL characters")
	case agent.ArchivedAt != nil:
		return failure(http.StatusConflict, "agent_archived", "this agent is archived; restore it (PATCH archived=false) to continue")
	}
	msgID := uuid.New()
	if req.ClientMessageID != "" {
		id, err := uuid.Parse(req.ClientMessageID)
		if err != nil {
			return failure(http.StatusBadRequest, "invalid_id", "client_message_id is not a UUID")
		}
		msgID = id
	}
	attachments, o := s.checkAttachments(ctx, agent, user, req.Attachments)
	if o.status != 0 {
		return o
	}
	// Bounded: while Temporal is unreachable the SDK retries until the deadline. A 503 after
	// the deadline may still have delivered the message; the client retries with the same
	// client_message_id (the update ID), which Temporal and the workflow deliver once.
	tctx, cancel := httpx.TemporalContext(ctx, s.TemporalTimeout)
	defer cancel()
	start := s.Temporal.NewWithStartWorkflowOperation(s.conversationStart(agent), workflows.ConversationWorkflowName, s.conversationInput(agent))
	res, err := workflows.SendMessage.UpdateWithStart(tctx, s.Temporal, start, msgID.String(),
		workflows.UserMessage{ID: msgID.String(), Content: req.Content, UserID: user, Attachments: attachments})
	if err != nil {
		return s.updateOutcome(ctx, err, "deliver message")
	}
	return outcome{http.StatusAccepted, gin.H{"message_id": res.MessageID, "agent_id": agent.ID, "queued": res.Queued}}
}

// checkAttachments answers 400 invalid_attachment unless every ID names a distinct file of the
// agent's workspace the sender may see. A file that does not exist, is elsewhere or is hidden
// gets the same answer, so the check reveals nothing about other workspaces.
func (s *Conversations) checkAttachments(ctx context.Context, agent store.Agent, user string, raw []string) ([]string, outcome) {
	if len(raw) == 0 {
		return nil, outcome{}
	}
	if len(raw) > workflows.MaxAttachments {
		return nil, failure(http.StatusBadRequest, "invalid_attachment", fmt.Sprintf("a message may carry at most %d attachments, got %d", workflows.MaxAttachments, len(raw)))
	}
	ids := make([]uuid.UUID, len(raw))
	seen := map[uuid.UUID]bool{}
	for i, v := range raw {
		id, err := uuid.Parse(v)
		if err != nil {
			return nil, failure(http.StatusBadRequest, "invalid_attachment", fmt.Sprintf("attachment %q is not a file ID", v))
		}
		if seen[id] {
			return nil, failure(http.StatusBadRequest, "invalid_attachment", "attachment "+id.String()+" is listed twice")
		}
		seen[id], ids[i] = true, id
	}
	files, err := s.Store.WorkspaceFilesFor(ctx, agent.WorkspaceID, ids, user)
	if err != nil {
		s.Log.Error("load attachments", "error", err)
		return nil, failure(http.StatusServiceUnavailable, "unavailable", "the database is unavailable, try again shortly")
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		if _, ok := files[id]; !ok {
			return nil, failure(http.StatusBadRequest, "invalid_attachment", "attachment "+id.String()+" is not a file of this agent's workspace")
		}
		out[i] = id.String()
	}
	return out, outcome{}
}

// listMessages returns the transcript in seq order, a page at a time.
func (s *Conversations) listMessages(c *gin.Context) {
	agent, ok := s.loadAgent(c)
	if !ok {
		return
	}
	after, limit, ok := httpx.PageParams(c, true)
	if !ok {
		return
	}
	// ?before=<seq> pages backwards (older history than a client's init snapshot holds): the
	// newest limit messages below seq, in seq order; next_cursor is the next before=.
	before := int64(-1)
	if v := c.Query("before"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 || c.Query("cursor") != "" {
			httpx.BadRequest(c, "invalid_cursor", "before must be a message seq (≥ 1) and cannot be combined with cursor")
			return
		}
		before = n
	}
	var msgs []store.Message
	var err error
	if before > 0 {
		msgs, err = s.Store.ListMessagesBefore(c.Request.Context(), agent.ID, before, limit+1)
	} else {
		msgs, err = s.Store.ListMessages(c.Request.Context(), agent.ID, after, limit+1)
	}
	if err != nil {
		s.Log.Error("list messages", "error", err)
		httpx.Unavailable(c, "the database")
		return
	}
	hasMore := len(msgs) > limit
	var next any
	switch {
	case hasMore && before > 0:
		msgs = msgs[1:] // the oldest row only says that more exist
		next = fmt.Sprint(msgs[0].Seq)
	case hasMore:
		msgs = msgs[:limit]
		next = fmt.Sprint(msgs[len(msgs)-1].Seq)
	}
	c.JSON(http.StatusOK, gin.H{"data": msgs, "next_cursor": next, "has_more": hasMore})
}

// updateOutcome maps an update's failure: validator refusals carry a type that says which
// status; anything else (Temporal unreachable or not answering within TemporalTimeout) is 503.
func (s *Conversations) updateOutcome(ctx context.Context, err error, what string) outcome {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		switch appErr.Type() {
		case workflows.ErrTypeQueueFull:
			return failure(http.StatusTooManyRequests, "queue_full", appErr.Message())
		case workflows.ErrTypeUnknownToolCall:
			return failure(http.StatusNotFound, "not_found", appErr.Message())
		case workflows.ErrTypeAlreadyDecided:
			return failure(http.StatusConflict, "already_decided", appErr.Message())
		case workflows.ErrTypeNotAllowed:
			return failure(http.StatusForbidden, "not_allowed", appErr.Message())
		default:
			return failure(http.StatusBadRequest, "invalid_request", appErr.Message())
		}
	}
	var notFoundErr *serviceerror.NotFound
	if errors.As(err, &notFoundErr) {
		return failure(http.StatusConflict, "not_running", "the conversation is not running (nothing to approve or stop)")
	}
	httpx.LogTemporalFailure(ctx, s.Log, s.TemporalTimeout, what, err)
	return failure(http.StatusServiceUnavailable, "unavailable", "the workflow service is unavailable, try again shortly")
}

type approveRequest struct {
	Decisions []workflows.Decision `json:"decisions"`
}

// approveCalls delivers one or many decisions on pending tool calls.
func (s *Conversations) approveCalls(c *gin.Context) {
	agent, ok := s.loadAgent(c)
	if !ok {
		return
	}
	var req approveRequest
	if !httpx.DecodeJSON(c, 64<<10, &req) {
		return
	}
	respond(c, s.decide(c.Request.Context(), agent, httpx.User(c), req))
}

// decide sends user's decisions. Who decides, their role and the workspace's approval rules come
// from the token and the database, never from the body; the workflow's validator applies them
// (workflows.mayDecide), since only it knows whose message led to each call.
func (s *Conversations) decide(ctx context.Context, agent store.Agent, user string, req approveRequest) outcome {
	if len(req.Decisions) == 0 || len(req.Decisions) > 100 {
		return failure(http.StatusBadRequest, "missing_field", "decisions must list 1 to 100 {tool_call_id, approved, reason?}")
	}
	for _, d := range req.Decisions {
		if d.ToolCallID == "" || len(d.ToolCallID) > 200 || len(d.Reason) > 1000 {
			return failure(http.StatusBadRequest, "invalid_field", "each decision needs a tool_call_id (and a reason of at most 1000 bytes)")
		}
		if !httpx.TextOK(d.ToolCallID) || !httpx.TextOK(d.Reason) {
			return failure(http.StatusBadRequest, "invalid_text", "tool_call_id and reason must be valid UTF-8 without NUL characters")
		}
	}
	w, err := s.Store.WorkspaceAccess(ctx, agent.WorkspaceID, user)
	if errors.Is(err, store.ErrNotFound) || (err == nil && w.Role == "") {
		return failure(http.StatusNotFound, "not_found", "agent not found") // removed since the agent was loaded
	}
	if err != nil {
		s.Log.Error("approve: load workspace", "error", err)
		return failure(http.StatusServiceUnavailable, "unavailable", "the database is unavailable, try again shortly")
	}
	up := workflows.ApproveRequest{Decisions: req.Decisions, DecidedBy: user, DeciderIsAdmin: w.Role == store.RoleAdmin,
		AdminsMayApprove: w.AdminsMayApprove, FourEyes: w.FourEyes}
	tctx, cancel := httpx.TemporalContext(ctx, s.TemporalTimeout)
	defer cancel()
	res, err := workflows.Approve.Do(tctx, s.Temporal, workflows.ConversationWorkflowID(agent.ID.String()), up)
	if err != nil {
		return s.updateOutcome(ctx, err, "approve")
	}
	return outcome{http.StatusOK, res}
}

// stopTurn stops the running turn: model and tool calls are cancelled, partial text is kept.
func (s *Conversations) stopTurn(c *gin.Context) {
	agent, ok := s.loadAgent(c)
	if !ok {
		return
	}
	respond(c, s.stop(c.Request.Context(), agent))
}

func (s *Conversations) stop(ctx context.Context, agent store.Agent) outcome {
	tctx, cancel := httpx.TemporalContext(ctx, s.TemporalTimeout)
	defer cancel()
	res, err := workflows.StopTurn.Do(tctx, s.Temporal, workflows.ConversationWorkflowID(agent.ID.String()), workflows.StopRequest{})
	if err != nil {
		var notFoundErr *serviceerror.NotFound
		if errors.As(err, &notFoundErr) { // no running conversation: nothing to stop
			return outcome{http.StatusOK, workflows.StopResult{}}
		}
		return s.updateOutcome(ctx, err, "stop")
	}
	return outcome{http.StatusOK, res}
}

// listApprovals returns the calls waiting for the user's decision (empty when none).
func (s *Conversations) listApprovals(c *gin.Context) {
	agent, ok := s.loadAgent(c)
	if !ok {
		return
	}
	pending := []workflows.PendingApproval{}
	if agent.Status == workflows.StatusWaiting {
		ctx, cancel := httpx.TemporalContext(c.Request.Context(), s.TemporalTimeout)
		st, err := workflows.ConversationState.Ask(ctx, s.Temporal, workflows.ConversationWorkflowID(agent.ID.String()), "")
		cancel()
		if err != nil {
			respond(c, s.updateOutcome(c.Request.Context(), err, "query approvals"))
			return
		}
		pending = st.PendingApprovals
	}
	httpx.All(c, pending)
}
