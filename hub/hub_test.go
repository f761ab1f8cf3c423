package hub

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const testRepo = "org/model-GGUF"

// setup starts a fake hub holding testRepo with three quantizations and a
// projector, and returns options pointing at it with a fresh cache.
func setup(t *testing.T) (*fakeHub, Options) {
	t.Helper()
	h := newFakeHub(t)
	h.add(testRepo, "model-Q4_K_M.gguf", &fakeFile{data: randBytes(300_000, 1)})
	h.add(testRepo, "model-Q8_0.gguf", &fakeFile{data: randBytes(120_000, 2)})
	h.add(testRepo, "model-IQ4_XS.gguf", &fakeFile{data: randBytes(1000, 3)})
	h.add(testRepo, "mmproj-model-f16.gguf", &fakeFile{data: randBytes(500, 4)})
	h.add(testRepo, "README.md", &fakeFile{data: []byte("# model\n"), noLFS: true})
	return h, Options{Endpoint: h.srv.URL, CacheDir: t.TempDir()}
}

// code returns the ErrorCode of err, failing the test when err is not an
// *Error.
func code(t *testing.T, err error) ErrorCode {
	t.Helper()
	var he *Error
	if !errors.As(err, &he) {
		t.Fatalf("error %v (%T) is not a *hub.Error", err, err)
	}
	if he.Hint == "" {
		t.Errorf("error %v has no hint saying what to do", err)
	}
	if strings.ContainsAny(err.Error(), "\r\n") {
		t.Errorf("error message spans lines: %q", err.Error())
	}
	return he.Code
}

// checkFile checks that path holds want, has a sidecar with its size, and
// that no .part is left beside it.
func checkFile(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("ReadFile(%s): %v", path, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %d bytes differ from the %d served", path, len(got), len(want))
	}
	sc, ok := readSidecar(path)
	if !ok || sc.Size != int64(len(want)) || len(sc.SHA256) != 64 {
		t.Errorf("sidecar of %s = %+v, %v; want size %d and a SHA-256", path, sc, ok, len(want))
	}
	if _, err := os.Stat(partPath(path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s.part left behind (stat err %v)", path, err)
	}
}

func TestResolveDownload(t *testing.T) {
	h, o := setup(t)
	o.Token = "tok-123"
	p, err := Resolve(t.Context(), Ref{Repo: testRepo}, o)
	if err != nil {
		t.Fatalf("Resolve(%s) = %v", testRepo, err)
	}
	want := filepath.Join(o.CacheDir, "org", "model-GGUF", "model-Q4_K_M.gguf")
	if p != want {
		t.Errorf("Resolve(%s) = %s, want %s", testRepo, p, want)
	}
	checkFile(t, p, h.repos[testRepo]["model-Q4_K_M.gguf"].data)
	reqs := h.requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %+v, want a listing and a download", reqs)
	}
	for _, r := range reqs {
		if r.Auth != "Bearer tok-123" {
			t.Errorf("request %s: Authorization %q, want the bearer token", r.Path, r.Auth)
		}
		if r.Range != "" {
			t.Errorf("request %s: Range %q on a fresh download", r.Path, r.Range)
		}
	}
}

func TestResolveQuantAndFile(t *testing.T) {
	h, o := setup(t)
	tests := []struct {
		ref  string
		want string
	}{
		{testRepo + ":Q8_0", "model-Q8_0.gguf"},
		{testRepo + ":q8_0", "model-Q8_0.gguf"},
		{testRepo + ":IQ4_XS", "model-IQ4_XS.gguf"},
		{testRepo + "/model-Q8_0.gguf", "model-Q8_0.gguf"},
		{testRepo + "/mmproj-model-f16.gguf", "mmproj-model-f16.gguf"},
	}
	for _, tt := range tests {
		ref, err := ParseRef(tt.ref)
		if err != nil {
			t.Fatalf("ParseRef(%q) = %v", tt.ref, err)
		}
		p, err := Resolve(t.Context(), ref, o)
		if err != nil {
			t.Errorf("Resolve(%s) = %v", tt.ref, err)
			continue
		}
		if filepath.Base(p) != tt.want {
			t.Errorf("Resolve(%s) = %s, want …/%s", tt.ref, p, tt.want)
		}
		checkFile(t, p, h.repos[testRepo][tt.want].data)
	}
}

