package hub

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeFile is one file the fake hub serves.
type fakeFile struct {
	data      []byte
	noLFS     bool   // list it without an lfs block (no SHA-256)
	announce  string // SHA-256 to announce instead of the real one
	sizeDelta int64  // added to the announced size
}

// fakeReq records one request the fake hub received.
type fakeReq struct {
	Path  string
	Range string
	Auth  string
}

// fakeHub is a local stand-in for the Hugging Face endpoints Resolve uses:
// the tree listing and the resolve download, with knobs for the failures the
// tests provoke. It is started with newFakeHub and stopped by t.Cleanup (or
// earlier with stop, to prove the cache works without it).
type fakeHub struct {
	t   testing.TB
	srv *httptest.Server
	cdn *httptest.Server // where resolve redirects when redirect is set, as HF does to its CDN

	mu          sync.Mutex
	repos       map[string]map[string]*fakeFile // repo → path → file
	gated       map[string]string               // repo → token that opens it
	status      map[string]int                  // URL path → forced status
	cutOnce     map[string]int                  // file path → bytes sent before the connection is cut (once)
	block       map[string]chan struct{}        // file path → closed when half was sent; then waits for the client to go
	ignoreRange bool
	redirect    bool   // resolve answers 302 to the CDN, under another host name
	pageSize    int    // >0: the listing is paged, Link rel="next"
	rawListing  string // served instead of the listing when set
	reqs        []fakeReq
}

func newFakeHub(t testing.TB) *fakeHub {
	t.Helper()
	h := &fakeHub{t: t, repos: map[string]map[string]*fakeFile{}, gated: map[string]string{},
		status: map[string]int{}, cutOnce: map[string]int{}, block: map[string]chan struct{}{}}
	h.srv = httptest.NewServer(http.HandlerFunc(h.route))
	t.Cleanup(h.srv.Close)
	h.cdn = httptest.NewServer(http.HandlerFunc(h.route))
	t.Cleanup(h.cdn.Close)
	return h
}

// stop shuts the server down; later requests fail to connect.
func (h *fakeHub) stop() { h.srv.Close() }

// add puts a file into a repository.
func (h *fakeHub) add(repo, path string, f *fakeFile) *fakeFile {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.repos[repo] == nil {
		h.repos[repo] = map[string]*fakeFile{}
	}
	h.repos[repo][path] = f
	return f
}

// requests returns a copy of the requests received so far.
func (h *fakeHub) requests() []fakeReq {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]fakeReq(nil), h.reqs...)
}

// downloads returns the requests for file contents.
func (h *fakeHub) downloads() []fakeReq {
	var out []fakeReq
	for _, r := range h.requests() {
		if strings.Contains(r.Path, "/resolve/main/") {
			out = append(out, r)
		}
	}
	return out
}

// gate checks access to repo; it writes the HF-style refusal and returns
// false when the request may not proceed.
func (h *fakeHub) gate(w http.ResponseWriter, r *http.Request, repo string) bool {
	h.mu.Lock()
	h.reqs = append(h.reqs, fakeReq{Path: r.URL.Path, Range: r.Header.Get("Range"), Auth: r.Header.Get("Authorization")})
	code, forced := h.status[r.URL.Path]
	tok, gated := h.gated[repo]
	_, exists := h.repos[repo]
	h.mu.Unlock()
	switch {
	case forced:
		http.Error(w, "forced", code)
	case !exists:
		w.Header().Set("X-Error-Code", "RepoNotFound")
		w.Header().Set("X-Error-Message", "Repository not found")
		http.Error(w, "not found", http.StatusNotFound)
	case gated && r.Header.Get("Authorization") != "Bearer "+tok:
		w.Header().Set("X-Error-Code", "GatedRepo")
		w.Header().Set("X-Error-Message", "Access to model "+repo+" is restricted.")
		http.Error(w, "gated", http.StatusUnauthorized)
	default:
		return true
	}
	return false
}

// route sends GET /api/models/{org}/{repo}/tree/main to tree and
// GET /{org}/{repo}/resolve/main/{path...} to resolve (ServeMux patterns
// for both would conflict).
func (h *fakeHub) route(w http.ResponseWriter, r *http.Request) {
	segs := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 6)
	switch {
	case r.Method != http.MethodGet:
		http.Error(w, "method", http.StatusMethodNotAllowed)
	case len(segs) == 6 && segs[0] == "api" && segs[1] == "models" && segs[4] == "tree" && segs[5] == "main":
		h.tree(w, r, segs[2]+"/"+segs[3])
	case len(segs) >= 4 && segs[0] == "cdn":
		rest := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 4)
		h.mu.Lock()
		h.reqs = append(h.reqs, fakeReq{Path: r.URL.Path, Range: r.Header.Get("Range"), Auth: r.Header.Get("Authorization")})
		f := h.repos[segs[1]+"/"+segs[2]][rest[3]]
		h.mu.Unlock()
		h.serve(w, r, f, rest[3])
	case len(segs) >= 5 && segs[2] == "resolve" && segs[3] == "main":
		rest := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 5)
		h.resolve(w, r, segs[0]+"/"+segs[1], rest[4])
	default:
		http.NotFound(w, r)
	}
}

