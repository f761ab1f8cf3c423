package main

// The playground: a page served at GET / (and its assets under /ui/) that
// talks to this server's own API from the browser — a streamed chat, a JSON
// Schema editor with examples, the request as curl, and the explain panel
// (POST /v1/conform/explain) for the schema being edited. The assets are
// plain HTML, CSS and JavaScript embedded in the binary: no build step,
// nothing loaded from elsewhere (the Content-Security-Policy says so to the
// browser). --no-ui leaves the routes out, so GET / is the unknown-route 404.

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
)

//go:embed ui
var uiFS embed.FS

// uiTypes are the Content-Types of the asset kinds the playground has; a
// file of another kind is not served.
var uiTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".json": "application/json",
}

// uiCSP keeps the page to this origin: its scripts, styles and fetches.
const uiCSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// uiAsset is one embedded file, read once, with its strong ETag (a hash
// of its bytes): the page revalidates (Cache-Control no-cache) and gets a
// 304 while the binary is the same.
type uiAsset struct {
	body  []byte
	ctype string
	etag  string
}

// uiAssets reads the embedded folder once: file name → asset.
var uiAssets = sync.OnceValues(func() (map[string]uiAsset, error) {
	out := map[string]uiAsset{}
	err := fs.WalkDir(uiFS, "ui", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ctype, ok := uiTypes[path.Ext(p)]
		if !ok {
			return nil
		}
		b, err := uiFS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[path.Base(p)] = uiAsset{body: b, ctype: ctype, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	return out, err
})

// routeUI adds the playground's routes to e. With --no-ui GET / is the
// unknown-route 404 (left unrouted it would be a 405, HEAD / being routed).
func (s *Server) routeUI(e *gin.Engine) {
	if s.cfg.NoUI {
		e.GET("/", notFound)
		return
	}
	e.GET("/", func(c *gin.Context) { serveUI(c, "index.html") })
	e.GET("/ui/:file", func(c *gin.Context) { serveUI(c, c.Param("file")) })
}

// serveUI writes the asset named name, or the unknown-route 404.
func serveUI(c *gin.Context, name string) {
	assets, err := uiAssets()
	if err != nil {
		renderError(c, fmt.Errorf("reading the embedded playground: %w", err))
		return
	}
	a, ok := assets[name]
	if !ok {
		notFound(c)
		return
	}
	h := c.Writer.Header()
	h.Set("Content-Type", a.ctype)
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", a.etag)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", uiCSP)
	// ServeContent answers If-None-Match with 304 from the ETag above.
	http.ServeContent(c.Writer, c.Request, name, time.Time{}, bytes.NewReader(a.body))
}