func TestResolveCacheHitWithoutServer(t *testing.T) {
	h, o := setup(t)
	refs := []Ref{{Repo: testRepo}, {Repo: testRepo, Quant: "Q8_0"}, {Repo: testRepo, File: "model-IQ4_XS.gguf"}}
	paths := map[Ref]string{}
	for _, ref := range refs {
		p, err := Resolve(t.Context(), ref, o)
		if err != nil {
			t.Fatalf("Resolve(%s) = %v", ref, err)
		}
		paths[ref] = p
	}
	n := len(h.requests())
	h.stop()
	for _, offline := range []bool{false, true} {
		o.Offline = offline
		var buf bytes.Buffer
		o.Progress = &buf
		for _, ref := range refs {
			p, err := Resolve(t.Context(), ref, o)
			if err != nil {
				t.Fatalf("Resolve(%s) offline=%v with the server stopped = %v", ref, offline, err)
			}
			if p != paths[ref] {
				t.Errorf("Resolve(%s) from the cache = %s, want %s", ref, p, paths[ref])
			}
		}
		if !strings.Contains(buf.String(), "using cached") {
			t.Errorf("progress output %q does not mention the cache", buf.String())
		}
	}
	if got := len(h.requests()); got != n {
		t.Errorf("%d requests after the first downloads, want none", got-n)
	}
	// A reference that is not cached needs the (stopped) network.
	_, err := Resolve(t.Context(), Ref{Repo: testRepo, Quant: "Q5_K_M"}, Options{Endpoint: o.Endpoint, CacheDir: o.CacheDir})
	if c := code(t, err); c != CodeNetwork {
		t.Errorf("Resolve(uncached) with the server stopped: code %v, want %v (%v)", c, CodeNetwork, err)
	}
	for _, s := range []string{"could not reach", "--model PATH", "--demo"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
	_, err = Resolve(t.Context(), Ref{Repo: testRepo, Quant: "Q5_K_M"}, Options{Endpoint: o.Endpoint, CacheDir: o.CacheDir, Offline: true})
	if c := code(t, err); c != CodeOffline {
		t.Errorf("Resolve(uncached, Offline) code %v, want %v (%v)", c, CodeOffline, err)
	}
}

func TestResolveResumeAfterCut(t *testing.T) {
	h, o := setup(t)
	const file = "model-Q4_K_M.gguf"
	h.cutOnce[file] = 100_000
	p, err := Resolve(t.Context(), Ref{Repo: testRepo}, o)
	if err != nil {
		t.Fatalf("Resolve with a cut connection = %v", err)
	}
	checkFile(t, p, h.repos[testRepo][file].data)
	dl := h.downloads()
	if len(dl) != 2 {
		t.Fatalf("downloads = %+v, want the cut one and a resume", dl)
	}
	if dl[0].Range != "" || !strings.HasPrefix(dl[1].Range, "bytes=") || dl[1].Range == "bytes=0-" {
		t.Errorf("Range headers = %q, %q; want none, then bytes=N- with N > 0", dl[0].Range, dl[1].Range)
	}
}

func TestResolveResumeNextStart(t *testing.T) {
	h, o := setup(t)
	const file = "model-Q4_K_M.gguf"
	h.cutOnce[file] = 100_000
	o.Retries = -1
	_, err := Resolve(t.Context(), Ref{Repo: testRepo}, o)
	if c := code(t, err); c != CodeNetwork {
		t.Fatalf("Resolve with a cut connection and no retries: code %v, want %v (%v)", c, CodeNetwork, err)
	}
	dst := filepath.Join(o.CacheDir, "org", "model-GGUF", file)
	st, err := os.Stat(partPath(dst))
	if err != nil || st.Size() == 0 || st.Size() > 100_000 {
		t.Fatalf("after the cut: part %v, %v; want a non-empty part of at most 100000 bytes", st, err)
	}
	if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the final file exists after a cut download (stat err %v)", err)
	}
	var buf bytes.Buffer
	o.Progress = &buf
	p, err := Resolve(t.Context(), Ref{Repo: testRepo}, o)
	if err != nil {
		t.Fatalf("second Resolve = %v", err)
	}
	checkFile(t, p, h.repos[testRepo][file].data)
	dl := h.downloads()
	if want := "bytes=" + itoa(st.Size()) + "-"; len(dl) != 2 || dl[1].Range != want {
		t.Errorf("downloads = %+v, want a second one with Range %s", dl, want)
	}
	if !strings.Contains(buf.String(), "resuming") {
		t.Errorf("progress %q does not say it resumes", buf.String())
	}
}

