package hub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// partFile is the part of *os.File the download writes through; tests
// replace openPart to provoke write failures such as ENOSPC.
type partFile interface {
	io.Writer
	Sync() error
	Close() error
}

// openPart opens the .part file; a variable so tests can inject failures.
var openPart = func(name string, flag int) (partFile, error) {
	return os.OpenFile(name, flag, 0o644)
}

// sidecar is the small JSON file written beside a verified download
// (<file>.json). Its presence with a matching size is what makes a later
// start use the cache without the network.
type sidecar struct {
	Repo       string    `json:"repo"`
	File       string    `json:"file"`
	Size       int64     `json:"size"`
	SHA256     string    `json:"sha256"`
	ETag       string    `json:"etag,omitempty"`
	Endpoint   string    `json:"endpoint"`
	Downloaded time.Time `json:"downloaded"`
}

// maxSidecarBytes bounds a sidecar read; a real one is a few hundred bytes.
const maxSidecarBytes = 64 << 10

func sidecarPath(dst string) string { return dst + ".json" }
func partPath(dst string) string    { return dst + ".part" }

// readSidecar reads the sidecar of dst; ok is false when it is absent or
// unreadable (then the file is not considered cached).
func readSidecar(dst string) (sidecar, bool) {
	f, err := os.Open(sidecarPath(dst))
	if err != nil {
		return sidecar{}, false
	}
	defer f.Close()
	var s sidecar
	if err := json.NewDecoder(io.LimitReader(f, maxSidecarBytes)).Decode(&s); err != nil || s.Size < 0 {
		return sidecar{}, false
	}
	return s, true
}

// writeFileAtomic writes data to name through a temporary file and a rename,
// so a reader sees the old content or the new, never a torn one.
func writeFileAtomic(name string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// fsError classifies a local file-system failure at place (a path).
func fsError(place string, err error, doing string) *Error {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return errorf(CodeDiskFull, place, err, "%s", doing).
			withHint("free some space or choose another folder with --models-dir")
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS), errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EEXIST):
		return errorf(CodeCacheDir, place, err, "%s", doing).
			withHint("choose a writable folder with --models-dir")
	}
	return errorf(CodeIO, place, err, "%s", doing)
}

// cachedFile checks that dst is a complete cached file: a regular file whose
// size equals its sidecar's (and, when verify is set, whose SHA-256 too). A
// file that fails the hash is removed with its sidecar.
func cachedFile(dst string, verify bool) (sidecar, bool, error) {
	st, err := os.Stat(dst)
	if err != nil || !st.Mode().IsRegular() {
		return sidecar{}, false, nil
	}
	sc, ok := readSidecar(dst)
	if !ok || sc.Size != st.Size() {
		return sidecar{}, false, nil
	}
	if verify && sc.SHA256 != "" {
		sum, err := hashFile(dst, -1)
		if err != nil {
			return sidecar{}, false, fsError(dst, err, "re-hashing the cached file")
		}
		if sum != sc.SHA256 {
			os.Remove(dst)
			os.Remove(sidecarPath(dst))
			return sidecar{}, false, errorf(CodeChecksum, dst, nil, "the cached file's SHA-256 is %s, its sidecar says %s; removed", sum, sc.SHA256).
				withHint("start again without --offline to download it afresh")
		}
	}
	return sc, true, nil
}

// hashFile returns the hex SHA-256 of the first n bytes of name (all of it
// when n < 0).
func hashFile(name string, n int64) (string, error) {
	h := sha256.New()
	if err := hashInto(h, name, n); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashInto(h hash.Hash, name string, n int64) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	if n >= 0 {
		r = io.LimitReader(f, n)
	}
	got, err := io.Copy(h, r)
	if err == nil && n >= 0 && got != n {
		err = fmt.Errorf("%s is %d bytes, expected at least %d", name, got, n)
	}
	return err
}

