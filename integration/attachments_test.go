package integration

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/config"
	"github.com/sapagent/sapagent/internal/devstack"
	"github.com/sapagent/sapagent/internal/offlinellm"
)

// modelRecorder is an offline model that keeps every chat request it answers.
type modelRecorder struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (m *modelRecorder) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			m.mu.Lock()
			m.bodies = append(m.bodies, body)
			m.mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// lastUserContent is the content of the last user message of the last request whose last user
// message mentions marker: a string or an array of parts.
func (m *modelRecorder) lastUserContent(marker string) json.RawMessage {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.bodies) - 1; i >= 0; i-- {
		var req struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if json.Unmarshal(m.bodies[i], &req) != nil {
			continue
		}
		for j := len(req.Messages) - 1; j >= 0; j-- {
			if req.Messages[j].Role == "user" {
				if bytes.Contains(req.Messages[j].Content, []byte(marker)) {
					return req.Messages[j].Content
				}
				break
			}
		}
	}
	return nil
}

// A message's attachments are checked by the API, stored as file parts of the user message,
// and reach the model: text inline, the image as a data URL, the PDF as a note.
func TestMessageAttachmentsReachTheModel(t *testing.T) {
	t.Parallel()
	rec := &modelRecorder{}
	model := httptest.NewServer(rec.handler(offlinellm.New(offlinellm.Options{Rules: []offlinellm.Rule{
		{Name: "read", Match: `(?s)^what do the files say\?.*(MARKER-\d+)`, Reply: "The notes mention $1."},
	}}).Handler()))
	t.Cleanup(model.Close)
	e := startEnv(t, func(c *config.Config, _ *devstack.Options) {
		c.Providers = append(c.Providers, config.Provider{Name: "rec", BaseURL: model.URL + "/v1", APIKey: "x", ContextTokens: 32000})
	})

	var pic bytes.Buffer
	require.NoError(t, png.Encode(&pic, image.NewRGBA(image.Rect(0, 0, 2, 2))))
	notes := e.upload(e.token, e.ws, "notes.txt", []byte("budget notes: MARKER-4711\n"))
	img := e.upload(e.token, e.ws, "pic.png", pic.Bytes())
	pdf := e.upload(e.token, e.ws, "spec.pdf", []byte("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"))
	require.Equal(t, "image/png", img.ContentType)
	require.Equal(t, "application/pdf", pdf.ContentType)

	a := e.createAgent("Files")
	require.Equal(t, http.StatusOK, e.do("PATCH", "/api/agents/"+a.ID, map[string]any{"model": "rec:sapagent-offline"}, nil))

	// Refused before the conversation sees the message.
	var apiErr struct{ Error, Code string }
	for _, bad := range [][]string{{"not-a-uuid"}, {"00000000-0000-0000-0000-000000000001"}, {notes.ID, notes.ID}} {
		require.Equal(t, http.StatusBadRequest, e.do("POST", "/api/agents/"+a.ID+"/message", map[string]any{"content": "hi", "attachments": bad}, &apiErr))
		assert.Equal(t, "invalid_attachment", apiErr.Code)
		assert.NotEmpty(t, apiErr.Error)
	}
	bob := e.tokenFor("bob") // not a member: the agent itself is hidden
	require.Equal(t, http.StatusNotFound, e.doAs(bob, "POST", "/api/agents/"+a.ID+"/message", map[string]any{"content": "hi", "attachments": []string{notes.ID}}, nil))

	require.Equal(t, http.StatusAccepted, e.do("POST", "/api/agents/"+a.ID+"/message",
		map[string]any{"content": "what do the files say?", "attachments": []string{notes.ID, img.ID, pdf.ID}}, nil))
	var reply string
	require.Eventually(t, func() bool {
		for _, m := range e.messages(a.ID) {
			if m.Role == "assistant" && m.Status == "complete" {
				reply = m.Content
				return true
			}
		}
		return false
	}, 30*time.Second, 100*time.Millisecond)
	assert.Equal(t, "The notes mention MARKER-4711.", reply)

	// Replayed by package workflows: a message with attachments (recorded with UPDATE_HISTORIES=1).
	recordHistory(t, e.stack.Deps.Temporal, e.stack.Deps.Codec, "agent/"+a.ID, "", "conversation_attachments_v1")

	// The stored user message carries the files as parts.
	var list struct {
		Data []struct {
			Role    string           `json:"role"`
			Content string           `json:"content"`
			Parts   []map[string]any `json:"parts"`
		} `json:"data"`
	}
	require.Equal(t, http.StatusOK, e.do("GET", "/api/agents/"+a.ID+"/messages", nil, &list))
	require.Equal(t, "user", list.Data[0].Role)
	assert.Equal(t, "what do the files say?", list.Data[0].Content, "the stored content is what the user wrote")
	assert.Equal(t, []map[string]any{
		{"type": "file", "file_id": notes.ID, "name": "notes.txt", "content_type": "text/plain", "size": float64(notes.Size)},
		{"type": "file", "file_id": img.ID, "name": "pic.png", "content_type": "image/png", "size": float64(img.Size)},
		{"type": "file", "file_id": pdf.ID, "name": "spec.pdf", "content_type": "application/pdf", "size": float64(pdf.Size)},
	}, list.Data[0].Parts)

	// The model got the text inline, the image as a data URL and a note for the PDF.
	raw := rec.lastUserContent("MARKER-4711") // not the title request, which sees the text only
	require.NotNil(t, raw)
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	require.NoError(t, json.Unmarshal(raw, &parts), string(raw))
	require.Len(t, parts, 2)
	assert.Equal(t, "text", parts[0].Type)
	assert.Contains(t, parts[0].Text, "budget notes: MARKER-4711")
	assert.Contains(t, parts[0].Text, `[Attached image "pic.png" (image/png,`)
	assert.Contains(t, parts[0].Text, `[Attached file "spec.pdf" (application/pdf,`)
	assert.Equal(t, "image_url", parts[1].Type)
	assert.True(t, strings.HasPrefix(parts[1].ImageURL.URL, "data:image/png;base64,"), parts[1].ImageURL.URL[:min(40, len(parts[1].ImageURL.URL))])
}