func TestResolveServerIgnoresRange(t *testing.T) {
	h, o := setup(t)
	const file = "model-Q8_0.gguf"
	h.ignoreRange = true
	dst := filepath.Join(o.CacheDir, "org", "model-GGUF", file)
	os.MkdirAll(filepath.Dir(dst), 0o755)
	if err := os.WriteFile(partPath(dst), []byte("garbage that is not a prefix"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(t.Context(), Ref{Repo: testRepo, Quant: "Q8_0"}, o)
	if err != nil {
		t.Fatalf("Resolve = %v", err)
	}
	checkFile(t, p, h.repos[testRepo][file].data)
	if dl := h.downloads(); len(dl) != 1 || dl[0].Range == "" {
		t.Errorf("downloads = %+v, want one range request answered with 200", dl)
	}
}

func TestResolveStalePartLongerThanFile(t *testing.T) {
	h, o := setup(t)
	const file = "model-IQ4_XS.gguf"
	dst := filepath.Join(o.CacheDir, "org", "model-GGUF", file)
	os.MkdirAll(filepath.Dir(dst), 0o755)
	os.WriteFile(partPath(dst), make([]byte, 5000), 0o644)
	p, err := Resolve(t.Context(), Ref{Repo: testRepo, File: file}, o)
	if err != nil {
		t.Fatalf("Resolve = %v", err)
	}
	checkFile(t, p, h.repos[testRepo][file].data)
}

func TestResolveChecksumMismatch(t *testing.T) {
	tests := []struct {
		name string
		f    *fakeFile
	}{
		{"sha256", &fakeFile{data: randBytes(50_000, 9), announce: strings.Repeat("ab", 32)}},
		{"longer than listed", &fakeFile{data: randBytes(50_000, 9), sizeDelta: -10}},
		{"shorter than listed", &fakeFile{data: randBytes(50_000, 9), sizeDelta: +10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHub(t)
			h.add(testRepo, "bad-Q4_K_M.gguf", tt.f)
			o := Options{Endpoint: h.srv.URL, CacheDir: t.TempDir(), Retries: -1}
			_, err := Resolve(t.Context(), Ref{Repo: testRepo}, o)
			want := CodeChecksum
			if tt.f.sizeDelta > 0 {
				want = CodeNetwork // the answer ends early: kept for a resume
			}
			if c := code(t, err); c != want {
				t.Fatalf("Resolve: code %v, want %v (%v)", c, want, err)
			}
			dst := filepath.Join(o.CacheDir, "org", "model-GGUF", "bad-Q4_K_M.gguf")
			for _, p := range []string{dst, sidecarPath(dst)} {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s exists after a failed download (stat err %v)", p, err)
				}
			}
			_, err = os.Stat(partPath(dst))
			if want == CodeChecksum && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the .part was kept after a checksum mismatch (stat err %v)", err)
			}
		})
	}
}

func TestResolveHTTPErrors(t *testing.T) {
	h, o := setup(t)
	h.add("org/gated", "m-Q4_K_M.gguf", &fakeFile{data: randBytes(100, 5)})
	h.gated["org/gated"] = "good-token"
	h.add("org/nogguf", "model.safetensors", &fakeFile{data: randBytes(100, 6)})
	h.add("org/nogguf", "mmproj-only.gguf", &fakeFile{data: randBytes(100, 6)})
	h.add("org/broken", "x-Q4_K_M.gguf", &fakeFile{data: randBytes(100, 7)})
	h.status["/api/models/org/broken/tree/main"] = 503
	h.add("org/forbidden", "x-Q4_K_M.gguf", &fakeFile{data: randBytes(100, 7)})
	h.status["/org/forbidden/resolve/main/x-Q4_K_M.gguf"] = 403
	tests := []struct {
		ref   string
		token string
		want  ErrorCode
		say   []string // substrings of the message
	}{
		{"org/missing", "", CodeNotFound, []string{"Repository not found", "HF_TOKEN"}},
		{testRepo + "/nope-Q4_K_M.gguf", "", CodeNotFound, []string{"model-Q8_0.gguf"}},
		{"org/gated", "", CodeGated, []string{"accept the license", "HF_TOKEN"}},
		{"org/gated", "secret-wrong", CodeGated, []string{"HF_TOKEN"}},
		{"org/forbidden", "", CodeGated, []string{"HF_TOKEN"}},
		{"org/nogguf", "", CodeNoGGUF, []string{"--model PATH"}},
		{testRepo + ":Q3_K_S", "", CodeUnknownQuant, []string{"IQ4_XS, Q4_K_M, Q8_0", testRepo + ":QUANT"}},
		{testRepo + ":Q4_K", "", CodeUnknownQuant, nil},
		{"org/broken", "", CodeHTTP, []string{"503"}},
	}
	for _, tt := range tests {
		ref, err := ParseRef(tt.ref)
		if err != nil {
			t.Fatalf("ParseRef(%q) = %v", tt.ref, err)
		}
		o.Token = tt.token
		_, err = Resolve(t.Context(), ref, o)
		if err == nil {
			t.Errorf("Resolve(%s) succeeded, want %v", tt.ref, tt.want)
			continue
		}
		if c := code(t, err); c != tt.want {
			t.Errorf("Resolve(%s): code %v, want %v (%v)", tt.ref, c, tt.want, err)
		}
		for _, s := range tt.say {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("Resolve(%s) error %q lacks %q", tt.ref, err, s)
			}
		}
		if tt.token != "" && strings.Contains(err.Error(), tt.token) {
			t.Errorf("Resolve(%s) error %q shows the token", tt.ref, err)
		}
	}
	o.Token = "good-token"
	p, err := Resolve(t.Context(), Ref{Repo: "org/gated"}, o)
	if err != nil {
		t.Fatalf("Resolve(org/gated) with the token = %v", err)
	}
	checkFile(t, p, h.repos["org/gated"]["m-Q4_K_M.gguf"].data)
}

