package sapconn_test

import (
	"context"
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
	"github.com/sapagent/sapagent/internal/sapconn"
	"github.com/sapagent/sapagent/internal/saptools"
	"github.com/sapagent/sapagent/internal/secrets"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/store/storetest"
	"github.com/sapagent/sapagent/internal/tools"
)

// recorder is a connector host that remembers the identity headers of every request and
// passes it on to next (nil: answers 503).
type recorder struct {
	mu      sync.Mutex
	headers []http.Header
	next    http.Handler
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.headers = append(r.headers, req.Header.Clone())
	r.mu.Unlock()
	if r.next == nil {
		http.Error(w, "recording only", http.StatusServiceUnavailable)
		return
	}
	r.next.ServeHTTP(w, req)
}

func (r *recorder) seen() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...)
}

// identityFixture is a workspace in a fresh database with one connection "ECC" reached over
// HTTP (through a recorder) at the simulated landscape, its connector key stored.
type identityFixture struct {
	st       *store.Store
	keys     *secrets.Keyring
	resolver *sapconn.Resolver
	conn     store.Connection
	rec      *recorder
	user     string
}

func newIdentityFixture(t *testing.T, mode string) *identityFixture {
	t.Helper()
	ctx := context.Background()
	st, _ := storetest.New(t)
	keys, err := secrets.ParseKeys(secrets.NewKey(), "")
	require.NoError(t, err)
	land := sapsim.NewLandscape(sapsim.Options{})
	rec := &recorder{next: land.Handler()}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)

	ws := storetest.Workspace(t, st, "rita")
	conn, err := st.CreateConnection(ctx, store.Connection{WorkspaceID: ws.ID, Name: "ECC", SystemType: "ECC",
		ConnectorURL: srv.URL + "/ECC", Environment: "development", CredentialMode: mode})
	require.NoError(t, err)
	f := &identityFixture{st: st, keys: keys, conn: conn, rec: rec, user: "rita",
		resolver: &sapconn.Resolver{Store: st, Keyring: keys, Client: sap.NewClient(sap.Guard{}, time.Minute), Simulated: land}}
	f.setSecret(t, sapsim.ECCConnectorKey)
	return f
}

func (f *identityFixture) setSecret(t *testing.T, key string) {
	storetest.ConnectorKey(t, f.st, f.keys, f.conn.ID, key)
}

func (f *identityFixture) login(t *testing.T, sapUser string) {
	storetest.Login(t, f.st, f.keys, f.user, f.conn.ID, sapUser, sapsim.DefaultUsers()[sapUser])
}

func (f *identityFixture) executor(t *testing.T) *saptools.Executor {
	conns, err := f.resolver.Connections(context.Background(), f.conn.WorkspaceID, f.user)
	require.NoError(t, err)
	return saptools.New(conns)
}

func args(t *testing.T, tool, raw string) map[string]any {
	t.Helper()
	def, ok := tools.Default().Get(tool)
	require.True(t, ok, tool)
	a, err := def.ParseArguments(raw)
	require.NoError(t, err, raw)
	return a
}

func readBKPF(t *testing.T, e *saptools.Executor) error {
	_, err := e.ReadTable(context.Background(), args(t, tools.SAPReadTable, `{"table":"BKPF","row_count":2}`))
	return err
}

func saveMaterial(t *testing.T, e *saptools.Executor) error {
	_, err := e.ExecuteRFC(context.Background(), args(t, tools.SAPExecuteRFC, `{"function":"BAPI_MATERIAL_SAVEDATA",
		"imports":{"HEADDATA":{"MATERIAL":"7","MATL_TYPE":"FERT","IND_SECTOR":"M"}},"tables":{"MATERIALDESCRIPTION":[{"LANGU":"E","MATL_DESC":"Bolt"}]}}`))
	return err
}

