package integration

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/sapsim"
)

type connectionModeJSON struct {
	ID                     string `json:"id"`
	ConnectorURL           string `json:"connector_url"`
	CredentialMode         string `json:"credential_mode"`
	InvalidatedSecrets     int    `json:"invalidated_secrets"`
	InvalidatedCredentials int    `json:"invalidated_credentials"`
	Code                   string `json:"code"`
}

// allText joins every event of a turn (errors, results, messages) for assertions on what the
// model was told.
func allText(evs []event) string {
	var b strings.Builder
	for _, ev := range evs {
		b.Write(ev.Raw)
	}
	return b.String()
}

// Issue 11 item 3: a restricted SAP user who deletes her own login does not read BKPF as the
// connector's technical user when the connection requires each user's own login; where the
// technical user may serve reads she reads, but her writes are refused, and nothing changes.
func TestSAPIdentityRestrictedUserCannotBypassByDeletingHerLogin(t *testing.T) {
	t.Parallel()
	e, ecc, _ := sapEnv(t, nil)
	path := "/api/workspaces/" + e.ws + "/connections/" + ecc.ID
	var got connectionModeJSON
	require.Equal(t, http.StatusOK, e.do("GET", path, nil, &got))
	assert.Equal(t, "technical_user_all", got.CredentialMode, "the development default")

	// Only admins choose; bad values are 400.
	require.Equal(t, 201, e.do("POST", "/api/orgs/"+e.org+"/members", map[string]any{"user_id": "bob", "role": "member"}, nil))
	require.Equal(t, 201, e.do("POST", "/api/workspaces/"+e.ws+"/members", map[string]any{"user_id": "bob", "role": "member"}, nil))
	assert.Equal(t, http.StatusForbidden, e.doAs(e.tokenFor("bob"), "PATCH", path, map[string]any{"credential_mode": "technical_user_all"}, nil))
	require.Equal(t, http.StatusBadRequest, e.do("PATCH", path, map[string]any{"credential_mode": "anyone"}, &got))
	assert.Equal(t, "invalid_credential_mode", got.Code)
	require.Equal(t, http.StatusOK, e.do("PATCH", path, map[string]any{"credential_mode": "user_login_required"}, &got))
	assert.Equal(t, "user_login_required", got.CredentialMode)

	agent := e.createAgent("restricted")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)
	require.Equal(t, http.StatusOK, e.do("PUT", "/api/user/sap-credentials/"+ecc.ID,
		map[string]any{"sap_user": "RESTRICTED", "password": sapsim.DefaultUsers()["RESTRICTED"]}, nil))
	evs := turn(t, e, ws, agent.ID, "read 2 rows from table BKPF on ECC")
	require.Len(t, toolEvents(t, evs, "tool_error"), 1, "events: %v", evs)
	assert.Contains(t, allText(evs), "SAP authorization failed")

	// She deletes her login: the technical user does not step in.
	require.Equal(t, http.StatusNoContent, e.do("DELETE", "/api/user/sap-credentials/"+ecc.ID, nil, nil))
	evs = turn(t, e, ws, agent.ID, "read 2 rows from table BKPF on ECC")
	require.Len(t, toolEvents(t, evs, "tool_error"), 1, "events: %v", evs)
	assert.Contains(t, allText(evs), "store your SAP login for connection ECC")
	assert.Empty(t, toolEvents(t, evs, "tool_update"))
	// The SAP routes say the same, as a 403 with a code.
	var fail struct{ Code, Error string }
	assert.Equal(t, http.StatusForbidden, e.do("GET", "/api/workspaces/"+e.ws+"/source?connection_id="+ecc.ID+"&object_type=PROG&name=ZFOO", nil, &fail))
	assert.Equal(t, "sap_login_required", fail.Code)

	// technical_user_reads: without a login she reads as the technical user, but a write is
	// refused before it reaches SAP, even once approved.
	require.Equal(t, http.StatusOK, e.do("PATCH", path, map[string]any{"credential_mode": "technical_user_reads"}, &got))
	evs = turn(t, e, ws, agent.ID, "read 2 rows from table BKPF on ECC")
	require.Len(t, toolEvents(t, evs, "tool_update"), 1, "events: %v", evs)
	assert.Contains(t, toolEvents(t, evs, "tool_update")[0].Result, "BELNR")

	mara := readSim(t, e, "ECC", sap.ReadTableRequest{Table: "MARA", Fields: []string{"MATNR"}, RowCount: 1})
	require.Len(t, mara.Rows, 1)
	matnr := strings.TrimSpace(mara.Rows[0][0])
	makt := func() string {
		r := readSim(t, e, "ECC", sap.ReadTableRequest{Table: "MAKT", Fields: []string{"MAKTX"}, Options: []string{"MATNR = '" + matnr + "' AND SPRAS = 'E'"}})
		require.Len(t, r.Rows, 1)
		return strings.TrimSpace(r.Rows[0][0])
	}
	before := makt()
	evs = turn(t, e, ws, agent.ID, "rename material "+matnr+" on ECC to Demo bolt M8")
	need := toolEvents(t, evs, "approval_needed")
	require.Len(t, need, 1, "events: %v", evs)
	evs = approve(t, e, ws, agent.ID, need[0].ToolCallID)
	assert.Contains(t, allText(evs), "only reads")
	assert.Equal(t, before, makt(), "the technical user wrote nothing")
}

// hostRecorder is a connector host under someone else's control: it records the identity
// headers of every request it receives.
type hostRecorder struct {
	mu   sync.Mutex
	seen []http.Header
}

