package storefake

import (
	"context"
	"sync"

	"github.com/google/uuid"

	"github.com/sapagent/sapagent/internal/store"
)

// Files is store.Files in memory: a file is visible to whoever may see its workspace in the
// Tenancy it is given, as in Postgres.
type Files struct {
	tenancy *Tenancy
	mu      sync.Mutex
	files   map[uuid.UUID]store.File
}

// NewFiles returns no files over the workspaces of t.
func NewFiles(t *Tenancy) *Files {
	return &Files{tenancy: t, files: map[uuid.UUID]store.File{}}
}

// CreateFile records a file unless the workspace's files would then hold more than quota bytes
// (store.ErrQuotaExceeded; quota <= 0: no cap).
func (s *Files) CreateFile(_ context.Context, f store.File, quota int64) (store.File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if quota > 0 && s.used(f.WorkspaceID)+f.Size > quota {
		return store.File{}, store.ErrQuotaExceeded
	}
	s.tenancy.mu.Lock()
	f.CreatedAt = s.tenancy.tick()
	s.tenancy.mu.Unlock()
	s.files[f.ID] = f
	return f, nil
}

func (s *Files) used(workspaceID uuid.UUID) int64 {
	var n int64
	for _, f := range s.files {
		if f.WorkspaceID == workspaceID {
			n += f.Size
		}
	}
	return n
}

// WorkspaceStorageUsed is the bytes of all files of a workspace.
func (s *Files) WorkspaceStorageUsed(_ context.Context, workspaceID uuid.UUID) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used(workspaceID), nil
}

// GetFileFor loads a file the user may see (store.ErrNotFound otherwise).
func (s *Files) GetFileFor(_ context.Context, id uuid.UUID, user string) (store.File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.files[id]
	if !ok || !s.visible(f, user) {
		return store.File{}, store.ErrNotFound
	}
	return f, nil
}

// DeleteFileFor removes a file the user may see, returning it (store.ErrNotFound otherwise).
func (s *Files) DeleteFileFor(ctx context.Context, id uuid.UUID, user string) (store.File, error) {
	f, err := s.GetFileFor(ctx, id, user)
	if err == nil {
		s.mu.Lock()
		delete(s.files, id)
		s.mu.Unlock()
	}
	return f, err
}

func (s *Files) visible(f store.File, user string) bool {
	s.tenancy.mu.Lock()
	defer s.tenancy.mu.Unlock()
	w, ok := s.tenancy.live(f.WorkspaceID)
	return ok && s.tenancy.roleIn(w, user) != ""
}
