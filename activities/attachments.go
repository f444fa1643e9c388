package activities

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	openai "github.com/sashabaranov/go-openai"

	"github.com/sapagent/sapagent/internal/blob"
	"github.com/sapagent/sapagent/internal/store"
)

// What of an attachment the model sees. Text, Markdown and CSV files are inlined up to
// AttachmentTextBytes; images go as image_url parts (data URLs), the newest MaxModelImages of
// at most MaxModelImageBytes each; PDFs (and anything else) as a note naming the file and its
// size. File contents are never logged.
const (
	AttachmentTextBytes = 32 << 10
	MaxModelImages      = 4
	MaxModelImageBytes  = 5 << 20
)

// filePart is a user message's attachment as stored in its parts.
type filePart struct {
	Type        string `json:"type"` // "file"
	FileID      string `json:"file_id"`
	Name        string `json:"name,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	Size        int64  `json:"size"`
	// Deleted: the file was gone when the message was recorded.
	Deleted bool `json:"deleted,omitempty"`
}

// attachmentParts describes a message's attachments as its stored parts (nil without any).
func (a *Activities) attachmentParts(ctx context.Context, workspaceID uuid.UUID, attachments []string) (json.RawMessage, error) {
	if len(attachments) == 0 {
		return nil, nil
	}
	ids := make([]uuid.UUID, len(attachments))
	for i, s := range attachments {
		id, err := uuid.Parse(s)
		if err != nil {
			return nil, badInput("bad attachment id", err)
		}
		ids[i] = id
	}
	files, err := a.Store.WorkspaceFiles(ctx, workspaceID, ids)
	if err != nil {
		return nil, fmt.Errorf("load attachments: %w", err)
	}
	parts := make([]filePart, len(ids))
	for i, id := range ids {
		f, ok := files[id]
		if !ok {
			parts[i] = filePart{Type: "file", FileID: id.String(), Deleted: true}
			continue
		}
		parts[i] = filePart{Type: "file", FileID: id.String(), Name: f.Name, ContentType: f.ContentType, Size: f.Size}
	}
	return json.Marshal(parts)
}

// messageFiles are the file parts of a stored message.
func messageFiles(m store.Message) []filePart {
	if m.Role != "user" || len(m.Parts) < 3 {
		return nil
	}
	var parts []filePart
	if json.Unmarshal(m.Parts, &parts) != nil {
		return nil
	}
	out := parts[:0]
	for _, p := range parts {
		if p.Type == "file" {
			out = append(out, p)
		}
	}
	return out
}

// pendingImage is an image attachment of a user message, sent to the model after the window
// is built.
type pendingImage struct {
	part filePart
	key  string // blob key
	ok   bool   // small enough and of a type models take
}

// inlineAttachments appends the attachments of the window's user messages to their content
// (text inline, a note for the rest), so the window's token budget counts them, and returns
// the images by message seq.
func (a *Activities) inlineAttachments(ctx context.Context, workspaceID uuid.UUID, rows []store.Message) (map[int64][]pendingImage, error) {
	var ids []uuid.UUID
	for _, m := range rows {
		for _, p := range messageFiles(m) {
			if id, err := uuid.Parse(p.FileID); err == nil && !p.Deleted {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	files, err := a.Store.WorkspaceFiles(ctx, workspaceID, ids)
	if err != nil {
		return nil, fmt.Errorf("load attachments: %w", err)
	}
	images := map[int64][]pendingImage{}
	for i := range rows {
		var b strings.Builder
		for _, p := range messageFiles(rows[i]) {
			id, _ := uuid.Parse(p.FileID)
			f, ok := files[id]
			if p.Deleted || !ok {
				fmt.Fprintf(&b, "\n\n[Attached file %q was deleted; its content is not available.]", p.Name)
				continue
			}
			switch {
			case strings.HasPrefix(f.ContentType, "text/"):
				text, err := a.attachmentText(ctx, f)
				if err != nil {
					return nil, err
				}
				fmt.Fprintf(&b, "\n\n[Attached file %q (%s, %d bytes)", f.Name, f.ContentType, f.Size)
				if f.Size > AttachmentTextBytes {
					fmt.Fprintf(&b, "; only its first %d bytes are shown", AttachmentTextBytes)
				}
				fmt.Fprintf(&b, ":]\n%s\n[End of %q]", text, f.Name)
			case strings.HasPrefix(f.ContentType, "image/"):
				fmt.Fprintf(&b, "\n\n[Attached image %q (%s, %d bytes)]", f.Name, f.ContentType, f.Size)
				images[rows[i].Seq] = append(images[rows[i].Seq], pendingImage{part: p, key: f.StorageKey, ok: f.Size <= MaxModelImageBytes})
			default:
				fmt.Fprintf(&b, "\n\n[Attached file %q (%s, %d bytes): its content cannot be shown to you; ask the user to paste the parts you need.]", f.Name, f.ContentType, f.Size)
			}
		}
		rows[i].Content += b.String()
	}
	return images, nil
}

// attachmentText reads the first AttachmentTextBytes of a text file as valid UTF-8.
func (a *Activities) attachmentText(ctx context.Context, f store.File) (string, error) {
	data, err := a.readBlob(ctx, f.StorageKey, AttachmentTextBytes)
	if errors.Is(err, blob.ErrNotFound) {
		return "(the file's content is missing)", nil
	}
	if err != nil {
		return "", err
	}
	// The cut may split a character: drop its leading bytes; a file may not be UTF-8 at all.
	for k := 0; k < 3 && len(data) == AttachmentTextBytes; k++ {
		if r, size := utf8.DecodeLastRune(data); r != utf8.RuneError || size != 1 {
			break
		}
		data = data[:len(data)-1]
	}
	return strings.ToValidUTF8(string(data), "\uFFFD"), nil
}

func (a *Activities) readBlob(ctx context.Context, key string, limit int64) ([]byte, error) {
	if a.Blobs == nil {
		return nil, errors.New("no file storage configured")
	}
	r, err := a.Blobs.Get(ctx, key)
	if err != nil {
		if errors.Is(err, blob.ErrNotFound) {
			return nil, err
		}
		return nil, fmt.Errorf("read attachment: %w", err)
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, limit))
	if err != nil {
		return nil, fmt.Errorf("read attachment: %w", err)
	}
	return data, nil
}

// attachImages turns the window's user messages with images into multi-part content: their
// text, then the newest MaxModelImages images as data URLs; the others get a note instead.
// userSeqs are the seqs of the user rows the window could hold, in order: the window's user
// messages are the last of them.
func (a *Activities) attachImages(ctx context.Context, msgs []openai.ChatCompletionMessage, userSeqs []int64, images map[int64][]pendingImage) error {
	if len(images) == 0 {
		return nil
	}
	var users []int
	for i, m := range msgs {
		if m.Role == openai.ChatMessageRoleUser {
			users = append(users, i)
		}
	}
	if len(users) > len(userSeqs) {
		return nil // cannot happen: every user message comes from a user row
	}
	seqs := userSeqs[len(userSeqs)-len(users):]
	sent := 0
	for j := len(users) - 1; j >= 0; j-- {
		imgs := images[seqs[j]]
		if len(imgs) == 0 {
			continue
		}
		m := &msgs[users[j]]
		var parts []openai.ChatMessagePart
		var notes strings.Builder
		for _, img := range imgs {
			if !img.ok || sent >= MaxModelImages {
				fmt.Fprintf(&notes, "\n[Image %q is not shown to you: only the %d newest images of at most %d bytes are sent.]", img.part.Name, MaxModelImages, MaxModelImageBytes)
				continue
			}
			data, err := a.readBlob(ctx, img.key, MaxModelImageBytes)
			if errors.Is(err, blob.ErrNotFound) {
				fmt.Fprintf(&notes, "\n[Image %q is missing from file storage.]", img.part.Name)
				continue
			}
			if err != nil {
				return err
			}
			sent++
			parts = append(parts, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{
				URL: "data:" + img.part.ContentType + ";base64," + base64.StdEncoding.EncodeToString(data), Detail: openai.ImageURLDetailAuto}})
		}
		text := m.Content + notes.String()
		if len(parts) == 0 {
			m.Content = text
			continue
		}
		m.MultiContent = append([]openai.ChatMessagePart{{Type: openai.ChatMessagePartTypeText, Text: text}}, parts...)
		m.Content = ""
	}
	return nil
}