// fetch downloads f of repo into dst: into dst.part first, resuming it with
// a range request when it exists, then checks size and SHA-256, writes the
// sidecar and renames the part to dst. A broken connection is retried (with
// a resume) while tries add bytes; cancellation keeps the part; a checksum
// mismatch or a full disk removes it.
func (c *client) fetch(ctx context.Context, repo string, f remoteFile, dst string) error {
	place := repo + "/" + f.Path
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fsError(filepath.Dir(dst), err, "creating the cache folder")
	}
	part := partPath(dst)
	d := &download{c: c, repo: repo, place: place, f: f, part: part, h: sha256.New()}
	var prog *progress
	for try := 0; ; try++ {
		have, err := d.partSize()
		if err != nil {
			return err
		}
		if prog == nil {
			prog = newProgress(c.o.Progress, place, f.Size, have, nil)
			d.prog = prog
		}
		if have == f.Size {
			break
		}
		gained, err := d.attempt(ctx, have)
		if err == nil {
			continue // the loop re-reads the part's size and breaks when complete
		}
		var he *Error
		if errors.As(err, &he) && he.Code == CodeNetwork && gained > 0 && try < c.o.Retries {
			continue
		}
		prog.finish(err)
		return err
	}
	if err := d.verify(); err != nil {
		prog.finish(err)
		return err
	}
	sc := sidecar{Repo: repo, File: f.Path, Size: f.Size, SHA256: d.sum, ETag: d.etag,
		Endpoint: c.endpoint.String(), Downloaded: time.Now().UTC()}
	data, _ := json.MarshalIndent(sc, "", "  ")
	if err := writeFileAtomic(sidecarPath(dst), append(data, '\n')); err != nil {
		prog.finish(err)
		return fsError(sidecarPath(dst), err, "writing the sidecar")
	}
	if err := os.Rename(part, dst); err != nil {
		prog.finish(err)
		return fsError(dst, err, "renaming the verified download")
	}
	prog.finish(nil)
	return nil
}

// download is the state of one file's transfer across tries.
type download struct {
	c      *client
	repo   string
	place  string
	f      remoteFile
	part   string
	prog   *progress
	h      hash.Hash // SHA-256 of the first hashed bytes of part
	hashed int64
	etag   string
	sum    string // set by verify
}

// partSize returns the size of the .part file (0 when absent), removing a
// part longer than the file, which cannot be a prefix of it.
func (d *download) partSize() (int64, error) {
	st, err := os.Stat(d.part)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 0, nil
	case err != nil:
		return 0, fsError(d.part, err, "reading the partial download")
	case !st.Mode().IsRegular():
		return 0, errorf(CodeIO, d.part, nil, "the partial download is not a regular file").
			withHint("remove it, or choose another folder with --models-dir")
	case st.Size() > d.f.Size:
		if err := os.Remove(d.part); err != nil {
			return 0, fsError(d.part, err, "removing an over-long partial download")
		}
		return 0, nil
	}
	return st.Size(), nil
}