func TestResolveBadListing(t *testing.T) {
	tests := []struct {
		name, listing string
	}{
		{"not json", "<html>"},
		{"escaping path", `[{"type":"file","path":"../evil-Q4_K_M.gguf","size":1}]`},
		{"absolute path", `[{"type":"file","path":"/etc/x-Q4_K_M.gguf","size":1}]`},
		{"bad oid", `[{"type":"file","path":"x-Q4_K_M.gguf","size":1,"lfs":{"oid":"zz","size":1}}]`},
		{"negative size", `[{"type":"file","path":"x-Q4_K_M.gguf","size":-1}]`},
	}
	for _, tt := range tests {
		h, o := setup(t)
		h.rawListing = tt.listing
		_, err := Resolve(t.Context(), Ref{Repo: testRepo}, o)
		if c := code(t, err); c != CodeProtocol {
			t.Errorf("%s: Resolve code %v, want %v (%v)", tt.name, c, CodeProtocol, err)
		}
	}
}

func TestResolvePagedListing(t *testing.T) {
	h, o := setup(t)
	h.pageSize = 2
	p, err := Resolve(t.Context(), Ref{Repo: testRepo, Quant: "Q8_0"}, o)
	if err != nil {
		t.Fatalf("Resolve over a paged listing = %v", err)
	}
	checkFile(t, p, h.repos[testRepo]["model-Q8_0.gguf"].data)
	var pages int
	for _, r := range h.requests() {
		if strings.HasPrefix(r.Path, "/api/") {
			pages++
		}
	}
	if pages != 3 { // 5 entries, 2 per page
		t.Errorf("listing pages fetched = %d, want 3", pages)
	}
}

func TestResolveSplit(t *testing.T) {
	h, o := setup(t)
	const repo = "org/big-GGUF"
	var parts [][]byte
	for i := range 3 {
		d := randBytes(20_000+i, uint64(10+i))
		parts = append(parts, d)
		h.add(repo, "Q4_K_M/big-Q4_K_M-0000"+itoa(int64(i+1))+"-of-00003.gguf", &fakeFile{data: d})
	}
	h.add(repo, "big-Q8_0-00001-of-00002.gguf", &fakeFile{data: randBytes(10, 1)}) // part 2 missing
	p, err := Resolve(t.Context(), Ref{Repo: repo}, o)
	if err != nil {
		t.Fatalf("Resolve(split) = %v", err)
	}
	if want := filepath.Join(o.CacheDir, "org", "big-GGUF", "Q4_K_M", "big-Q4_K_M-00001-of-00003.gguf"); p != want {
		t.Errorf("Resolve(split) = %s, want %s", p, want)
	}
	for i, d := range parts {
		checkFile(t, filepath.Join(filepath.Dir(p), "big-Q4_K_M-0000"+itoa(int64(i+1))+"-of-00003.gguf"), d)
	}
	_, err = Resolve(t.Context(), Ref{Repo: repo, Quant: "Q8_0"}, o)
	if c := code(t, err); c != CodeSplit {
		t.Errorf("Resolve(incomplete split): code %v, want %v (%v)", c, CodeSplit, err)
	}
	// Naming part 2 gives the whole model, returned by its first part; the
	// cache serves it with the server gone.
	h.stop()
	got, err := Resolve(t.Context(), Ref{Repo: repo, File: "Q4_K_M/big-Q4_K_M-00002-of-00003.gguf"}, o)
	if err != nil || got != p {
		t.Errorf("Resolve(part 2) from the cache = %q, %v; want %s", got, err, p)
	}
	// A missing part makes the cache miss.
	os.Remove(filepath.Join(filepath.Dir(p), "big-Q4_K_M-00003-of-00003.gguf"))
	_, err = Resolve(t.Context(), Ref{Repo: repo}, Options{CacheDir: o.CacheDir, Offline: true})
	if c := code(t, err); c != CodeOffline {
		t.Errorf("Resolve(split with a part gone, Offline): code %v, want %v (%v)", c, CodeOffline, err)
	}
}

