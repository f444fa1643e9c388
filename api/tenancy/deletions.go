package tenancy

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/workflows"
)

// deletionStarted is DELETE's answer: the deletion runs as a workflow the caller can watch.
// deletions answers the deletion routes of workspaces and organizations: each deletion runs as
// a workflow, and its status is a query of it.
type deletions struct{ *Handler }

type deletionStarted struct {
	DeletionID string `json:"deletion_id"`
	StatusURL  string `json:"status_url"`
}

// deleteWorkspace hides the workspace at once and starts its deletion (202). A repeated
// DELETE, also while the deletion runs, answers the same deletion.
func (s deletions) deleteWorkspace(c *gin.Context) {
	id, ok := httpx.UUIDParam(c, "id", "workspace")
	if !ok {
		return
	}
	ctx := c.Request.Context()
	orgID, role, err := s.Deletions.WorkspaceRole(ctx, id, httpx.User(c))
	switch {
	case err != nil:
		s.Access.StoreFailed(c, err, "workspace")
		return
	case role == "":
		httpx.Fail(c, http.StatusForbidden, "forbidden", "you are not a member of this workspace")
		return
	case role != store.RoleAdmin:
		httpx.Fail(c, http.StatusForbidden, "forbidden", "this needs the workspace admin role")
		return
	}
	if err := s.Deletions.MarkWorkspaceDeleting(ctx, id); err != nil {
		s.Access.StoreFailed(c, err, "workspace")
		return
	}
	s.startDeletion(c, workflows.DeletionWorkspace, workflows.DeleteWorkspaceWorkflowName,
		workflows.DeletionInput{ID: id.String(), OrgID: orgID.String(), RequestedBy: httpx.User(c)})
}

// deleteOrg: owners only; hides the org and its workspaces, then deletes them in a workflow.
func (s deletions) deleteOrg(c *gin.Context) {
	id, ok := httpx.UUIDParam(c, "id", "organization")
	if !ok {
		return
	}
	ctx := c.Request.Context()
	role, err := s.Deletions.OrgRole(ctx, id, httpx.User(c))
	switch {
	case err != nil:
		s.Access.StoreFailed(c, err, "organization")
		return
	case role == "":
		httpx.Fail(c, http.StatusForbidden, "forbidden", "you are not a member of this organization")
		return
	case role != store.RoleOwner:
		httpx.Fail(c, http.StatusForbidden, "forbidden", "this needs the organization owner role")
		return
	}
	if err := s.Deletions.MarkOrgDeleting(ctx, id); err != nil {
		s.Access.StoreFailed(c, err, "organization")
		return
	}
	s.startDeletion(c, workflows.DeletionOrg, workflows.DeleteOrgWorkflowName,
		workflows.DeletionInput{ID: id.String(), OrgID: id.String(), RequestedBy: httpx.User(c)})
}

func (s deletions) startDeletion(c *gin.Context, kind, workflowName string, in workflows.DeletionInput) {
	ctx := c.Request.Context()
	wfID := workflows.DeletionWorkflowID(kind, in.ID)
	tctx, cancel := httpx.TemporalContext(ctx, s.TemporalTimeout)
	_, err := s.Temporal.ExecuteWorkflow(tctx, client.StartWorkflowOptions{
		ID: wfID, TaskQueue: s.TaskQueue, StaticSummary: "Delete " + kind + " " + in.ID,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, workflowName, in)
	cancel()
	if err != nil {
		// The target stays hidden; repeating the DELETE starts the deletion.
		httpx.LogTemporalFailure(ctx, s.Log, s.TemporalTimeout, "start deletion", err)
		httpx.Unavailable(c, "the workflow service")
		return
	}
	c.JSON(http.StatusAccepted, deletionStarted{DeletionID: wfID, StatusURL: "/api/deletions/" + kind + "/" + in.ID})
}

// deletionStatus is GET /api/deletions/:kind/:id: the deletion's progress, for the user who
// asked for it and the organization's owners (while the organization exists).
type deletionStatus struct {
	DeletionID string `json:"deletion_id"`
	workflows.DeletionStatus
}

func (s deletions) getDeletion(c *gin.Context) {
	kind := c.Param("kind")
	if kind != workflows.DeletionWorkspace && kind != workflows.DeletionOrg {
		httpx.BadRequest(c, "invalid_kind", "kind must be workspace or org")
		return
	}
	id, ok := httpx.UUIDParam(c, "id", kind)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	wfID := workflows.DeletionWorkflowID(kind, id.String())
	tctx, cancel := httpx.TemporalContext(ctx, s.TemporalTimeout)
	defer cancel()
	st, err := workflows.DeletionProgress.Ask(tctx, s.Temporal, wfID, "")
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &nf):
		httpx.NotFound(c, "deletion")
		return
	case err != nil:
		httpx.LogTemporalFailure(ctx, s.Log, s.TemporalTimeout, "query deletion", err)
		httpx.Unavailable(c, "the workflow service")
		return
	}
	if st.RequestedBy != httpx.User(c) && !s.isOrgOwner(c, st.OrgID) {
		httpx.NotFound(c, "deletion") // others do not learn that it exists
		return
	}
	c.JSON(http.StatusOK, deletionStatus{DeletionID: wfID, DeletionStatus: st})
}

func (s deletions) isOrgOwner(c *gin.Context, orgID string) bool {
	id, err := uuid.Parse(orgID)
	if err != nil {
		return false
	}
	role, err := s.Deletions.OrgRole(c.Request.Context(), id, httpx.User(c))
	return err == nil && role == store.RoleOwner
}
