package llm

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/offlinellm"
)

func TestEmbedderReturnsOneVectorPerTextInOrder(t *testing.T) {
	srv := httptest.NewServer(offlinellm.New(offlinellm.Options{APIKey: "k"}).Handler())
	defer srv.Close()
	r := NewRegistry(Provider{Name: "offline", BaseURL: srv.URL + "/v1", APIKey: "k"})
	e, err := r.Embedder("offline:sapagent-offline")
	require.NoError(t, err)
	texts := []string{"VBAK sales document header", "MARA general material data", "BAPI_PO_CREATE1"}
	vecs, err := e.Embed(context.Background(), texts)
	require.NoError(t, err)
	require.Len(t, vecs, 3)
	for i, text := range texts {
		assert.InDeltaSlice(t, offlinellm.Embed(text), vecs[i], 1e-6, text)
	}
	none, err := e.Embed(context.Background(), nil)
	require.NoError(t, err)
	assert.Nil(t, none)

	bad := NewRegistry(Provider{Name: "offline", BaseURL: srv.URL + "/v1", APIKey: "wrong"})
	e, err = bad.Embedder("offline:sapagent-offline")
	require.NoError(t, err)
	_, err = e.Embed(context.Background(), texts)
	assert.Error(t, err)
	_, err = r.Embedder("unknown:model")
	assert.Error(t, err)
}