func TestResolveCancelKeepsPart(t *testing.T) {
	h, o := setup(t)
	const file = "model-Q4_K_M.gguf"
	half := make(chan struct{})
	h.block[file] = half
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := Resolve(ctx, Ref{Repo: testRepo}, o)
		done <- err
	}()
	<-half
	// Wait until the client has written what it received, then cancel.
	dst := filepath.Join(o.CacheDir, "org", "model-GGUF", file)
	waitFor(t, func() bool { st, err := os.Stat(partPath(dst)); return err == nil && st.Size() == 150_000 })
	cancel()
	err := <-done
	if c := code(t, err); c != CodeCanceled {
		t.Fatalf("Resolve cancelled: code %v, want %v (%v)", c, CodeCanceled, err)
	}
	if st, err := os.Stat(partPath(dst)); err != nil || st.Size() != 150_000 {
		t.Fatalf("after cancel: part %v, %v; want 150000 bytes kept", st, err)
	}
	if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("final file exists after a cancelled download")
	}
	p, err := Resolve(t.Context(), Ref{Repo: testRepo}, o)
	if err != nil {
		t.Fatalf("Resolve after cancel = %v", err)
	}
	checkFile(t, p, h.repos[testRepo][file].data)
	if dl := h.downloads(); len(dl) != 2 || dl[1].Range != "bytes=150000-" {
		t.Errorf("downloads = %+v, want a resume from 150000", dl)
	}
	// A context already done stops before any request.
	n := len(h.requests())
	_, err = Resolve(ctx, Ref{Repo: testRepo, Quant: "Q8_0"}, o)
	if c := code(t, err); c != CodeCanceled || len(h.requests()) != n {
		t.Errorf("Resolve(done ctx): code %v, %d requests; want %v and none", c, len(h.requests())-n, CodeCanceled)
	}
}

func TestResolveCacheNotWritable(t *testing.T) {
	check := func(t *testing.T, cache string) {
		h, o := setup(t)
		o.CacheDir = cache
		_, err := Resolve(t.Context(), Ref{Repo: testRepo}, o)
		if c := code(t, err); c != CodeCacheDir {
			t.Errorf("Resolve(cache %s): code %v, want %v (%v)", cache, c, CodeCacheDir, err)
		}
		if !strings.Contains(err.Error(), "--models-dir") {
			t.Errorf("error %q does not point at --models-dir", err)
		}
		if n := len(h.requests()); n != 0 {
			t.Errorf("%d requests before failing on the cache folder, want 0", n)
		}
	}
	t.Run("file in place of the folder", func(t *testing.T) {
		// Root cannot create a folder where a file is either.
		blocker := filepath.Join(t.TempDir(), "cache")
		if err := os.WriteFile(blocker, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		check(t, blocker)
	})
	t.Run("read-only folder", func(t *testing.T) {
		ro := t.TempDir()
		if err := os.Chmod(ro, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(ro, 0o700) })
		if f, err := os.Create(filepath.Join(ro, "probe")); err == nil {
			f.Close()
			t.Skip("this user writes into a read-only folder (root ignores permissions); the file case covers the error")
		}
		check(t, ro)
	})
}

// fullDisk is a partFile whose writes fail with ENOSPC after limit bytes.
type fullDisk struct {
	f     *os.File
	limit int
}