func (h *fakeHub) tree(w http.ResponseWriter, r *http.Request, repo string) {
	if !h.gate(w, r, repo) {
		return
	}
	if r.URL.Query().Get("recursive") != "true" {
		http.Error(w, "expected recursive=true", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rawListing != "" {
		w.Write([]byte(h.rawListing))
		return
	}
	var paths []string
	for p := range h.repos[repo] {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	type lfs struct {
		OID  string `json:"oid"`
		Size int64  `json:"size"`
	}
	type entry struct {
		Type string `json:"type"`
		OID  string `json:"oid"`
		Size int64  `json:"size"`
		Path string `json:"path"`
		LFS  *lfs   `json:"lfs,omitempty"`
	}
	var entries []entry
	dirs := map[string]bool{}
	for _, p := range paths {
		for i := strings.IndexByte(p, '/'); i >= 0; i = nextSlash(p, i) {
			if !dirs[p[:i]] {
				dirs[p[:i]] = true
				entries = append(entries, entry{Type: "directory", OID: "0", Path: p[:i]})
			}
		}
		f := h.repos[repo][p]
		size := int64(len(f.data)) + f.sizeDelta
		e := entry{Type: "file", OID: "1234", Size: size, Path: p}
		if !f.noLFS {
			sum := sha256.Sum256(f.data)
			oid := hex.EncodeToString(sum[:])
			if f.announce != "" {
				oid = f.announce
			}
			e.LFS = &lfs{OID: oid, Size: size}
		}
		entries = append(entries, e)
	}
	if h.pageSize > 0 {
		from, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
		to := min(from+h.pageSize, len(entries))
		if to < len(entries) {
			w.Header().Set("Link", fmt.Sprintf(`<%s?recursive=true&cursor=%d>; rel="next"`, r.URL.Path, to))
		}
		entries = entries[from:to]
	}
	json.NewEncoder(w).Encode(entries)
}

func nextSlash(p string, i int) int {
	j := strings.IndexByte(p[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

func (h *fakeHub) resolve(w http.ResponseWriter, r *http.Request, repo, p string) {
	if !h.gate(w, r, repo) {
		return
	}
	h.mu.Lock()
	f := h.repos[repo][p]
	cut, doCut := h.cutOnce[p]
	delete(h.cutOnce, p)
	block := h.block[p]
	delete(h.block, p)
	redirect := h.redirect
	h.mu.Unlock()
	if redirect && f != nil {
		// The CDN is reached as "localhost", the hub as 127.0.0.1: another
		// host, so the client must not forward the token.
		loc := strings.Replace(h.cdn.URL, "127.0.0.1", "localhost", 1) + "/cdn/" + repo + "/" + p
		http.Redirect(w, r, loc, http.StatusFound)
		return
	}
	h.serveParts(w, r, f, p, cut, doCut, block)
}

// serve sends f with range support (the CDN's side of a redirect).
func (h *fakeHub) serve(w http.ResponseWriter, r *http.Request, f *fakeFile, p string) {
	h.serveParts(w, r, f, p, 0, false, nil)
}

// serveParts sends f, honouring Range unless ignoreRange is set, cutting the
// connection after cut bytes when doCut, or stalling halfway when block is
// not nil.
func (h *fakeHub) serveParts(w http.ResponseWriter, r *http.Request, f *fakeFile, p string, cut int, doCut bool, block chan struct{}) {
	h.mu.Lock()
	ignore := h.ignoreRange
	h.mu.Unlock()
	if f == nil {
		w.Header().Set("X-Error-Code", "EntryNotFound")
		http.Error(w, "entry not found", http.StatusNotFound)
		return
	}
	data := f.data
	w.Header().Set("ETag", `"etag-`+p+`"`)
	status := http.StatusOK
	if rg := r.Header.Get("Range"); rg != "" && !ignore {
		start, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(rg, "bytes="), "-"), 10, 64)
		if err != nil || start >= int64(len(data)) {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", len(data)))
			http.Error(w, "range", http.StatusRequestedRangeNotSatisfiable)
			return
		}
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, len(data)-1, len(data)))
		data = data[start:]
		status = http.StatusPartialContent
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(status)
	switch {
	case doCut && cut < len(data):
		w.Write(data[:cut])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // cut the connection mid-body
	case block != nil:
		w.Write(data[:len(data)/2])
		w.(http.Flusher).Flush()
		close(block)
		<-r.Context().Done()
		return
	}
	w.Write(data)
}

// randBytes returns n deterministic pseudo-random bytes.
func randBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}
