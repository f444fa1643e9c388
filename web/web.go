// Package web serves the web chat: a single-page application whose sources live in web/
// (React + TypeScript, built by npm into web/dist) and whose built files are embedded into the
// api binary. A Go build without Node still compiles: it serves a page that says how to build
// the UI. Hashed assets are cached for a year, index.html never, and every page carries a
// strict Content-Security-Policy.
package web

import (
	"bytes"
	"compress/gzip"
	"embed"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"
)

//go:embed all:dist
var dist embed.FS

// Options tune the page's headers.
type Options struct {
	// ConnectSrc lists extra origins the page may call (the OpenID Connect issuer's token
	// endpoint); the API's own origin and its WebSockets are always allowed.
	ConnectSrc []string
}

// Embedded serves the files built into this binary.
func Embedded(opts Options) http.Handler {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // the embedded tree always has dist
	}
	return New(sub, opts)
}

// New serves a built page from fsys (its index.html, assets/…).
func New(fsys fs.FS, opts Options) http.Handler {
	h := &handler{fsys: fsys, csp: policy(opts)}
	if b, err := fs.ReadFile(fsys, "index.html"); err == nil {
		h.index = b
	}
	return h
}

type handler struct {
	gz    sync.Map // name → gzip-compressed bytes
	fsys  fs.FS
	index []byte // nil: not built
	csp   string
}

// policy is the page's Content-Security-Policy: only its own scripts and styles (no inline
// script, no eval), its own API and WebSockets, images from itself or data/blob URLs (uploads
// previewed before sending). style-src-attr allows the style attributes UI primitives set for
// positioning; style elements stay restricted to the page's own files.
func policy(opts Options) string {
	connect := append([]string{"'self'", "ws:", "wss:"}, opts.ConnectSrc...)
	return strings.Join([]string{
		"default-src 'self'",
		"script-src 'self'",
		"style-src 'self'",
		"style-src-attr 'unsafe-inline'",
		"img-src 'self' data: blob:",
		"font-src 'self'",
		"connect-src " + strings.Join(connect, " "),
		"worker-src 'self' blob:",
		"object-src 'none'",
		"base-uri 'none'",
		"form-action 'self'",
		"frame-ancestors 'none'",
	}, "; ")
}

// Built reports whether the page was built into the binary.
func Built() bool {
	_, err := fs.Stat(dist, "dist/index.html")
	return err == nil
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", h.csp)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("X-Frame-Options", "DENY")
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if name != "" && name != "index.html" && h.index != nil {
		if f, err := fs.ReadFile(h.fsys, name); err == nil {
			// Vite names every built asset by its content hash: it never changes.
			if strings.HasPrefix(name, "assets/") {
				hdr.Set("Cache-Control", "public, max-age=31536000, immutable")
			} else {
				hdr.Set("Cache-Control", "no-cache")
			}
			if z := h.gzipped(name, f); z != nil && acceptsGzip(r) {
				// Text assets go out gzip-compressed (a third of their size): compressed once per
				// process, since embedded files never change.
				hdr.Set("Vary", "Accept-Encoding")
				hdr.Set("Content-Encoding", "gzip")
				if ct := mime.TypeByExtension(path.Ext(name)); ct != "" {
					hdr.Set("Content-Type", ct)
				}
				http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(z))
				return
			}
			http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(f))
			return
		}
		if strings.HasPrefix(name, "assets/") || path.Ext(name) != "" {
			hdr.Set("Cache-Control", "no-cache")
			http.Error(w, "not found", http.StatusNotFound) // a missing file is not a page of the app
			return
		}
	}
	// index.html for / and for every route of the single-page app; always revalidated, so a
	// new build's assets are picked up at once.
	hdr.Set("Cache-Control", "no-cache")
	page := h.index
	if page == nil {
		page = notBuilt
	}
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	http.ServeContent(w, r, "index.html", time.Time{}, bytes.NewReader(page))
}

// compressible names the text types worth compressing; images and fonts already are.
var compressible = map[string]bool{".js": true, ".css": true, ".svg": true, ".json": true, ".map": true, ".txt": true, ".html": true}

// gzipped is the compressed form of a text asset of at least 1 KB (nil otherwise), made once.
func (h *handler) gzipped(name string, f []byte) []byte {
	if !compressible[path.Ext(name)] || len(f) < 1024 {
		return nil
	}
	if z, ok := h.gz.Load(name); ok {
		return z.([]byte)
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(f)
	_ = zw.Close()
	z, _ := h.gz.LoadOrStore(name, buf.Bytes())
	return z.([]byte)
}

// acceptsGzip reads Accept-Encoding (q=0 refuses).
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") || strings.TrimSpace(enc) == "*" {
			return strings.ReplaceAll(strings.TrimSpace(params), " ", "") != "q=0"
		}
	}
	return false
}

// notBuilt is served when the binary was built without the page.
var notBuilt = []byte(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>sapagent</title></head>
<body><main>
<h1>sapagent</h1>
<p>The API is running, but this binary was built without the web chat page (<code>web/dist</code>).</p>
<p>The API is at <a href="/api/health">/api/health</a>; <a href="/api/openapi.json">/api/openapi.json</a> describes it.</p>
</main></body></html>
`)
