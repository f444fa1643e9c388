package sapindex_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sapagent/sapagent/internal/sapindex"
)

func names(res sapindex.Result) []string {
	out := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		out[i] = h.Name
	}
	return out
}

func TestSearchKeyword(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.fullBuild(t, customObjects, catalogObjects)
	search := func(q sapindex.Query) sapindex.Result {
		q.WorkspaceID = f.ws
		if q.Mode == "" {
			q.Mode = sapindex.SearchKeyword
		}
		res, err := sapindex.Search(ctx, f.st.Pool, q, nil)
		require.NoError(t, err)
		return res
	}

	res := search(sapindex.Query{Text: "vbak"})
	require.NotEmpty(t, res.Hits)
	assert.Equal(t, "VBAK", res.Hits[0].Name)
	assert.Equal(t, "exact", res.Hits[0].Match)
	assert.Equal(t, "table", res.Hits[0].Category)
	assert.Equal(t, "notToBeReleased", res.Hits[0].ReleaseState)
	assert.Equal(t, f.conn, res.Hits[0].ConnectionID)
	assert.Empty(t, res.Hits[0].Body, "no body without detail")

	res = search(sapindex.Query{Text: "BAPI_SALES*"})
	assert.ElementsMatch(t, []string{"BAPI_SALESORDER_GETLIST", "BAPI_SALESORDER_CREATEFROMDAT2"}, names(res))

	res = search(sapindex.Query{Text: "Z*ORDER*"})
	assert.Equal(t, []string{"ZI_SALESORDER"}, names(res))

	res = search(sapindex.Query{Text: "BAPI_SALESORDER"})
	assert.Subset(t, names(res), []string{"BAPI_SALESORDER_GETLIST", "BAPI_SALESORDER_CREATEFROMDAT2"}, "a name without * is also a prefix")

	res = search(sapindex.Query{Text: "BAPI_SALESORDR_GETLIST"}) // a typo
	require.NotEmpty(t, res.Hits)
	assert.Equal(t, "BAPI_SALESORDER_GETLIST", res.Hits[0].Name)
	assert.Equal(t, "fuzzy", res.Hits[0].Match)

	res = search(sapindex.Query{Text: "accounting document header", Detail: true})
	require.NotEmpty(t, res.Hits)
	assert.Equal(t, "BKPF", res.Hits[0].Name)
	assert.Contains(t, res.Hits[0].Body, "release state notToBeReleased")

	res = search(sapindex.Query{Text: "purchase order", Category: "bapi"})
	require.NotEmpty(t, res.Hits)
	assert.Equal(t, "BAPI_PO_CREATE1", res.Hits[0].Name)
	for _, h := range res.Hits {
		assert.Equal(t, "bapi", h.Category, h.Name)
	}

	custom := true
	res = search(sapindex.Query{Text: "sales", Custom: &custom})
	require.NotEmpty(t, res.Hits)
	for _, h := range res.Hits {
		assert.True(t, h.Custom, h.Name)
	}

	res = search(sapindex.Query{Text: "which table has the customer master data"})
	assert.Contains(t, names(res), "KNA1", "any-word matches answer a question")

	res = search(sapindex.Query{Text: "hybrid without embedder", Mode: sapindex.SearchHybrid})
	assert.Equal(t, sapindex.SearchKeyword, res.Mode)
	assert.Contains(t, res.Note, "keyword search only")

	res = search(sapindex.Query{Text: "x' OR 1=1; --"})
	assert.Empty(t, res.Hits, "query text is data, never SQL")

	_, err := sapindex.Search(ctx, f.st.Pool, sapindex.Query{WorkspaceID: f.ws, Text: "VBAK", Mode: "fuzzy"}, nil)
	assert.ErrorContains(t, err, "unknown mode")
}