func (d *fullDisk) Write(p []byte) (int, error) {
	if len(p) > d.limit {
		n, _ := d.f.Write(p[:d.limit])
		d.limit = 0
		return n, &os.PathError{Op: "write", Path: d.f.Name(), Err: syscall.ENOSPC}
	}
	d.limit -= len(p)
	return d.f.Write(p)
}
func (d *fullDisk) Sync() error  { return d.f.Sync() }
func (d *fullDisk) Close() error { return d.f.Close() }

func TestResolveDiskFull(t *testing.T) {
	h, o := setup(t)
	orig := openPart
	t.Cleanup(func() { openPart = orig })
	openPart = func(name string, flag int) (partFile, error) {
		f, err := os.OpenFile(name, flag, 0o644)
		if err != nil {
			return nil, err
		}
		return &fullDisk{f: f, limit: 70_000}, nil
	}
	_, err := Resolve(t.Context(), Ref{Repo: testRepo}, o)
	if c := code(t, err); c != CodeDiskFull {
		t.Fatalf("Resolve(disk full): code %v, want %v (%v)", c, CodeDiskFull, err)
	}
	dst := filepath.Join(o.CacheDir, "org", "model-GGUF", "model-Q4_K_M.gguf")
	for _, p := range []string{dst, partPath(dst), sidecarPath(dst)} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists after ENOSPC (stat err %v)", p, err)
		}
	}
	if len(h.downloads()) != 1 {
		t.Errorf("downloads = %+v, want one (a full disk is not retried)", h.downloads())
	}
}

func TestResolveVerifyCorruptCache(t *testing.T) {
	h, o := setup(t)
	p, err := Resolve(t.Context(), Ref{Repo: testRepo}, o)
	if err != nil {
		t.Fatal(err)
	}
	flip := func() {
		data, _ := os.ReadFile(p)
		data[len(data)/2] ^= 0xff
		os.WriteFile(p, data, 0o644)
	}
	flip()
	// Without Verify only the size is checked: the corrupt file is used.
	if _, err := Resolve(t.Context(), Ref{Repo: testRepo}, Options{CacheDir: o.CacheDir, Offline: true}); err != nil {
		t.Errorf("Resolve(Offline) of a same-size file = %v, want the cache used", err)
	}
	_, err = Resolve(t.Context(), Ref{Repo: testRepo}, Options{CacheDir: o.CacheDir, Offline: true, Verify: true})
	if c := code(t, err); c != CodeChecksum {
		t.Errorf("Resolve(Offline, Verify) of a corrupt file: code %v, want %v (%v)", c, CodeChecksum, err)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("corrupt cached file kept (stat err %v)", err)
	}
	// Online, Verify re-downloads a corrupt file.
	p, err = Resolve(t.Context(), Ref{Repo: testRepo}, o)
	if err != nil {
		t.Fatal(err)
	}
	flip()
	o.Verify = true
	if p, err = Resolve(t.Context(), Ref{Repo: testRepo}, o); err != nil {
		t.Fatalf("Resolve(Verify) of a corrupt file online = %v", err)
	}
	checkFile(t, p, h.repos[testRepo]["model-Q4_K_M.gguf"].data)
}

