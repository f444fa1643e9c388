// Package files answers uploads to a workspace, their metadata, content and deletion.
package files

import (
	"context"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/internal/blob"
	"github.com/sapagent/sapagent/internal/store"
)

// Handler holds what the file routes use.
type Handler struct {
	httpx.Deps
	Files        fileStore
	Blobs        blob.Store
	MaxFileBytes int64
	// WorkspaceStorageBytes caps the bytes of all files of one workspace (0: no cap).
	WorkspaceStorageBytes int64
}

// fileStore is what the file routes read and write.
type fileStore interface {
	CreateFile(ctx context.Context, f store.File, quota int64) (store.File, error)
	WorkspaceStorageUsed(ctx context.Context, workspaceID uuid.UUID) (int64, error)
	GetFileFor(ctx context.Context, id uuid.UUID, user string) (store.File, error)
	DeleteFileFor(ctx context.Context, id uuid.UUID, user string) (store.File, error)
}

// Mount adds the file routes.
func (s *Handler) Mount(a *gin.RouterGroup) {
	a.POST("/files", s.uploadFile)
	a.GET("/files/:id", s.getFile)
	a.GET("/files/:id/content", s.downloadFile)
	a.DELETE("/files/:id", s.deleteFile)
}
