package files

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/internal/blob"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/store/storefake"
	"github.com/sapagent/sapagent/internal/store/storetest"
)

// The routes' answers, against the in-memory fakes and (unless -short) against Postgres: the
// same script passing on both is what keeps the fakes honest.
func TestFileRoutes(t *testing.T) {
	t.Run("fake", func(t *testing.T) {
		tenancy := storefake.NewTenancy()
		fileRoutes(t, tenancy, storefake.NewFiles(tenancy), storefake.Access{Tenancy: tenancy})
	})
	t.Run("postgres", func(t *testing.T) {
		if testing.Short() {
			t.Skip("needs Postgres")
		}
		st, _ := storetest.New(t)
		fileRoutes(t, st.Tenancy, st.Files, st)
	})
}

// tenancySetup is what the test sets its workspace up with.
type tenancySetup interface {
	CreateOrg(ctx context.Context, name, user string) (store.Org, error)
	SetOrgMember(ctx context.Context, orgID uuid.UUID, user, role string) (store.Member, []uuid.UUID, error)
	CreateWorkspace(ctx context.Context, orgID uuid.UUID, name, user string) (store.Workspace, error)
	SetWorkspaceMember(ctx context.Context, id uuid.UUID, user, role, actor string) (store.Member, error)
}

type caller struct {
	t *testing.T
	r *gin.Engine
}

// upload posts a file as user to the workspace.
func (c caller) upload(user, workspace, name string, content []byte) (int, map[string]any) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	require.NoError(c.t, mw.WriteField("workspace_id", workspace))
	if name != "" {
		fw, err := mw.CreateFormFile("file", name)
		require.NoError(c.t, err)
		_, _ = fw.Write(content)
	}
	require.NoError(c.t, mw.Close())
	req := httptest.NewRequest("POST", "/api/files", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return c.send(user, req)
}

func (c caller) do(user, method, path string) (int, map[string]any) {
	return c.send(user, httptest.NewRequest(method, path, nil))
}

func (c caller) send(user string, req *http.Request) (int, map[string]any) {
	c.t.Helper()
	req.Header.Set("X-User", user)
	w := httptest.NewRecorder()
	c.r.ServeHTTP(w, req)
	var out map[string]any
	if w.Body.Len() > 0 && w.Header().Get("Content-Type") == "application/json; charset=utf-8" {
		require.NoError(c.t, json.Unmarshal(w.Body.Bytes(), &out), w.Body.String())
	}
	return w.Code, out
}

// failed asserts an answer in the API's error shape.
func failed(t *testing.T, status int, code, message string) func(int, map[string]any) {
	return func(got int, out map[string]any) {
		t.Helper()
		require.Equal(t, status, got, "%v", out)
		require.Equal(t, map[string]any{"error": message, "code": code}, out)
	}
}

func fileRoutes(t *testing.T, tenancy tenancySetup, files fileStore, access httpx.AccessStore) {
	ctx := context.Background()
	org, err := tenancy.CreateOrg(ctx, "Acme", "alice")
	require.NoError(t, err)
	ws, err := tenancy.CreateWorkspace(ctx, org.ID, "Finance", "alice")
	require.NoError(t, err)
	for _, user := range []string{"bob", "mallory"} {
		_, _, err = tenancy.SetOrgMember(ctx, org.ID, user, store.RoleMember)
		require.NoError(t, err)
	}
	_, err = tenancy.SetWorkspaceMember(ctx, ws.ID, "bob", store.RoleMember, "alice")
	require.NoError(t, err)

	blobs, err := blob.NewFS(t.TempDir())
	require.NoError(t, err)
	log := slog.New(slog.DiscardHandler)
	h := &Handler{Deps: httpx.Deps{Access: httpx.Access{Store: access, Log: log}, Log: log}, Files: files, Blobs: blobs,
		MaxFileBytes: 1 << 20, WorkspaceStorageBytes: 100}
	gin.SetMode(gin.TestMode)
	r := gin.New()
	h.Mount(r.Group("/api", func(c *gin.Context) { httpx.SetCaller(c, c.GetHeader("X-User"), time.Now().Add(time.Hour)) }))
	c := caller{t, r}
	wsID := ws.ID.String()

	// Validation and access answer in the error shape; nothing is stored.
	failed(t, 400, "invalid_id", "workspace_id is missing or not a UUID")(c.upload("bob", "nope", "a.txt", []byte("hello")))
	failed(t, 400, "missing_field", "file is required")(c.upload("bob", wsID, "", nil))
	failed(t, 403, "forbidden", "you are not a member of this workspace")(c.upload("mallory", wsID, "a.txt", []byte("hello")))
	failed(t, 404, "not_found", "workspace not found")(c.upload("bob", uuid.NewString(), "a.txt", []byte("hello")))
	failed(t, 415, "unsupported_file_type",
		"file type application/octet-stream is not accepted; upload PDF, PNG, JPEG, GIF, WebP, text, Markdown or CSV")(
		c.upload("bob", wsID, "a.bin", []byte{0, 1, 2, 3}))
	failed(t, 400, "invalid_id", "file id is not a UUID")(c.do("bob", "GET", "/api/files/nope"))

	// Bob uploads; members see the file, others do not learn it exists.
	status, f := c.upload("bob", wsID, "notes.md", []byte("# hello\n"))
	require.Equal(t, 201, status, "%v", f)
	require.Equal(t, "notes.md", f["name"])
	require.Equal(t, "text/markdown", f["content_type"])
	require.EqualValues(t, 8, f["size"])
	require.Equal(t, "bob", f["uploaded_by"])
	filePath := "/api/files/" + f["id"].(string)
	status, got := c.do("alice", "GET", filePath)
	require.Equal(t, 200, status)
	require.Equal(t, f, got)
	failed(t, 404, "not_found", "file not found")(c.do("mallory", "GET", filePath))

	// The workspace's quota (100 bytes) holds the files together.
	failed(t, 413, "storage_quota_exceeded", "the workspace's files may hold at most 100 bytes together; delete files first")(
		c.upload("bob", wsID, "big.txt", bytes.Repeat([]byte("x"), 93)))

	// Only the uploader or a workspace admin deletes; then the file is gone.
	_, mine := c.upload("alice", wsID, "alice.txt", []byte("mine"))
	failed(t, 403, "forbidden", "only the member who uploaded the file or a workspace admin may delete it")(
		c.do("bob", "DELETE", "/api/files/"+mine["id"].(string)))
	status, _ = c.do("alice", "DELETE", filePath)
	require.Equal(t, 204, status)
	failed(t, 404, "not_found", "file not found")(c.do("bob", "GET", filePath))
	status, _ = c.upload("bob", wsID, "big.txt", bytes.Repeat([]byte("x"), 93))
	require.Equal(t, 201, status)
}
