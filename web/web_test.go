package web

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func get(t *testing.T, h http.Handler, method, target string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec
}

func TestABuiltPageIsServedWithItsCachingAndPolicy(t *testing.T) {
	h := New(fstest.MapFS{
		"index.html":           {Data: []byte("<!doctype html><div id=root></div>")},
		"assets/app-3f9a2c.js": {Data: []byte("console.log(1)")},
		"favicon.svg":          {Data: []byte("<svg/>")},
	}, Options{ConnectSrc: []string{"https://login.example.com"}})

	index := get(t, h, "GET", "/")
	require.Equal(t, http.StatusOK, index.Code)
	assert.Contains(t, index.Body.String(), "id=root")
	assert.Equal(t, "no-cache", index.Header().Get("Cache-Control"), "index.html is revalidated: a new build shows at once")
	csp := index.Header().Get("Content-Security-Policy")
	assert.Contains(t, csp, "script-src 'self'")
	assert.NotContains(t, csp, "unsafe-eval")
	assert.NotContains(t, strings.SplitN(strings.Split(csp, "script-src")[1], ";", 2)[0], "unsafe-inline", "no inline script")
	assert.Contains(t, csp, "connect-src 'self' ws: wss: https://login.example.com")
	assert.Contains(t, csp, "frame-ancestors 'none'")
	assert.Equal(t, "nosniff", index.Header().Get("X-Content-Type-Options"))

	asset := get(t, h, "GET", "/assets/app-3f9a2c.js")
	require.Equal(t, http.StatusOK, asset.Code)
	assert.Equal(t, "public, max-age=31536000, immutable", asset.Header().Get("Cache-Control"))
	assert.Contains(t, asset.Header().Get("Content-Type"), "javascript")

	assert.Equal(t, "no-cache", get(t, h, "GET", "/favicon.svg").Header().Get("Cache-Control"))

	// Routes of the single-page app get index.html; missing files do not.
	route := get(t, h, "GET", "/w/123/agents/456")
	assert.Equal(t, http.StatusOK, route.Code)
	assert.Contains(t, route.Body.String(), "id=root")
	assert.Equal(t, http.StatusNotFound, get(t, h, "GET", "/assets/old-1234.js").Code)
	assert.Equal(t, http.StatusNotFound, get(t, h, "GET", "/robots.txt").Code)
	assert.Equal(t, http.StatusOK, get(t, h, "GET", "/../../etc/passwd").Code, "paths are cleaned: never outside the page")
	assert.NotContains(t, get(t, h, "GET", "/../../etc/passwd").Body.String(), "root:")
	assert.Equal(t, http.StatusMethodNotAllowed, get(t, h, "POST", "/").Code)
}

func TestWithoutABuildThePageSaysSo(t *testing.T) {
	h := New(fstest.MapFS{}, Options{})
	rec := get(t, h, "GET", "/")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Body.String(), "built without the web chat")
	assert.Equal(t, "no-cache", rec.Header().Get("Cache-Control"))
	assert.NotEmpty(t, rec.Header().Get("Content-Security-Policy"))
	// Even a file-looking path gets the explanation rather than a bare 404.
	assert.Contains(t, get(t, h, "GET", "/w/1").Body.String(), "built without the web chat")
}

func TestTheEmbeddedPageServes(t *testing.T) {
	rec := get(t, Embedded(Options{}), "GET", "/")
	assert.Equal(t, http.StatusOK, rec.Code)
	if !Built() {
		assert.Contains(t, rec.Body.String(), "built without the web chat")
	}
}

// Text assets go out gzip-compressed to clients that accept it, and plain to those that don't.
func TestAssetsAreCompressedForClientsThatAcceptGzip(t *testing.T) {
	js := strings.Repeat("export const answer = 42;\n", 200)
	h := New(fstest.MapFS{
		"index.html":           {Data: []byte("<!doctype html><div id=root></div>")},
		"assets/app-3f9a2c.js": {Data: []byte(js)},
	}, Options{})

	req := httptest.NewRequest("GET", "/assets/app-3f9a2c.js", nil)
	req.Header.Set("Accept-Encoding", "gzip, deflate, br")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "gzip", rec.Header().Get("Content-Encoding"))
	assert.Equal(t, "Accept-Encoding", rec.Header().Get("Vary"))
	assert.Contains(t, rec.Header().Get("Content-Type"), "javascript")
	assert.Less(t, rec.Body.Len(), len(js)/5)
	zr, err := gzip.NewReader(rec.Body)
	require.NoError(t, err)
	plain, err := io.ReadAll(zr)
	require.NoError(t, err)
	assert.Equal(t, js, string(plain))

	refused := httptest.NewRequest("GET", "/assets/app-3f9a2c.js", nil)
	refused.Header.Set("Accept-Encoding", "gzip;q=0")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, refused)
	assert.Empty(t, rec.Header().Get("Content-Encoding"))
	assert.Equal(t, js, rec.Body.String())
	assert.Equal(t, js, get(t, h, "GET", "/assets/app-3f9a2c.js").Body.String(), "no Accept-Encoding: plain")
}