// Issue 11 item 3: a restricted SAP user who deletes her own login does not read BKPF as the
// connector's technical user where the connection requires each user's own login; the model
// is told to store the login, and nothing reaches the connector.
func TestRestrictedUserWithoutLoginIsRefusedUnderUserLoginRequired(t *testing.T) {
	f := newIdentityFixture(t, store.CredentialUserLoginRequired)
	f.login(t, "RESTRICTED")
	err := readBKPF(t, f.executor(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "SAP authorization failed")

	require.NoError(t, f.st.DeleteCredential(context.Background(), f.user, f.conn.ID))
	sent := len(f.rec.seen())
	e := f.executor(t)
	err = readBKPF(t, e)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "store your SAP login for connection ECC")
	var ie *sapconn.IdentityError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, "sap_login_required", ie.Code)
	assert.ErrorContains(t, saveMaterial(t, e), "store your SAP login for connection ECC")
	_, err = e.GetSystemInfo(context.Background(), args(t, tools.SAPGetSystemInfo, `{}`))
	assert.ErrorContains(t, err, "store your SAP login")
	assert.Len(t, f.rec.seen(), sent, "nothing was sent as the technical user")
}

// Under technical_user_reads a member without a login reads as the technical user, but writes
// are refused before they are sent; with her own login she writes as herself.
func TestTechnicalUserServesOnlyReadsUnderTechnicalUserReads(t *testing.T) {
	f := newIdentityFixture(t, store.CredentialTechnicalUserReads)
	e := f.executor(t)
	require.NoError(t, readBKPF(t, e), "the technical user reads for everyone")
	assert.Empty(t, f.rec.seen()[len(f.rec.seen())-1].Get(sap.HeaderSAPUser), "as the technical user")

	sent := len(f.rec.seen())
	err := saveMaterial(t, e)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "only reads")
	assert.Contains(t, err.Error(), "store your SAP login for connection ECC")
	_, err = e.ExecuteRFC(context.Background(), args(t, tools.SAPExecuteRFC, `{"function":"BAPI_TRANSACTION_COMMIT"}`))
	assert.ErrorContains(t, err, "only reads")
	_, err = e.ExecuteRFC(context.Background(), args(t, tools.SAPExecuteRFC, `{"function":"Z_UNKNOWN_FM"}`))
	assert.ErrorContains(t, err, "only reads", "unknown function modules count as writes")
	var res sap.WriteTableResponse
	err = e.Conns[0].API.Call(context.Background(), sap.EndpointWriteTable, sap.WriteTableRequest{Table: "ZTEST", Mode: "insert"}, &res)
	assert.ErrorContains(t, err, "only reads")
	assert.Len(t, f.rec.seen(), sent, "no write was sent")
	_, err = e.ExecuteRFC(context.Background(), args(t, tools.SAPExecuteRFC, `{"function":"RFC_SYSTEM_INFO"}`))
	assert.NoError(t, err, "a known read runs")

	// Her own login: writes run as her (the connector sees her user).
	f.login(t, "DEVELOPER")
	require.NoError(t, saveMaterial(t, f.executor(t)))
	assert.Equal(t, "DEVELOPER", f.rec.seen()[len(f.rec.seen())-1].Get(sap.HeaderSAPUser))

	// A production server never lets the technical user write, whatever the row says.
	assert.Equal(t, store.CredentialTechnicalUserReads, sapconn.TechnicalMode(store.CredentialTechnicalUserAll, true))
	assert.Equal(t, store.CredentialUserLoginRequired, sapconn.TechnicalMode("", false))
}

