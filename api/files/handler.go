// Package files answers uploads to a workspace, their metadata, content and deletion.
package files

import (
	"log/slog"

	"github.com/gin-gonic/gin"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/internal/blob"
	"github.com/sapagent/sapagent/internal/store"
)

// Handler holds what the file routes use.
type Handler struct {
	Access       httpx.Access
	Store        *store.Store
	Blobs        blob.Store
	Log          *slog.Logger
	MaxFileBytes int64
	// WorkspaceStorageBytes caps the bytes of all files of one workspace (0: no cap).
	WorkspaceStorageBytes int64
}

// Mount adds the file routes.
func (s *Handler) Mount(a *gin.RouterGroup) {
	a.POST("/files", s.uploadFile)
	a.GET("/files/:id", s.getFile)
	a.GET("/files/:id/content", s.downloadFile)
	a.DELETE("/files/:id", s.deleteFile)
}
