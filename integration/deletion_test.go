package integration

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
)

// populated is a workspace with what deleting it must remove: an agent that had a
// conversation (events in Redis, a running workflow) and an uploaded file (bytes on disk).
type populated struct {
	ws, agent, file, blobPath string
}

func (e *env) populate(ws string) populated {
	e.t.Helper()
	var a agentJSON
	require.Equal(e.t, http.StatusCreated, e.do("POST", "/api/agents", map[string]any{"name": "close", "workspace_id": ws}, &a))
	require.Equal(e.t, http.StatusAccepted, e.do("POST", "/api/agents/"+a.ID+"/message", map[string]any{"content": "Revenue Q3 is confidential"}, nil))
	require.Eventually(e.t, func() bool {
		for _, m := range e.messages(a.ID) {
			if m.Role == "assistant" {
				return true
			}
		}
		return false
	}, 30*time.Second, 100*time.Millisecond, "the agent replies")
	f := e.upload(e.token, ws, "ledger.csv", []byte("account,amount\n4000,123.45\n"))
	var key string
	require.NoError(e.t, e.stack.Deps.Store.Pool.QueryRow(context.Background(), `SELECT storage_key FROM files WHERE id = $1`, f.ID).Scan(&key))
	p := populated{ws: ws, agent: a.ID, file: f.ID, blobPath: filepath.Join(e.cfg.DataDir, "files", filepath.FromSlash(key))}
	_, err := os.Stat(p.blobPath)
	require.NoError(e.t, err, "the file's bytes are on disk")
	require.NotEmpty(e.t, e.topicKeys("agent:"+a.ID), "the conversation's events are in Redis")
	return p
}

// topicKeys lists the Redis keys of a topic under the environment's prefix, but a deleted
// topic's tombstone (it holds nothing and expires: liveTopicKey).
func (e *env) topicKeys(topic string) []string {
	e.t.Helper()
	keys, err := e.stack.Deps.Redis.Keys(context.Background(), e.cfg.RedisPrefix+"{"+topic+"}*").Result()
	require.NoError(e.t, err)
	var out []string
	for _, k := range keys {
		if e.liveTopicKey(k) {
			out = append(out, k)
		}
	}
	return out
}

// liveTopicKey is false for a deleted topic's tombstone, which must expire.
func (e *env) liveTopicKey(key string) bool {
	if !strings.HasSuffix(key, ":deleted") {
		return true
	}
	ttl, err := e.stack.Deps.Redis.TTL(context.Background(), key).Result()
	require.NoError(e.t, err)
	assert.Greater(e.t, ttl, time.Duration(0), "the tombstone %s expires", key)
	return false
}

type deletionJSON struct {
	DeletionID string `json:"deletion_id"`
	StatusURL  string `json:"status_url"`
	Step       string `json:"step"`
	Done       bool   `json:"done"`
	Agents     int    `json:"agents"`
	Files      int    `json:"files"`
	Workspaces int    `json:"workspaces"`
}

// waitDeleted polls the status URL until the deletion reports done.
func (e *env) waitDeleted(d deletionJSON) deletionJSON {
	e.t.Helper()
	var st deletionJSON
	require.Eventually(e.t, func() bool {
		require.Equal(e.t, http.StatusOK, e.do("GET", d.StatusURL, nil, &st))
		return st.Done
	}, 60*time.Second, 200*time.Millisecond)
	assert.Equal(e.t, d.DeletionID, st.DeletionID)
	assert.Equal(e.t, "done", st.Step)
	return st
}

// recordClosed records the deletion's history for the replay corpus once its run has closed.
func (e *env) recordClosed(workflowID, name string) {
	e.t.Helper()
	require.Eventually(e.t, func() bool {
		d, err := e.stack.Deps.Temporal.DescribeWorkflowExecution(context.Background(), workflowID, "")
		return err == nil && d.WorkflowExecutionInfo.GetCloseTime() != nil
	}, 30*time.Second, 100*time.Millisecond)
	recordHistory(e.t.(*testing.T), e.stack.Deps.Temporal, e.stack.Deps.Codec, workflowID, "", name)
}