// Issue 11 item 4: after the connector URL moves to another host, neither the connector key
// nor a member's password is sent there; both must be entered again, and the member's login
// lists as invalidated with the reason.
func TestSecretsAndLoginsAreNeverSentToAChangedConnectorOrigin(t *testing.T) {
	f := newIdentityFixture(t, store.CredentialUserLoginRequired)
	f.login(t, "DEVELOPER")
	require.NoError(t, readBKPF(t, f.executor(t)))
	last := f.rec.seen()[len(f.rec.seen())-1]
	require.Equal(t, sapsim.ECCConnectorKey, last.Get(sap.HeaderConnectorKey))
	require.Equal(t, "DEVELOPER", last.Get(sap.HeaderSAPUser))

	evil := &recorder{}
	evilSrv := httptest.NewServer(evil)
	defer evilSrv.Close()
	moved := f.conn
	moved.ConnectorURL = evilSrv.URL + "/ECC"
	up, err := f.st.UpdateConnection(context.Background(), moved)
	require.NoError(t, err)
	assert.EqualValues(t, 1, up.InvalidatedSecrets)
	assert.EqualValues(t, 1, up.InvalidatedCredentials)

	e := f.executor(t)
	err = readBKPF(t, e)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "enter")
	assert.ErrorContains(t, saveMaterial(t, e), "connector key was entered for another connector address")
	assert.Empty(t, evil.seen(), "the new host received nothing")

	creds, err := f.st.ListCredentials(context.Background(), f.user)
	require.NoError(t, err)
	require.Len(t, creds, 1)
	assert.True(t, creds[0].Invalidated)
	assert.Contains(t, creds[0].InvalidatedReason, "connector_url changed")
	names, err := f.st.ListConnectionSecretNames(context.Background(), f.conn.ID)
	require.NoError(t, err)
	require.Len(t, names, 1)
	assert.True(t, names[0].Invalidated)

	// Re-entered for the new address, they are sent there.
	f.setSecret(t, "key-for-the-new-host")
	f.login(t, "DEVELOPER")
	_ = readBKPF(t, f.executor(t))
	require.NotEmpty(t, evil.seen())
	assert.Equal(t, "key-for-the-new-host", evil.seen()[0].Get(sap.HeaderConnectorKey))
	assert.Equal(t, "DEVELOPER", evil.seen()[0].Get(sap.HeaderSAPUser))

	// A path change on the same origin keeps them.
	same := moved
	same.ConnectorURL = evilSrv.URL + "/other/path"
	up, err = f.st.UpdateConnection(context.Background(), same)
	require.NoError(t, err)
	assert.Zero(t, up.InvalidatedSecrets+up.InvalidatedCredentials)

	// Defence in depth: a value bound to another origin (the URL changed by any other path) is
	// not sent either, and not silently replaced by the technical user.
	_, err = f.st.Pool.Exec(context.Background(), `UPDATE workspace_connections SET connector_url = $2 WHERE id = $1`,
		f.conn.ID, strings.Replace(evilSrv.URL, "127.0.0.1", "localhost", 1))
	require.NoError(t, err)
	before := len(evil.seen())
	err = readBKPF(t, f.executor(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "entered for another connector address")
	assert.Len(t, evil.seen(), before)
}

// Production resolves a connection without a URL to the simulator only when it is marked
// simulated; otherwise the connector's every call says why nothing answers. Development
// simulates every connection without a URL.
func TestConnectionsWithoutURLAreSimulatedOnlyWhenAllowed(t *testing.T) {
	land := sapsim.NewLandscape(sapsim.Options{})
	for _, c := range []struct {
		production, simulated, works bool
	}{{false, false, true}, {false, true, true}, {true, true, true}, {true, false, false}} {
		r := &sapconn.Resolver{Simulated: land, Production: c.production}
		api, err := r.Connector("ECC", c.simulated, sap.Target{})
		if !c.works {
			var noURL *sapconn.NoConnectorURLError
			require.ErrorAs(t, err, &noURL, "%+v", c)
			assert.Nil(t, api)
			assert.Contains(t, err.Error(), "has no connector URL")
			continue
		}
		require.NoError(t, err, "%+v", c)
		var info sap.SystemInfo
		require.NoError(t, api.Call(context.Background(), sap.EndpointSystemInfo, struct{}{}, &info))
		assert.Equal(t, "ECC", info.SystemID)
	}

	// Resolved as a workspace connection, the error names it and reaches the model.
	e := saptools.New([]sapconn.Conn{{ID: "c1", Name: "ECC", SystemType: "ECC", API: sapconn.Unconnected(&sapconn.NoConnectorURLError{Connection: "ECC"})}})
	_, err := e.GetTableSchema(context.Background(), args(t, tools.SAPGetTableSchema, `{"table":"MARA"}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "connection ECC has no connector URL")
}