func TestResolveProgressPlain(t *testing.T) {
	_, o := setup(t)
	var buf bytes.Buffer
	o.Progress = &buf
	if _, err := Resolve(t.Context(), Ref{Repo: testRepo}, o); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, s := range []string{"hub: downloading " + testRepo + "/model-Q4_K_M.gguf (293.0 KiB)\n", "100%", "hub: " + testRepo + "/model-Q4_K_M.gguf: done, 293.0 KiB in "} {
		if !strings.Contains(out, s) {
			t.Errorf("progress output lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "\r") {
		t.Errorf("plain progress output has a carriage return:\n%s", out)
	}
}

func TestResolveBadInput(t *testing.T) {
	tests := []struct {
		ref  Ref
		o    Options
		want ErrorCode
	}{
		{Ref{Repo: "noslash"}, Options{}, CodeBadRef},
		{Ref{Repo: "a/b", File: "../x.gguf"}, Options{}, CodeBadRef},
		{Ref{Repo: "a/b", File: "x.gguf", Quant: "Q8_0"}, Options{}, CodeBadRef},
		{Ref{Repo: "a/b", Quant: "Q8 0"}, Options{}, CodeBadRef},
		{Ref{Repo: "a/b"}, Options{Endpoint: "ftp://x"}, CodeConfig},
		{Ref{Repo: "a/b"}, Options{Endpoint: "not a url"}, CodeConfig},
	}
	for _, tt := range tests {
		tt.o.CacheDir = t.TempDir()
		_, err := Resolve(t.Context(), tt.ref, tt.o)
		if c := code(t, err); c != tt.want {
			t.Errorf("Resolve(%+v, endpoint %q): code %v, want %v (%v)", tt.ref, tt.o.Endpoint, c, tt.want, err)
		}
	}
}

func TestDefaultCacheDir(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	if got, want := DefaultCacheDir(), filepath.Join("/xdg", "conform", "models"); got != want {
		t.Errorf("DefaultCacheDir() with XDG_CACHE_HOME=/xdg = %s, want %s", got, want)
	}
	t.Setenv("XDG_CACHE_HOME", "relative")
	t.Setenv("HOME", "/home/u")
	if got, want := DefaultCacheDir(), filepath.Join("/home/u", ".cache", "conform", "models"); got != want {
		t.Errorf("DefaultCacheDir() with a relative XDG_CACHE_HOME = %s, want %s", got, want)
	}
}

func itoa(n int64) string { return strconvFormat(n) }

func TestResolveStalledConnection(t *testing.T) {
	h, o := setup(t)
	const file = "model-Q4_K_M.gguf"
	o.StallTimeout = 300 * time.Millisecond // generous: a spurious stall would add a request
	o.Retries = -1
	h.block[file] = make(chan struct{}) // half the file, then silence
	_, err := Resolve(t.Context(), Ref{Repo: testRepo}, o)
	if c := code(t, err); c != CodeNetwork || !strings.Contains(err.Error(), "stall") {
		t.Fatalf("Resolve over a stalled connection: code %v, want %v mentioning the stall (%v)", c, CodeNetwork, err)
	}
	// With retries, a stall is resumed like a broken connection.
	o.Retries = 0
	h.block[file] = make(chan struct{})
	p, err := Resolve(t.Context(), Ref{Repo: testRepo}, o)
	if err != nil {
		t.Fatalf("Resolve with a stall and retries = %v", err)
	}
	checkFile(t, p, h.repos[testRepo][file].data)
	dl := h.downloads()
	if len(dl) != 3 || dl[1].Range != "bytes=150000-" || dl[2].Range != "bytes=225000-" {
		t.Errorf("downloads = %+v; want a resume from 150000 then from 225000", dl)
	}
}

func TestResolveRedirectDropsToken(t *testing.T) {
	h, o := setup(t)
	h.redirect = true
	o.Token = "tok-456"
	p, err := Resolve(t.Context(), Ref{Repo: testRepo, Quant: "Q8_0"}, o)
	if err != nil {
		t.Fatalf("Resolve through a CDN redirect = %v", err)
	}
	checkFile(t, p, h.repos[testRepo]["model-Q8_0.gguf"].data)
	var hub, cdn int
	for _, r := range h.requests() {
		switch {
		case strings.HasPrefix(r.Path, "/cdn/"):
			cdn++
			if r.Auth != "" {
				t.Errorf("the CDN (another host) got Authorization %q", r.Auth)
			}
		default:
			hub++
			if r.Auth != "Bearer tok-456" {
				t.Errorf("hub request %s: Authorization %q, want the token", r.Path, r.Auth)
			}
		}
	}
	if hub != 2 || cdn != 1 {
		t.Errorf("requests: %d to the hub, %d to the CDN; want 2 and 1", hub, cdn)
	}
}

func TestResolveRangeNotSatisfiable(t *testing.T) {
	// The listing announces more than the server has (the file changed):
	// the part no longer fits, is dropped, and the download starts over.
	h := newFakeHub(t)
	h.add(testRepo, "m-Q4_K_M.gguf", &fakeFile{data: randBytes(1000, 1), sizeDelta: 10})
	o := Options{Endpoint: h.srv.URL, CacheDir: t.TempDir(), Retries: -1}
	dst := filepath.Join(o.CacheDir, "org", "model-GGUF", "m-Q4_K_M.gguf")
	os.MkdirAll(filepath.Dir(dst), 0o755)
	os.WriteFile(partPath(dst), make([]byte, 1000), 0o644)
	_, err := Resolve(t.Context(), Ref{Repo: testRepo}, o)
	if c := code(t, err); c != CodeNetwork {
		t.Errorf("Resolve: code %v, want %v (%v)", c, CodeNetwork, err)
	}
	if dl := h.downloads(); len(dl) != 2 || dl[0].Range != "bytes=1000-" || dl[1].Range != "" {
		t.Errorf("downloads = %+v; want a range request answered 416, then a whole-file request", dl)
	}
}

func TestResolveConcurrent(t *testing.T) {
	h, o := setup(t)
	const n = 4
	paths := make(chan string, n)
	errs := make(chan error, n)
	for range n {
		go func() {
			p, err := Resolve(t.Context(), Ref{Repo: testRepo}, o)
			paths <- p
			errs <- err
		}()
	}
	var first string
	for range n {
		p, err := <-paths, <-errs
		if err != nil {
			t.Fatalf("concurrent Resolve = %v", err)
		}
		if first == "" {
			first = p
		} else if p != first {
			t.Errorf("concurrent Resolve = %s and %s", first, p)
		}
	}
	checkFile(t, first, h.repos[testRepo]["model-Q4_K_M.gguf"].data)
	if dl := h.downloads(); len(dl) != 1 {
		t.Errorf("downloads = %d, want 1: the others wait for the lock and find the cache", len(dl))
	}
}

func TestResolveCompletePartIsVerifiedNotFetched(t *testing.T) {
	// A crash after the last byte but before the rename leaves a complete
	// .part: the next start verifies and renames it without downloading.
	h, o := setup(t)
	const file = "model-Q8_0.gguf"
	dst := filepath.Join(o.CacheDir, "org", "model-GGUF", file)
	os.MkdirAll(filepath.Dir(dst), 0o755)
	os.WriteFile(partPath(dst), h.repos[testRepo][file].data, 0o644)
	p, err := Resolve(t.Context(), Ref{Repo: testRepo, File: file}, o)
	if err != nil {
		t.Fatalf("Resolve = %v", err)
	}
	checkFile(t, p, h.repos[testRepo][file].data)
	if dl := h.downloads(); len(dl) != 0 {
		t.Errorf("downloads = %+v, want none", dl)
	}
	// The same with wrong bytes: rejected and removed.
	const other = "model-IQ4_XS.gguf"
	dst = filepath.Join(o.CacheDir, "org", "model-GGUF", other)
	os.WriteFile(partPath(dst), make([]byte, len(h.repos[testRepo][other].data)), 0o644)
	_, err = Resolve(t.Context(), Ref{Repo: testRepo, File: other}, o)
	if c := code(t, err); c != CodeChecksum {
		t.Errorf("Resolve with a complete but wrong part: code %v, want %v (%v)", c, CodeChecksum, err)
	}
	if _, err := os.Stat(partPath(dst)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("wrong part kept (stat err %v)", err)
	}
}

func TestResolveWaitsForLock(t *testing.T) {
	_, o := setup(t)
	dst := filepath.Join(o.CacheDir, "org", "model-GGUF", "model-Q4_K_M.gguf")
	os.MkdirAll(filepath.Dir(dst), 0o755)
	unlock, err := lockFile(t.Context(), dst+".lock", nil) // "another process"
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	var buf syncBuffer
	o.Progress = &buf
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := Resolve(ctx, Ref{Repo: testRepo}, o)
		done <- err
	}()
	waitFor(t, func() bool { return strings.Contains(buf.String(), "waiting for another process") })
	cancel()
	if c := code(t, <-done); c != CodeCanceled {
		t.Errorf("Resolve cancelled while waiting for the lock: code %v, want %v", c, CodeCanceled)
	}
}

func TestResolveOnlyModelFallback(t *testing.T) {
	h := newFakeHub(t)
	h.add("org/one", "one-Q8_0.gguf", &fakeFile{data: randBytes(100, 1)})
	var buf bytes.Buffer
	o := Options{Endpoint: h.srv.URL, CacheDir: t.TempDir(), Progress: &buf}
	p, err := Resolve(t.Context(), Ref{Repo: "org/one"}, o)
	if err != nil || filepath.Base(p) != "one-Q8_0.gguf" {
		t.Fatalf("Resolve(org/one) = %q, %v; want …/one-Q8_0.gguf", p, err)
	}
	if want := "hub: org/one has no Q4_K_M file; using its only model, one-Q8_0.gguf\n"; !strings.Contains(buf.String(), want) {
		t.Errorf("progress %q lacks %q", buf.String(), want)
	}
	// The choice is remembered: the next start needs no network.
	h.stop()
	if p2, err := Resolve(t.Context(), Ref{Repo: "org/one"}, o); err != nil || p2 != p {
		t.Errorf("second Resolve(org/one) = %q, %v; want %s from the cache", p2, err, p)
	}
}
