package hub

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// DefaultEndpoint is the Hugging Face hub. The caller reads HF_ENDPOINT (a
// mirror) and passes it as Options.Endpoint; this package reads no
// environment variable except in DefaultCacheDir.
const DefaultEndpoint = "https://huggingface.co"

// DefaultStallTimeout is how long a request may go without receiving a byte
// before it is abandoned (and, for a download, resumed). A minute rides out
// a slow CDN redirect or a congested link; a dead connection without it
// could hang a server's start for ever, since http.DefaultClient has no
// read timeout.
const DefaultStallTimeout = time.Minute

// DefaultRetries is how many times one Resolve resumes a download after the
// connection broke and some bytes had arrived since the previous try.
const DefaultRetries = 3

// Options configures Resolve. The zero value means: the Hugging Face hub,
// no token, DefaultCacheDir, no progress output, http.DefaultClient,
// network allowed.
type Options struct {
	// Endpoint is the hub's base URL (default DefaultEndpoint).
	Endpoint string
	// Token is a Hugging Face access token (HF_TOKEN), sent as a bearer
	// token to the endpoint's host only, for gated and private repositories.
	// It is never logged nor put in an error.
	Token string
	// CacheDir is the model cache (default DefaultCacheDir()). Files go to
	// <CacheDir>/<org>/<repo>/<path in repo>.
	CacheDir string
	// Progress receives progress output (nil: none): one redrawn line when
	// it is a terminal, plain lines every 10% or few seconds otherwise.
	Progress io.Writer
	// HTTPClient makes the requests (default http.DefaultClient). Its
	// Timeout, if any, bounds a whole download: prefer a context deadline.
	HTTPClient *http.Client
	// Offline uses only the cache: a model that is not cached is an error
	// (CodeOffline) and no request is made.
	Offline bool
	// Verify re-hashes cached files against the SHA-256 in their sidecar
	// before using them (slow for big models: the whole file is read). A
	// mismatch removes the file, which is then downloaded again (or, when
	// Offline, is a CodeChecksum error).
	Verify bool
	// Retries is how many times one Resolve resumes a file after a broken
	// connection (0: DefaultRetries; negative: never). A try that adds no
	// byte ends the retries early.
	Retries int
	// StallTimeout abandons a request that receives nothing for this long
	// (0: DefaultStallTimeout; negative: never). A stalled download counts
	// as a broken connection: it is resumed while Retries allow.
	StallTimeout time.Duration
}

// DefaultCacheDir returns $XDG_CACHE_HOME/conform/models when XDG_CACHE_HOME
// is an absolute path, else ~/.cache/conform/models, else (no home folder)
// conform/models under the system's temporary folder.
func DefaultCacheDir() string {
	if x := os.Getenv("XDG_CACHE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "conform", "models")
	}
	if h, err := os.UserHomeDir(); err == nil && h != "" {
		return filepath.Join(h, ".cache", "conform", "models")
	}
	return filepath.Join(os.TempDir(), "conform", "models")
}