func TestSearchSemanticAndHybrid(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.fullBuild(t, customObjects, catalogObjects)
	search := func(text, mode string) sapindex.Result {
		res, err := sapindex.Search(ctx, f.st.Pool, sapindex.Query{WorkspaceID: f.ws, Text: text, Mode: mode, Limit: 5}, offlineEmbedder{})
		require.NoError(t, err)
		assert.Equal(t, mode, res.Mode)
		return res
	}
	// No word of the question is in the answer's name, and "bonuses" is not a full-text match of "bonus"
	// in every form: the embedding's character trigrams still find it.
	res := search("how are customer bonuses calculated", sapindex.SearchSemantic)
	require.NotEmpty(t, res.Hits)
	assert.Equal(t, "Z_CALC_BONUS", res.Hits[0].Name)
	assert.Equal(t, "semantic", res.Hits[0].Match)

	res = search("create a purchase order", sapindex.SearchSemantic)
	require.NotEmpty(t, res.Hits)
	assert.Contains(t, names(res)[:2], "BAPI_PO_CREATE1")

	res = search("VBAK", sapindex.SearchHybrid)
	require.NotEmpty(t, res.Hits)
	assert.Equal(t, "VBAK", res.Hits[0].Name, "an exact name stays first in hybrid")

	res = search("sales order items", sapindex.SearchHybrid)
	require.NotEmpty(t, res.Hits)
	assert.Contains(t, names(res), "VBAP")
}

func TestSearchIsScopedToTheWorkspace(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.fullBuild(t, customObjects, catalogObjects)

	// Another workspace of another org, with its own index holding a unique object.
	otherAgent := storeAgent(t, f)
	g := fixture{st: f.st, x: f.x, ws: otherAgent}
	g.conn = g.addConnection(t, g.ws, "theirs")
	g.fullBuild(t, []map[string]any{obj("TABL", "ZSECRET_SALARIES", "Salaries of the board", "ZHR")}, catalogObjects)

	for _, mode := range []string{sapindex.SearchKeyword, sapindex.SearchHybrid, sapindex.SearchSemantic} {
		for _, text := range []string{"ZSECRET_SALARIES", "ZSECRET*", "salaries of the board"} {
			res, err := sapindex.Search(ctx, f.st.Pool, sapindex.Query{WorkspaceID: f.ws, Text: text, Mode: mode}, offlineEmbedder{})
			require.NoError(t, err)
			assert.NotContains(t, names(res), "ZSECRET_SALARIES", "%s %q", mode, text)
			for _, h := range res.Hits {
				assert.Equal(t, f.conn, h.ConnectionID)
			}
		}
	}
	res, err := sapindex.Search(ctx, f.st.Pool, sapindex.Query{WorkspaceID: g.ws, Text: "ZSECRET_SALARIES"}, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"ZSECRET_SALARIES"}, names(res), "the owner finds it")

	// Naming the other workspace's connection is an error, not a leak.
	_, err = sapindex.Search(ctx, f.st.Pool, sapindex.Query{WorkspaceID: f.ws, ConnectionIDs: []uuid.UUID{g.conn}, Text: "ZSECRET_SALARIES"}, nil)
	assert.ErrorContains(t, err, "not in this workspace")

	// A connection without an index is reported, not silently empty.
	fresh := f.addConnection(t, f.ws, "fresh")
	res, err = sapindex.Search(ctx, f.st.Pool, sapindex.Query{WorkspaceID: f.ws, ConnectionIDs: []uuid.UUID{fresh}, Text: "VBAK"}, nil)
	require.NoError(t, err)
	assert.Empty(t, res.Hits)
	assert.Equal(t, []uuid.UUID{fresh}, res.NotIndexed)
}

func storeAgent(t *testing.T, f fixture) uuid.UUID {
	org, err := f.st.CreateOrg(context.Background(), "Other", "mallory")
	require.NoError(t, err)
	ws, err := f.st.CreateWorkspace(context.Background(), org.ID, "Theirs", "mallory")
	require.NoError(t, err)
	return ws.ID
}
