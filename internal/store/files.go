package store

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// File is an uploaded file's metadata; the bytes live in blob storage under StorageKey.
type File struct {
	ID          uuid.UUID `json:"id"`
	WorkspaceID uuid.UUID `json:"workspace_id"`
	UploadedBy  string    `json:"uploaded_by"`
	Name        string    `json:"name"`
	ContentType string    `json:"content_type"`
	Size        int64     `json:"size"`
	SHA256      string    `json:"sha256"`
	StorageKey  string    `json:"-"`
	CreatedAt   time.Time `json:"created_at"`
}

const fileColumns = `f.id, f.workspace_id, f.uploaded_by, f.name, f.content_type, f.size_bytes, f.sha256, f.storage_key, f.created_at`

func scanFile(r pgx.Row) (File, error) {
	var f File
	err := r.Scan(&f.ID, &f.WorkspaceID, &f.UploadedBy, &f.Name, &f.ContentType, &f.Size, &f.SHA256, &f.StorageKey, &f.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return f, ErrNotFound
	}
	f.CreatedAt = f.CreatedAt.UTC()
	return f, err
}

// CreateFile records an uploaded file.
func (s *Store) CreateFile(ctx context.Context, f File) (File, error) {
	return scanFile(s.Pool.QueryRow(ctx, `INSERT INTO files AS f (id, workspace_id, uploaded_by, name, content_type, size_bytes, sha256, storage_key)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING `+fileColumns,
		f.ID, f.WorkspaceID, f.UploadedBy, f.Name, f.ContentType, f.Size, f.SHA256, f.StorageKey))
}

var visibleFile = canSee("f.workspace_id")

// GetFileFor loads a file the user may see.
func (s *Store) GetFileFor(ctx context.Context, id uuid.UUID, user string) (File, error) {
	return scanFile(s.Pool.QueryRow(ctx, `SELECT `+fileColumns+` FROM files f WHERE f.id = $1 AND `+visibleFile, id, user))
}

// DeleteFileFor removes a file record the user may see, returning it (to delete its blob).
func (s *Store) DeleteFileFor(ctx context.Context, id uuid.UUID, user string) (File, error) {
	return scanFile(s.Pool.QueryRow(ctx, `DELETE FROM files f WHERE f.id = $1 AND `+visibleFile+` RETURNING `+fileColumns, id, user))
}