// assertGone checks that nothing of the workspace is left anywhere.
func (e *env) assertGone(p populated) {
	e.t.Helper()
	_, err := os.Stat(p.blobPath)
	assert.True(e.t, os.IsNotExist(err), "file bytes deleted: %v", err)
	assert.Empty(e.t, e.topicKeys("agent:"+p.agent), "agent topic deleted from Redis")
	assert.Empty(e.t, e.topicKeys("workspace:"+p.ws), "workspace topic deleted from Redis")
	d, err := e.stack.Deps.Temporal.DescribeWorkflowExecution(context.Background(), "agent/"+p.agent, "")
	require.NoError(e.t, err)
	assert.Equal(e.t, enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, d.WorkflowExecutionInfo.GetStatus(), "conversation stopped")
	var n int
	require.NoError(e.t, e.stack.Deps.Store.Pool.QueryRow(context.Background(),
		`SELECT (SELECT count(*) FROM workspaces WHERE id = $1) + (SELECT count(*) FROM agents WHERE id = $2)
		 + (SELECT count(*) FROM messages WHERE agent_id = $2) + (SELECT count(*) FROM files WHERE id = $3)`,
		p.ws, p.agent, p.file).Scan(&n))
	assert.Zero(e.t, n, "rows deleted")
}

func TestDeletingAWorkspaceRemovesFilesConversationsAndEvents(t *testing.T) {
	t.Parallel()
	e := startEnv(t, nil)
	p := e.populate(e.ws)
	var other struct{ ID string }
	require.Equal(t, http.StatusCreated, e.do("POST", "/api/workspaces", map[string]any{"org_id": e.org, "name": "Kept"}, &other))
	kept := e.populate(other.ID)
	// A connection has sync schedules: they go with the workspace.
	var conn struct{ ID string }
	require.Equal(t, http.StatusCreated, e.do("POST", "/api/workspaces/"+e.ws+"/connections", map[string]any{"name": "ECC", "system_type": "ECC"}, &conn))

	// Only an admin may delete; others do not start anything.
	require.Equal(t, 201, e.do("POST", "/api/orgs/"+e.org+"/members", map[string]any{"user_id": "bob", "role": "member"}, nil))
	require.Equal(t, 201, e.do("POST", "/api/workspaces/"+e.ws+"/members", map[string]any{"user_id": "bob", "role": "member"}, nil))
	bob := e.tokenFor("bob")
	assert.Equal(t, http.StatusForbidden, e.doAs(bob, "DELETE", "/api/workspaces/"+e.ws, nil, nil))

	var d deletionJSON
	require.Equal(t, http.StatusAccepted, e.do("DELETE", "/api/workspaces/"+e.ws, nil, &d))
	assert.Equal(t, "delete/workspace/"+e.ws, d.DeletionID)
	assert.Equal(t, "/api/deletions/workspace/"+e.ws, d.StatusURL)
	// Hidden at once: nothing new gets in.
	assert.Equal(t, http.StatusNotFound, e.do("GET", "/api/workspaces/"+e.ws, nil, nil))
	assert.Equal(t, http.StatusNotFound, e.do("GET", "/api/agents/"+p.agent, nil, nil))
	assert.Equal(t, http.StatusNotFound, e.do("POST", "/api/agents/"+p.agent+"/message", map[string]any{"content": "more"}, nil))
	assert.Equal(t, http.StatusNotFound, e.do("POST", "/api/agents", map[string]any{"workspace_id": e.ws}, nil))
	assert.Equal(t, http.StatusNotFound, e.do("GET", "/api/files/"+p.file, nil, nil))
	// A repeated DELETE answers the same deletion; only the requester (or an org owner) watches it.
	var again deletionJSON
	require.Equal(t, http.StatusAccepted, e.do("DELETE", "/api/workspaces/"+e.ws, nil, &again))
	assert.Equal(t, d, again)
	assert.Equal(t, http.StatusNotFound, e.doAs(bob, "GET", d.StatusURL, nil, nil))

	st := e.waitDeleted(d)
	e.recordClosed(d.DeletionID, "deletion_workspace_v2")
	assert.Equal(t, 1, st.Agents)
	assert.Equal(t, 1, st.Files)
	e.assertGone(p)
	_, err := e.stack.Deps.Temporal.ScheduleClient().GetHandle(context.Background(), "sync/"+conn.ID+"/full").Describe(context.Background())
	assert.Error(t, err, "the connection's sync schedule is deleted")
	assert.Equal(t, http.StatusNotFound, e.do("DELETE", "/api/workspaces/"+e.ws, nil, nil), "gone for good")

	// The other workspace keeps everything.
	_, err = os.Stat(kept.blobPath)
	assert.NoError(t, err)
	assert.NotEmpty(t, e.topicKeys("agent:"+kept.agent))
	assert.Equal(t, http.StatusOK, e.do("GET", "/api/agents/"+kept.agent, nil, nil))
	assert.Equal(t, http.StatusBadRequest, e.do("GET", "/api/deletions/team/"+e.ws, nil, nil))
	assert.Equal(t, http.StatusNotFound, e.do("GET", "/api/deletions/workspace/"+kept.ws, nil, nil))
}