// attempt makes one GET for the bytes from have on and appends them to the
// part. It returns how many bytes it added.
func (d *download) attempt(ctx context.Context, have int64) (int64, error) {
	u := d.c.url("/" + d.placePath())
	rctx, touch, stop := d.c.stallGuard(ctx)
	defer stop()
	req, err := d.c.request(rctx, u)
	if err != nil {
		return 0, err
	}
	if have > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(have, 10)+"-")
	}
	resp, err := d.c.do(ctx, req, d.place)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	flag := os.O_WRONLY | os.O_CREATE
	switch {
	case resp.StatusCode == http.StatusPartialContent && have > 0:
		start, total, ok := contentRange(resp.Header.Get("Content-Range"))
		if !ok || start != have || (total >= 0 && total != d.f.Size) {
			return 0, errorf(CodeProtocol, d.place, nil, "asked for bytes from %d, got Content-Range %q", have, clip(resp.Header.Get("Content-Range")))
		}
		flag |= os.O_APPEND
	case resp.StatusCode == http.StatusOK:
		flag |= os.O_TRUNC // the server ignored the range: start over
		if have > 0 {
			d.prog.restart()
		}
		have = 0
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && have > 0:
		// The part does not fit the remote file (it changed): start over.
		// The next try, without a part, asks for the whole file.
		if err := os.Remove(d.part); err != nil {
			return 0, fsError(d.part, err, "removing a stale partial download")
		}
		d.prog.restart()
		return 0, nil
	default:
		return 0, d.c.statusError(resp, d.place)
	}
	if et := resp.Header.Get("X-Linked-Etag"); et != "" {
		d.etag = et
	} else if et := resp.Header.Get("ETag"); et != "" {
		d.etag = et
	}
	if d.hashed != have {
		d.h.Reset()
		d.hashed = 0
		if err := hashInto(d.h, d.part, have); err != nil {
			return 0, fsError(d.part, err, "hashing the partial download")
		}
		d.hashed = have
	}
	out, err := openPart(d.part, flag)
	if err != nil {
		return 0, fsError(d.part, err, "opening the partial download")
	}
	// At most one byte more than expected is read: enough to tell a
	// too-long answer without letting a server fill the disk.
	want := d.f.Size - have
	w := &countWriter{w: out, h: d.h, prog: d.prog, touch: touch}
	_, cerr := io.Copy(w, io.LimitReader(resp.Body, want+1))
	d.hashed += w.n
	serr := out.Sync()
	if err := out.Close(); serr == nil {
		serr = err
	}
	switch {
	case w.werr != nil:
		return w.n, d.writeFailed(w.werr)
	case cerr != nil:
		if ctx.Err() != nil {
			return w.n, errorf(CodeCanceled, d.place, context.Cause(ctx), "stopped after %s of %s", size(have+w.n), size(d.f.Size)).
				withHint("start again to resume from the partial file")
		}
		if context.Cause(rctx) == errStalled {
			cerr = errStalled
		}
		return w.n, errorf(CodeNetwork, d.place, cerr, "connection to %s broke after %s of %s", d.c.endpoint.Host, size(have+w.n), size(d.f.Size)).
			withHint("start again to resume from the partial file, or pass a local file with --model PATH")
	case serr != nil:
		return w.n, d.writeFailed(serr)
	case w.n > want:
		os.Remove(d.part)
		return w.n, errorf(CodeChecksum, d.place, nil, "the server sent more than the %d bytes the listing announced; removed", d.f.Size).
			withHint("start again to download it afresh")
	case w.n < want:
		return w.n, errorf(CodeNetwork, d.place, io.ErrUnexpectedEOF, "the answer ended after %s of %s", size(have+w.n), size(d.f.Size)).
			withHint("start again to resume from the partial file")
	}
	return w.n, nil
}

// writeFailed removes the part after a failed write (a full disk leaves a
// file that may be cut anywhere; keeping it would only take more space).
func (d *download) writeFailed(err error) error {
	os.Remove(d.part)
	return fsError(d.part, err, "writing the download (the partial file was removed)")
}

// placePath returns "{repo}/resolve/main/{file}" with each segment escaped.
func (d *download) placePath() string {
	segs := strings.Split(d.f.Path, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return d.repo + "/resolve/main/" + strings.Join(segs, "/")
}

// verify checks the complete part against the listing's size and SHA-256,
// removing it on a mismatch.
func (d *download) verify() error {
	if d.hashed != d.f.Size {
		d.h.Reset()
		d.hashed = 0
		if err := hashInto(d.h, d.part, d.f.Size); err != nil {
			return fsError(d.part, err, "hashing the download")
		}
		d.hashed = d.f.Size
	}
	d.sum = hex.EncodeToString(d.h.Sum(nil))
	if d.f.SHA256 != "" && d.sum != d.f.SHA256 {
		os.Remove(d.part)
		return errorf(CodeChecksum, d.place, nil, "SHA-256 is %s, the hub says %s; the download was removed", d.sum, d.f.SHA256).
			withHint("start again to download it afresh; if it happens again the mirror or the upload is corrupt")
	}
	return nil
}

// contentRange parses "bytes START-END/TOTAL" (TOTAL may be "*": -1).
func contentRange(h string) (start, total int64, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimSpace(h), "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, tot, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, false
	}
	s, e, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, false
	}
	start, err1 := strconv.ParseInt(s, 10, 64)
	end, err2 := strconv.ParseInt(e, 10, 64)
	if err1 != nil || err2 != nil || start < 0 || end < start {
		return 0, 0, false
	}
	total = -1
	if tot != "*" {
		t, err := strconv.ParseInt(tot, 10, 64)
		if err != nil || t <= end {
			return 0, 0, false
		}
		total = t
	}
	return start, total, true
}

// countWriter writes to the part, feeds the hash and the progress, and
// keeps the first write error apart from read errors.
type countWriter struct {
	w     io.Writer
	h     hash.Hash
	prog  *progress
	touch func() // resets the stall guard
	n     int64
	werr  error
}

func (w *countWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.h.Write(p[:n])
	w.n += int64(n)
	w.prog.add(n)
	w.touch()
	if err != nil {
		w.werr = err
	}
	return n, err
}
