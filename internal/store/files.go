package store

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Files is the file aggregate: uploads' metadata and each workspace's storage use.
type Files struct{ pool *pgxpool.Pool }

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

// ErrQuotaExceeded means a workspace's files would exceed its storage quota.
var ErrQuotaExceeded = errors.New("workspace storage quota exceeded")

// CreateFile records an uploaded file, unless the workspace's files would then hold more than
// quota bytes (ErrQuotaExceeded; quota <= 0: no cap). Uploads to one workspace are serialised
// by an advisory lock, so parallel uploads cannot together pass the quota.
func (s *Files) CreateFile(ctx context.Context, f File, quota int64) (File, error) {
	var out File
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if quota > 0 {
			var used int64
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('files:' || $1::text, 0))`, f.WorkspaceID); err != nil {
				return err
			}
			if err := tx.QueryRow(ctx, `SELECT coalesce(sum(size_bytes), 0) FROM files WHERE workspace_id = $1`, f.WorkspaceID).Scan(&used); err != nil {
				return err
			}
			if used+f.Size > quota {
				return ErrQuotaExceeded
			}
		}
		var err error
		out, err = scanFile(tx.QueryRow(ctx, `INSERT INTO files AS f (id, workspace_id, uploaded_by, name, content_type, size_bytes, sha256, storage_key)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING `+fileColumns,
			f.ID, f.WorkspaceID, f.UploadedBy, f.Name, f.ContentType, f.Size, f.SHA256, f.StorageKey))
		return err
	})
	return out, err
}

// WorkspaceStorageUsed is the bytes of all files of a workspace.
func (s *Files) WorkspaceStorageUsed(ctx context.Context, workspaceID uuid.UUID) (int64, error) {
	var used int64
	err := s.pool.QueryRow(ctx, `SELECT coalesce(sum(size_bytes), 0) FROM files WHERE workspace_id = $1`, workspaceID).Scan(&used)
	return used, err
}

var visibleFile = canSee("f.workspace_id")

// GetFileFor loads a file the user may see.
func (s *Files) GetFileFor(ctx context.Context, id uuid.UUID, user string) (File, error) {
	return scanFile(s.pool.QueryRow(ctx, `SELECT `+fileColumns+` FROM files f WHERE f.id = $1 AND `+visibleFile, id, user))
}

// DeleteFileFor removes a file record the user may see, returning it (to delete its blob).
func (s *Files) DeleteFileFor(ctx context.Context, id uuid.UUID, user string) (File, error) {
	return scanFile(s.pool.QueryRow(ctx, `DELETE FROM files f WHERE f.id = $1 AND `+visibleFile+` RETURNING `+fileColumns, id, user))
}

// WorkspaceFilesFor loads the files among ids that belong to the workspace and that the user may
// see (message attachments); a file that is missing, elsewhere or hidden is absent from the map.
func (s *Files) WorkspaceFilesFor(ctx context.Context, workspaceID uuid.UUID, ids []uuid.UUID, user string) (map[uuid.UUID]File, error) {
	return s.collectFiles(ctx, `SELECT `+fileColumns+` FROM files f WHERE f.id = ANY($1) AND f.workspace_id = $3 AND `+visibleFile, ids, user, workspaceID)
}

// WorkspaceFiles loads the files among ids that belong to the workspace (the worker reading a
// message's attachments; the API checked the sender's access when the message was sent).
func (s *Files) WorkspaceFiles(ctx context.Context, workspaceID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]File, error) {
	return s.collectFiles(ctx, `SELECT `+fileColumns+` FROM files f WHERE f.id = ANY($1) AND f.workspace_id = $2`, ids, workspaceID)
}

func (s *Files) collectFiles(ctx context.Context, query string, args ...any) (map[uuid.UUID]File, error) {
	out := map[uuid.UUID]File{}
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		f, err := scanFile(rows)
		if err != nil {
			return nil, err
		}
		out[f.ID] = f
	}
	return out, rows.Err()
}