func TestDeletingAnOrgRemovesEveryWorkspace(t *testing.T) {
	t.Parallel()
	e := startEnv(t, nil)
	var second struct{ ID string }
	require.Equal(t, http.StatusCreated, e.do("POST", "/api/workspaces", map[string]any{"org_id": e.org, "name": "Logistics"}, &second))
	ps := []populated{e.populate(e.ws), e.populate(second.ID)}
	// An org admin is not enough.
	require.Equal(t, 201, e.do("POST", "/api/orgs/"+e.org+"/members", map[string]any{"user_id": "carol", "role": "admin"}, nil))
	assert.Equal(t, http.StatusForbidden, e.doAs(e.tokenFor("carol"), "DELETE", "/api/orgs/"+e.org, nil, nil))

	var d deletionJSON
	require.Equal(t, http.StatusAccepted, e.do("DELETE", "/api/orgs/"+e.org, nil, &d))
	assert.Equal(t, "delete/org/"+e.org, d.DeletionID)
	assert.Equal(t, http.StatusNotFound, e.do("GET", "/api/orgs/"+e.org, nil, nil))
	for _, p := range ps {
		assert.Equal(t, http.StatusNotFound, e.do("GET", "/api/workspaces/"+p.ws, nil, nil))
	}
	var orgs struct{ Data []map[string]any }
	require.Equal(t, http.StatusOK, e.do("GET", "/api/orgs", nil, &orgs))
	assert.Empty(t, orgs.Data)

	st := e.waitDeleted(d)
	e.recordClosed(d.DeletionID, "deletion_org_v1")
	assert.Equal(t, 2, st.Workspaces)
	assert.Equal(t, 2, st.Agents)
	assert.Equal(t, 2, st.Files)
	for _, p := range ps {
		e.assertGone(p)
	}
	var n int
	require.NoError(t, e.stack.Deps.Store.Pool.QueryRow(context.Background(), `SELECT count(*) FROM orgs WHERE id = $1`, e.org).Scan(&n))
	assert.Zero(t, n)
	// Nothing of the org's conversations is left under the prefix (the rate limiter's keys aside).
	keys, err := e.stack.Deps.Redis.Keys(context.Background(), e.cfg.RedisPrefix+"{*").Result()
	require.NoError(t, err)
	for _, k := range keys {
		for _, p := range ps {
			assert.False(t, e.liveTopicKey(k) && (strings.Contains(k, p.agent) || strings.Contains(k, p.ws)), "left behind: %s", k)
		}
	}
}
