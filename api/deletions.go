package api

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/workflows"
)

// deletionStarted is DELETE's answer: the deletion runs as a workflow the caller can watch.
type deletionStarted struct {
	DeletionID string `json:"deletion_id"`
	StatusURL  string `json:"status_url"`
}

// deleteWorkspace hides the workspace at once and starts its deletion (202). A repeated
// DELETE, also while the deletion runs, answers the same deletion.
func (s *Server) deleteWorkspace(c *gin.Context) {
	id, ok := uuidParam(c, "id", "workspace")
	if !ok {
		return
	}
	ctx := c.Request.Context()
	orgID, role, err := s.Store.WorkspaceRole(ctx, id, userOf(c))
	switch {
	case err != nil:
		s.storeFailed(c, err, "workspace")
		return
	case role == "":
		fail(c, http.StatusForbidden, "forbidden", "you are not a member of this workspace")
		return
	case role != store.RoleAdmin:
		fail(c, http.StatusForbidden, "forbidden", "this needs the workspace admin role")
		return
	}
	if err := s.Store.MarkWorkspaceDeleting(ctx, id); err != nil {
		s.storeFailed(c, err, "workspace")
		return
	}
	s.startDeletion(c, workflows.DeletionWorkspace, workflows.DeleteWorkspaceWorkflowName,
		workflows.DeletionInput{ID: id.String(), OrgID: orgID.String(), RequestedBy: userOf(c)})
}

// deleteOrg: owners only; hides the org and its workspaces, then deletes them in a workflow.
func (s *Server) deleteOrg(c *gin.Context) {
	id, ok := uuidParam(c, "id", "organization")
	if !ok {
		return
	}
	ctx := c.Request.Context()
	role, err := s.Store.OrgRole(ctx, id, userOf(c))
	switch {
	case err != nil:
		s.storeFailed(c, err, "organization")
		return
	case role == "":
		fail(c, http.StatusForbidden, "forbidden", "you are not a member of this organization")
		return
	case role != store.RoleOwner:
		fail(c, http.StatusForbidden, "forbidden", "this needs the organization owner role")
		return
	}
	if err := s.Store.MarkOrgDeleting(ctx, id); err != nil {
		s.storeFailed(c, err, "organization")
		return
	}
	s.startDeletion(c, workflows.DeletionOrg, workflows.DeleteOrgWorkflowName,
		workflows.DeletionInput{ID: id.String(), OrgID: id.String(), RequestedBy: userOf(c)})
}

func (s *Server) startDeletion(c *gin.Context, kind, workflowName string, in workflows.DeletionInput) {
	ctx := c.Request.Context()
	wfID := workflows.DeletionWorkflowID(kind, in.ID)
	tctx, cancel := s.temporalContext(ctx)
	_, err := s.Temporal.ExecuteWorkflow(tctx, client.StartWorkflowOptions{
		ID: wfID, TaskQueue: s.TaskQueue, StaticSummary: "Delete " + kind + " " + in.ID,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, workflowName, in)
	cancel()
	if err != nil {
		// The target stays hidden; repeating the DELETE starts the deletion.
		s.logTemporalFailure(ctx, "start deletion", err)
		unavailable(c, "the workflow service")
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

func (s *Server) getDeletion(c *gin.Context) {
	kind := c.Param("kind")
	if kind != workflows.DeletionWorkspace && kind != workflows.DeletionOrg {
		badRequest(c, "invalid_kind", "kind must be workspace or org")
		return
	}
	id, ok := uuidParam(c, "id", kind)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	wfID := workflows.DeletionWorkflowID(kind, id.String())
	tctx, cancel := s.temporalContext(ctx)
	defer cancel()
	st, err := workflows.DeletionProgress.Ask(tctx, s.Temporal, wfID, "")
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &nf):
		notFound(c, "deletion")
		return
	case err != nil:
		s.logTemporalFailure(ctx, "query deletion", err)
		unavailable(c, "the workflow service")
		return
	}
	if st.RequestedBy != userOf(c) && !s.isOrgOwner(c, st.OrgID) {
		notFound(c, "deletion") // others do not learn that it exists
		return
	}
	c.JSON(http.StatusOK, deletionStatus{DeletionID: wfID, DeletionStatus: st})
}

func (s *Server) isOrgOwner(c *gin.Context, orgID string) bool {
	id, err := uuid.Parse(orgID)
	if err != nil {
		return false
	}
	role, err := s.Store.OrgRole(c.Request.Context(), id, userOf(c))
	return err == nil && role == store.RoleOwner
}
