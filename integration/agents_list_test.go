package integration

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAgentsListPagesRenamesAndArchives(t *testing.T) {
	t.Parallel()
	e := startEnv(t, nil)
	var ids []string
	for i := 0; i < 5; i++ {
		ids = append(ids, e.createAgent(fmt.Sprint("agent ", i)).ID)
	}
	type agentList struct {
		Data       []agentJSON `json:"data"`
		NextCursor *string     `json:"next_cursor"`
		HasMore    bool        `json:"has_more"`
	}
	var seen []string
	cursor := ""
	for {
		var l agentList
		require.Equal(t, 200, e.do("GET", "/api/agents?limit=2&workspace_id="+e.ws+cursor, nil, &l))
		for _, a := range l.Data {
			seen = append(seen, a.ID)
		}
		if !l.HasMore {
			assert.Nil(t, l.NextCursor)
			break
		}
		require.NotNil(t, l.NextCursor)
		cursor = "&cursor=" + *l.NextCursor
	}
	require.Len(t, seen, 5)
	for i := range ids { // newest first
		assert.Equal(t, ids[len(ids)-1-i], seen[i])
	}

	var renamed agentJSON
	require.Equal(t, 200, e.do("PATCH", "/api/agents/"+ids[0], map[string]any{"name": "  Month-end close  "}, &renamed))
	assert.Equal(t, "Month-end close", renamed.Name)
	require.Equal(t, 200, e.do("POST", "/api/agents/"+ids[0]+"/archive", nil, nil))
	var l agentList
	require.Equal(t, 200, e.do("GET", "/api/agents?workspace_id="+e.ws, nil, &l))
	assert.Len(t, l.Data, 4)
	require.Equal(t, 200, e.do("GET", "/api/agents?archived=true&workspace_id="+e.ws, nil, &l))
	require.Len(t, l.Data, 1)
	assert.Equal(t, ids[0], l.Data[0].ID)

	var got errorJSON
	assert.Equal(t, http.StatusConflict, e.do("POST", "/api/agents/"+ids[0]+"/message", map[string]any{"content": "hi"}, &got))
	assert.Equal(t, "agent_archived", got.Code)
	require.Equal(t, 200, e.do("PATCH", "/api/agents/"+ids[0], map[string]any{"archived": false}, nil))
	assert.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+ids[0]+"/message", map[string]any{"content": "hi"}, nil))

	assert.Equal(t, 400, e.do("GET", "/api/agents?workspace_id="+e.ws+"&cursor=zzz", nil, nil))
	assert.Equal(t, 400, e.do("GET", "/api/agents", nil, nil))
	assert.Equal(t, 400, e.do("PATCH", "/api/agents/"+ids[1], map[string]any{}, nil))
	assert.Equal(t, 400, e.do("PATCH", "/api/agents/"+ids[1], map[string]any{"name": ""}, nil))

	// Model override: validated against the configured providers.
	assert.Equal(t, 400, e.do("PATCH", "/api/agents/"+ids[1], map[string]any{"model": "anthropic:claude"}, &got))
	assert.Equal(t, "invalid_model", got.Code)
	assert.Equal(t, 400, e.do("PATCH", "/api/agents/"+ids[1], map[string]any{"model": "offline:gpt-5"}, nil))
	assert.Equal(t, 400, e.do("PATCH", "/api/agents/"+ids[1], map[string]any{"model": "gpt-4o"}, nil))
	var withModel struct{ Model string }
	require.Equal(t, 200, e.do("PATCH", "/api/agents/"+ids[1], map[string]any{"model": "offline:sapagent-offline"}, &withModel))
	assert.Equal(t, "offline:sapagent-offline", withModel.Model)
}
