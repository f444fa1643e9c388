package integration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
	"github.com/sapagent/sapagent/internal/secrets"
)

func TestTheSixtyFirstMutationInAMinuteIsRateLimited(t *testing.T) {
	// Serial: needs 61 mutations inside one rate-limit minute (see TestMain).
	e := startEnv(t, nil)
	dave := e.tokenFor("dave")
	for i := 0; i < 60; i++ {
		require.Equal(t, http.StatusBadRequest, e.doAs(dave, "POST", "/api/orgs", map[string]any{}, nil), "request %d", i+1)
	}
	req, _ := http.NewRequest("POST", e.stack.APIURL+"/api/orgs", bytes.NewReader([]byte(`{"name":"x"}`)))
	req.Header.Set("Authorization", "Bearer "+dave)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	retry, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, retry, 1)
	var orgs struct{ Data []any }
	require.Equal(t, http.StatusOK, e.doAs(dave, "GET", "/api/orgs", nil, &orgs), "reads are not limited")
	assert.Empty(t, orgs.Data, "the limited request wrote nothing")
	assert.Equal(t, http.StatusCreated, e.doAs(e.tokenFor("erin"), "POST", "/api/orgs", map[string]any{"name": "E"}, nil), "other users are not affected")
}

func TestSecretsAreStoredEncryptedAndSurviveKeyRotation(t *testing.T) {
	t.Parallel()
	e := startEnv(t, nil)
	var conn struct{ ID string }
	require.Equal(t, 201, e.do("POST", "/api/workspaces/"+e.ws+"/connections", map[string]any{"name": "ECC", "system_type": "ECC"}, &conn))
	base := "/api/workspaces/" + e.ws + "/connections/" + conn.ID + "/secrets"
	const connectorKey, password = "ck-7f3a9e1d-super-secret", "Init1234!-sap-pass"
	require.Equal(t, 200, e.do("PUT", base+"/connector_key", map[string]any{"value": connectorKey}, nil))
	require.Equal(t, 200, e.do("PUT", "/api/user/sap-credentials/"+conn.ID, map[string]any{"sap_user": "jdoe", "password": password}, nil))

	// Values are write-only: names and SAP users come back, values never do.
	var names bytes.Buffer
	req, _ := http.NewRequest("GET", e.stack.APIURL+base, nil)
	req.Header.Set("Authorization", "Bearer "+e.token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(&names, resp.Body)
	resp.Body.Close()
	assert.Contains(t, names.String(), "connector_key")
	assert.NotContains(t, names.String(), connectorKey)
	var creds struct {
		Data []map[string]any `json:"data"`
	}
	require.Equal(t, 200, e.do("GET", "/api/user/sap-credentials", nil, &creds))
	require.Len(t, creds.Data, 1)
	assert.Equal(t, "JDOE", creds.Data[0]["sap_user"])
	assert.NotContains(t, creds.Data[0], "password")

	ctx := context.Background()
	st := e.stack.Deps.Store
	oldKeys, err := e.stack.Deps.Keyring()
	require.NoError(t, err)
	var keyID string
	var ct, pwCT []byte
	require.NoError(t, st.Pool.QueryRow(ctx, `SELECT key_id, ciphertext FROM connection_secrets`).Scan(&keyID, &ct))
	require.NoError(t, st.Pool.QueryRow(ctx, `SELECT password_ciphertext FROM user_connection_credentials`).Scan(&pwCT))
	assert.Equal(t, oldKeys.CurrentKeyID(), keyID)
	assert.False(t, bytes.Contains(ct, []byte(connectorKey)), "the column never holds the plaintext")
	assert.False(t, bytes.Contains(pwCT, []byte(password)))

	// Rotate: a new current key, the old one kept for decryption until rotation finishes.
	rotated, err := secrets.ParseKeys(secrets.NewKey(), e.cfg.SecretsKey)
	require.NoError(t, err)
	n, err := secrets.Rotate(ctx, st, rotated)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	require.NoError(t, st.Pool.QueryRow(ctx, `SELECT key_id, ciphertext FROM connection_secrets`).Scan(&keyID, &ct))
	assert.Equal(t, rotated.CurrentKeyID(), keyID)
	plain, err := rotated.Open(keyID, ct, secrets.ConnectionSecretAAD(conn.ID, "connector_key"))
	require.NoError(t, err)
	assert.Equal(t, connectorKey, string(plain))
	_, err = oldKeys.Open(keyID, ct, secrets.ConnectionSecretAAD(conn.ID, "connector_key"))
	assert.ErrorIs(t, err, secrets.ErrUnknownKey, "after rotation the old key alone no longer opens it")
	require.NoError(t, st.Pool.QueryRow(ctx, `SELECT key_id, password_ciphertext FROM user_connection_credentials`).Scan(&keyID, &pwCT))
	plain, err = rotated.Open(keyID, pwCT, secrets.CredentialAAD("alice", conn.ID))
	require.NoError(t, err)
	assert.Equal(t, password, string(plain))
	n, err = secrets.Rotate(ctx, st, rotated)
	require.NoError(t, err)
	assert.Zero(t, n, "rotation is idempotent")

	// Bad input: bad names and empty values write nothing.
	assert.Equal(t, 400, e.do("PUT", base+"/Bad-Name", map[string]any{"value": "x"}, nil))
	assert.Equal(t, 400, e.do("PUT", base+"/host", map[string]any{"value": ""}, nil))
	assert.Equal(t, 404, e.do("DELETE", base+"/never_set", nil, nil))
	assert.Equal(t, 204, e.do("DELETE", base+"/connector_key", nil, nil))
}

func TestUploadDownloadKeepsIntegrityAndRejectsBadFiles(t *testing.T) {
	t.Parallel()
	e := startEnv(t, func(c *config.Config, _ *devstack.Options) { c.MaxFileBytes = 4096 })
	content := []byte("material,plant,qty\nMAT-001,1000,5\nMAT-002,1000,7\n")
	f := e.upload(e.token, e.ws, "stock.csv", content)
	sum := sha256.Sum256(content)
	assert.Equal(t, hex.EncodeToString(sum[:]), f.SHA256)
	assert.Equal(t, "text/csv", f.ContentType)
	assert.Equal(t, int64(len(content)), f.Size)

	req, _ := http.NewRequest("GET", e.stack.APIURL+"/api/files/"+f.ID+"/content", nil)
	req.Header.Set("Authorization", "Bearer "+e.token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, content, got)
	gotSum := sha256.Sum256(got)
	assert.Equal(t, f.SHA256, hex.EncodeToString(gotSum[:]))
	assert.Equal(t, f.SHA256, resp.Header.Get("X-Content-SHA256"))

	pdf := append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte("x"), 100)...)
	assert.Equal(t, "application/pdf", e.upload(e.token, e.ws, "spec.pdf", pdf).ContentType)

	resp, body := e.uploadRaw(e.token, e.ws, "tool.exe", append([]byte("MZ\x90\x00\x03\x00\x00\x00"), make([]byte, 64)...))
	assert.Equal(t, http.StatusUnsupportedMediaType, resp.StatusCode, string(body))
	resp, body = e.uploadRaw(e.token, e.ws, "big.csv", bytes.Repeat([]byte("a,b\n"), 2000))
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, string(body))
	resp, _ = e.uploadRaw(e.token, "not-a-uuid", "a.csv", content)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)

	var count int
	require.NoError(t, e.stack.Deps.Store.Pool.QueryRow(context.Background(), `SELECT count(*) FROM files`).Scan(&count))
	assert.Equal(t, 2, count, "rejected uploads leave no rows")

	assert.Equal(t, 204, e.do("DELETE", "/api/files/"+f.ID, nil, nil))
	assert.Equal(t, 404, e.do("GET", "/api/files/"+f.ID, nil, nil))
}