func (h *hostRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.seen = append(h.seen, r.Header.Clone())
	h.mu.Unlock()
	http.Error(w, "collected", http.StatusServiceUnavailable)
}

func (h *hostRecorder) headers() []http.Header {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]http.Header(nil), h.seen...)
}

// Issue 11 item 4: an admin who points a connection at another host receives neither the
// connector key nor any member's password; the members see their login invalidated and why.
func TestSAPIdentityChangedConnectorURLNeverReceivesStoredSecrets(t *testing.T) {
	t.Parallel()
	e, _, s4 := sapEnv(t, nil)
	path := "/api/workspaces/" + e.ws + "/connections/" + s4.ID
	require.Equal(t, 201, e.do("POST", "/api/orgs/"+e.org+"/members", map[string]any{"user_id": "bob", "role": "member"}, nil))
	require.Equal(t, 201, e.do("POST", "/api/workspaces/"+e.ws+"/members", map[string]any{"user_id": "bob", "role": "member"}, nil))
	bob := e.tokenFor("bob")
	password := sapsim.DefaultUsers()["DEVELOPER"]
	require.Equal(t, http.StatusOK, e.do("PUT", "/api/user/sap-credentials/"+s4.ID, map[string]any{"sap_user": "DEVELOPER", "password": password}, nil))
	require.Equal(t, http.StatusOK, e.doAs(bob, "PUT", "/api/user/sap-credentials/"+s4.ID, map[string]any{"sap_user": "DEVELOPER", "password": password}, nil))

	agent := e.createAgent("moved")
	ws := e.dial(agent.ID, "")
	ws.next(5 * time.Second)
	evs := turn(t, e, ws, agent.ID, "read 2 rows from table MARA on S4")
	require.Len(t, toolEvents(t, evs, "tool_update"), 1, "events: %v", evs)

	evil := &hostRecorder{}
	srv := httptest.NewServer(evil)
	defer srv.Close()
	var moved connectionModeJSON
	require.Equal(t, http.StatusOK, e.do("PATCH", path, map[string]any{"connector_url": srv.URL + "/S4H"}, &moved))
	assert.Equal(t, 1, moved.InvalidatedSecrets)
	assert.Equal(t, 2, moved.InvalidatedCredentials)

	// Members see theirs invalidated, with the reason.
	var creds struct {
		Data []struct {
			ConnectionID      string `json:"connection_id"`
			Invalidated       bool   `json:"invalidated"`
			InvalidatedReason string `json:"invalidated_reason"`
		} `json:"data"`
	}
	require.Equal(t, http.StatusOK, e.doAs(bob, "GET", "/api/user/sap-credentials", nil, &creds))
	require.Len(t, creds.Data, 1)
	assert.True(t, creds.Data[0].Invalidated)
	assert.Contains(t, creds.Data[0].InvalidatedReason, "connector_url changed")
	var secretsList struct {
		Data []struct {
			Name        string `json:"name"`
			Invalidated bool   `json:"invalidated"`
		} `json:"data"`
	}
	require.Equal(t, http.StatusOK, e.do("GET", path+"/secrets", nil, &secretsList))
	require.Len(t, secretsList.Data, 1)
	assert.True(t, secretsList.Data[0].Invalidated)

	// The next calls reach nothing with the old values; the model is told to re-enter them.
	evs = turn(t, e, ws, agent.ID, "read 2 rows from table MARA on S4")
	require.Len(t, toolEvents(t, evs, "tool_error"), 1, "events: %v", evs)
	assert.Contains(t, allText(evs), "re-enter")
	var health json.RawMessage
	e.do("GET", "/api/workspaces/"+e.ws+"/connector-health?connection_id="+s4.ID, nil, &health)
	e.doAs(bob, "GET", "/api/workspaces/"+e.ws+"/connector-health?connection_id="+s4.ID, nil, &health)
	for _, h := range evil.headers() {
		assert.NotEqual(t, sapsim.S4HConnectorKey, h.Get(sap.HeaderConnectorKey))
		assert.Empty(t, h.Get(sap.HeaderSAPPassword))
	}
	assert.Empty(t, evil.headers(), "the new host received no request at all")

	// Moving back does not revive them either: they were wiped.
	require.Equal(t, http.StatusOK, e.do("PATCH", path, map[string]any{"connector_url": e.stack.SAPSimURL + "/S4H"}, &moved))
	evs = turn(t, e, ws, agent.ID, "read 2 rows from table MARA on S4")
	require.Len(t, toolEvents(t, evs, "tool_error"), 1, "events: %v", evs)
	assert.Contains(t, allText(evs), "re-enter")

	// Entered again, they work.
	require.Equal(t, http.StatusOK, e.do("PUT", path+"/secrets/connector_key", map[string]any{"value": sapsim.S4HConnectorKey}, nil))
	require.Equal(t, http.StatusOK, e.do("PUT", "/api/user/sap-credentials/"+s4.ID, map[string]any{"sap_user": "DEVELOPER", "password": password}, nil))
	evs = turn(t, e, ws, agent.ID, "read 2 rows from table MARA on S4")
	require.Len(t, toolEvents(t, evs, "tool_update"), 1, "events: %v", evs)
	require.Equal(t, http.StatusOK, e.do("GET", "/api/user/sap-credentials", nil, &creds))
	require.Len(t, creds.Data, 1)
	assert.False(t, creds.Data[0].Invalidated)
}
