package api

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// schemas/openapi.json is what the page's types and the lint (make lint-web) read: it must be
// the document the API serves.
func TestOpenAPIFileIsUpToDate(t *testing.T) {
	want, err := OpenAPIJSON()
	require.NoError(t, err)
	got, err := os.ReadFile("../schemas/openapi.json")
	require.NoError(t, err, "run make generate")
	assert.Equal(t, string(want), string(got), "schemas/openapi.json is stale: run make generate and commit it")
}
