package files

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/api/httpx/httpxtest"
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

// upload posts a file as user to the workspace (no file when name is "").
func upload(c httpxtest.Client, t *testing.T, user, workspace, name string, content []byte) (int, map[string]any) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	require.NoError(t, mw.WriteField("workspace_id", workspace))
	if name != "" {
		fw, err := mw.CreateFormFile("file", name)
		require.NoError(t, err)
		_, _ = fw.Write(content)
	}
	require.NoError(t, mw.Close())
	req := httptest.NewRequest("POST", "/api/files", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return c.Send(user, req)
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
	h := &Handler{Deps: httpxtest.Deps(access), Files: files, Blobs: blobs, MaxFileBytes: 1 << 20, WorkspaceStorageBytes: 100}
	c := httpxtest.New(t, h.Mount)
	failed := func(status int, code, message string) func(int, map[string]any) {
		return httpxtest.Failed(t, status, code, message)
	}
	wsID := ws.ID.String()

	// Validation and access answer in the error shape; nothing is stored.
	failed(400, "invalid_id", "workspace_id is missing or not a UUID")(upload(c, t, "bob", "nope", "a.txt", []byte("hello")))
	failed(400, "missing_field", "file is required")(upload(c, t, "bob", wsID, "", nil))
	failed(403, "forbidden", "you are not a member of this workspace")(upload(c, t, "mallory", wsID, "a.txt", []byte("hello")))
	failed(404, "not_found", "workspace not found")(upload(c, t, "bob", uuid.NewString(), "a.txt", []byte("hello")))
	failed(415, "unsupported_file_type",
		"file type application/octet-stream is not accepted; upload PDF, PNG, JPEG, GIF, WebP, text, Markdown or CSV")(
		upload(c, t, "bob", wsID, "a.bin", []byte{0, 1, 2, 3}))
	failed(400, "invalid_id", "file id is not a UUID")(c.Do("bob", "GET", "/api/files/nope", ""))

	// Bob uploads; members see the file, others do not learn it exists.
	status, f := upload(c, t, "bob", wsID, "notes.md", []byte("# hello\n"))
	require.Equal(t, 201, status, "%v", f)
	require.Equal(t, "notes.md", f["name"])
	require.Equal(t, "text/markdown", f["content_type"])
	require.EqualValues(t, 8, f["size"])
	require.Equal(t, "bob", f["uploaded_by"])
	filePath := "/api/files/" + f["id"].(string)
	status, got := c.Do("alice", "GET", filePath, "")
	require.Equal(t, 200, status)
	require.Equal(t, f, got)
	failed(404, "not_found", "file not found")(c.Do("mallory", "GET", filePath, ""))

	// The workspace's quota (100 bytes) holds the files together.
	failed(413, "storage_quota_exceeded", "the workspace's files may hold at most 100 bytes together; delete files first")(
		upload(c, t, "bob", wsID, "big.txt", bytes.Repeat([]byte("x"), 93)))

	// Only the uploader or a workspace admin deletes; then the file is gone.
	_, mine := upload(c, t, "alice", wsID, "alice.txt", []byte("mine"))
	failed(403, "forbidden", "only the member who uploaded the file or a workspace admin may delete it")(
		c.Do("bob", "DELETE", "/api/files/"+mine["id"].(string), ""))
	status, _ = c.Do("alice", "DELETE", filePath, "")
	require.Equal(t, 204, status)
	failed(404, "not_found", "file not found")(c.Do("bob", "GET", filePath, ""))
	status, _ = upload(c, t, "bob", wsID, "big.txt", bytes.Repeat([]byte("x"), 93))
	require.Equal(t, 201, status)
}
