package files

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/internal/blob"
	"github.com/sapagent/sapagent/internal/store"
)

// allowedFileTypes are what agents can read: PDF, images, text and CSV.
var allowedFileTypes = map[string]bool{
	"application/pdf": true, "image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true,
	"text/plain": true, "text/csv": true, "text/markdown": true,
}

// uploadFile takes multipart/form-data with fields workspace_id and file. The type is sniffed
// from the content (never trusted from the client); the sha256 is computed while storing.
func (s *Handler) uploadFile(c *gin.Context) {
	if !strings.HasPrefix(c.ContentType(), "multipart/form-data") {
		httpx.Fail(c, http.StatusUnsupportedMediaType, "unsupported_media_type", "upload with multipart/form-data (fields workspace_id and file)")
		return
	}
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, s.MaxFileBytes+64<<10)
	if err := c.Request.ParseMultipartForm(8 << 20); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			httpx.Fail(c, http.StatusRequestEntityTooLarge, "file_too_large", fmt.Sprintf("files are limited to %d bytes", s.MaxFileBytes))
			return
		}
		httpx.BadRequest(c, "invalid_multipart", "body is not valid multipart/form-data")
		return
	}
	defer c.Request.MultipartForm.RemoveAll() //nolint:errcheck // temp files
	wsID, err := uuid.Parse(c.Request.FormValue("workspace_id"))
	if err != nil {
		httpx.BadRequest(c, "invalid_id", "workspace_id is missing or not a UUID")
		return
	}
	w, ok := s.Access.WorkspaceByID(c, wsID, false)
	if !ok {
		return
	}
	file, header, err := c.Request.FormFile("file")
	if err != nil {
		httpx.BadRequest(c, "missing_field", "file is required")
		return
	}
	defer file.Close()
	if header.Size > s.MaxFileBytes {
		httpx.Fail(c, http.StatusRequestEntityTooLarge, "file_too_large", fmt.Sprintf("files are limited to %d bytes", s.MaxFileBytes))
		return
	}
	name, ok := httpx.RequiredName(c, "file name", path.Base(strings.ReplaceAll(header.Filename, "\\", "/")), 255)
	if !ok {
		return
	}
	head := make([]byte, 512)
	n, _ := io.ReadFull(file, head)
	contentType := sniff(head[:n], name)
	if !allowedFileTypes[contentType] {
		httpx.Fail(c, http.StatusUnsupportedMediaType, "unsupported_file_type",
			"file type "+contentType+" is not accepted; upload PDF, PNG, JPEG, GIF, WebP, text, Markdown or CSV")
		return
	}
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		httpx.Unavailable(c, "file storage")
		return
	}
	// Checked before the bytes are stored (cheap refusal) and again, atomically, with the row.
	if s.WorkspaceStorageBytes > 0 {
		used, err := s.Files.WorkspaceStorageUsed(c.Request.Context(), w.ID)
		if err != nil {
			s.Access.StoreFailed(c, err, "file")
			return
		}
		if used+header.Size > s.WorkspaceStorageBytes {
			s.quotaExceeded(c)
			return
		}
	}
	id := uuid.New()
	key := w.ID.String() + "/" + id.String()
	hash := sha256.New()
	if err := s.Blobs.Put(c.Request.Context(), key, io.TeeReader(file, hash), header.Size, contentType); err != nil {
		s.Log.Error("blob put", "error", err)
		httpx.Unavailable(c, "file storage")
		return
	}
	f, err := s.Files.CreateFile(c.Request.Context(), store.File{
		ID: id, WorkspaceID: w.ID, UploadedBy: httpx.User(c), Name: name, ContentType: contentType,
		Size: header.Size, SHA256: hex.EncodeToString(hash.Sum(nil)), StorageKey: key,
	}, s.WorkspaceStorageBytes)
	if err != nil {
		_ = s.Blobs.Delete(c.Request.Context(), key) // no orphan bytes without a row
		if errors.Is(err, store.ErrQuotaExceeded) {
			s.quotaExceeded(c)
			return
		}
		s.Access.StoreFailed(c, err, "file")
		return
	}
	c.JSON(http.StatusCreated, f)
}

func (s *Handler) quotaExceeded(c *gin.Context) {
	httpx.Fail(c, http.StatusRequestEntityTooLarge, "storage_quota_exceeded",
		fmt.Sprintf("the workspace's files may hold at most %d bytes together; delete files first", s.WorkspaceStorageBytes))
}

// sniff decides the content type from the bytes, refining text by the file extension.
func sniff(head []byte, name string) string {
	ct, _, _ := mime.ParseMediaType(http.DetectContentType(head))
	if ct == "text/plain" {
		switch strings.ToLower(path.Ext(name)) {
		case ".csv":
			return "text/csv"
		case ".md", ".markdown":
			return "text/markdown"
		}
	}
	return ct
}

func (s *Handler) fileFor(c *gin.Context) (store.File, bool) {
	id, ok := httpx.UUIDParam(c, "id", "file")
	if !ok {
		return store.File{}, false
	}
	f, err := s.Files.GetFileFor(c.Request.Context(), id, httpx.User(c))
	if err != nil {
		s.Access.StoreFailed(c, err, "file")
		return f, false
	}
	return f, true
}

func (s *Handler) getFile(c *gin.Context) {
	if f, ok := s.fileFor(c); ok {
		c.JSON(http.StatusOK, f)
	}
}

func (s *Handler) downloadFile(c *gin.Context) {
	f, ok := s.fileFor(c)
	if !ok {
		return
	}
	r, err := s.Blobs.Get(c.Request.Context(), f.StorageKey)
	if errors.Is(err, blob.ErrNotFound) {
		httpx.NotFound(c, "file content")
		return
	}
	if err != nil {
		s.Log.Error("blob get", "error", err)
		httpx.Unavailable(c, "file storage")
		return
	}
	defer r.Close()
	c.Header("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": f.Name}))
	c.Header("ETag", `"`+f.SHA256+`"`)
	c.Header("X-Content-SHA256", f.SHA256)
	c.Header("X-Content-Type-Options", "nosniff")
	c.DataFromReader(http.StatusOK, f.Size, f.ContentType, r, nil)
}

// deleteFile removes a file: its uploader may, and a workspace admin; other members see it
// but may not delete it (403).
func (s *Handler) deleteFile(c *gin.Context) {
	f, ok := s.fileFor(c)
	if !ok {
		return
	}
	if f.UploadedBy != httpx.User(c) {
		w, err := s.Access.Store.WorkspaceAccess(c.Request.Context(), f.WorkspaceID, httpx.User(c))
		if err != nil {
			s.Access.StoreFailed(c, err, "file")
			return
		}
		if w.Role != store.RoleAdmin {
			httpx.Fail(c, http.StatusForbidden, "forbidden", "only the member who uploaded the file or a workspace admin may delete it")
			return
		}
	}
	f, err := s.Files.DeleteFileFor(c.Request.Context(), f.ID, httpx.User(c))
	if err != nil {
		s.Access.StoreFailed(c, err, "file")
		return
	}
	if err := s.Blobs.Delete(c.Request.Context(), f.StorageKey); err != nil {
		s.Log.Warn("blob delete (row already gone)", "key", f.StorageKey, "error", err)
	}
	c.Status(http.StatusNoContent)
}
