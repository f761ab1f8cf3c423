package hub

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Listing budgets: the hub pages its tree listing (about 1000 entries per
// page); maxListPages pages cover repositories far larger than any GGUF
// repository, and maxListBytes bounds one page's JSON so a broken or
// hostile server cannot exhaust memory.
const (
	maxListPages = 100
	maxListBytes = 64 << 20
)

// treeEntry is one entry of GET /api/models/{repo}/tree/{rev}.
type treeEntry struct {
	Type string `json:"type"` // "file" or "directory"
	Path string `json:"path"`
	Size int64  `json:"size"`
	LFS  *struct {
		OID  string `json:"oid"` // SHA-256 of the content, hex
		Size int64  `json:"size"`
	} `json:"lfs"`
}

// client carries the checked options of one Resolve call.
type client struct {
	o        Options
	endpoint *url.URL // without trailing slash
	hc       *http.Client
	cache    string
}

// newClient applies the defaults of o and checks the endpoint.
func newClient(o Options) (*client, error) {
	ep := o.Endpoint
	if ep == "" {
		ep = DefaultEndpoint
	}
	u, err := url.Parse(strings.TrimRight(ep, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, errorf(CodeConfig, clip(ep), nil, "the endpoint is not an http(s) base URL").
			withHint("pass something like --hf-endpoint https://huggingface.co")
	}
	c := &client{o: o, endpoint: u, hc: o.HTTPClient, cache: o.CacheDir}
	if c.hc == nil {
		c.hc = http.DefaultClient
	}
	if c.cache == "" {
		c.cache = DefaultCacheDir()
	}
	if c.o.Retries == 0 {
		c.o.Retries = DefaultRetries
	}
	if c.o.StallTimeout == 0 {
		c.o.StallTimeout = DefaultStallTimeout
	}
	return c, nil
}

// url returns the endpoint URL with the given escaped path appended.
func (c *client) url(escapedPath string) string {
	return c.endpoint.String() + escapedPath
}

// request makes a GET request; the token goes only to the endpoint's host
// (and http.Client drops it on redirects to other hosts, such as the CDN).
func (c *client) request(ctx context.Context, rawURL string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, errorf(CodeInternal, clip(rawURL), err, "building a request")
	}
	req.Header.Set("User-Agent", "conform-hub/1")
	if c.o.Token != "" && req.URL.Host == c.endpoint.Host {
		req.Header.Set("Authorization", "Bearer "+c.o.Token)
	}
	return req, nil
}

// do sends req and turns a transport failure into a CodeCanceled or
// CodeNetwork error.
func (c *client) do(ctx context.Context, req *http.Request, place string) (*http.Response, error) {
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, place, err)
	}
	return resp, nil
}

// transportError classifies an error from the network. ctx is the caller's
// context: only its end is a cancellation; a request context ended by the
// stall guard is a network failure.
func (c *client) transportError(ctx context.Context, place string, err error) *Error {
	if ctx.Err() != nil {
		return errorf(CodeCanceled, place, context.Cause(ctx), "stopped").
			withHint("start again to resume")
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the URL is already the place
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, errStalled) {
		err = errStalled
	}
	return errorf(CodeNetwork, place, err, "could not reach %s", c.endpoint).
		withHint("pass a local file with --model PATH, or try --demo")
}

// statusError turns an unexpected HTTP status into an *Error, using the
// hub's X-Error-Code header where it tells more (HF answers 401 for a
// repository that does not exist, to hide private ones).
func (c *client) statusError(resp *http.Response, place string) *Error {
	hfCode := resp.Header.Get("X-Error-Code")
	msg := resp.Header.Get("X-Error-Message")
	if msg == "" {
		msg = resp.Status
	}
	msg = clip(msg)
	switch {
	case hfCode == "RepoNotFound" || hfCode == "EntryNotFound" || hfCode == "RevisionNotFound" || resp.StatusCode == http.StatusNotFound:
		e := errorf(CodeNotFound, place, nil, "%s", msg)
		if c.o.Token == "" {
			return e.withHint("check the name on the model page; a private repository also needs HF_TOKEN")
		}
		return e.withHint("check the name on the model page")
	case hfCode == "GatedRepo" || resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return errorf(CodeGated, place, nil, "%s", msg).
			withHint("the model is gated or private: accept the license on the model page and set HF_TOKEN")
	case resp.StatusCode == http.StatusTooManyRequests:
		return errorf(CodeHTTP, place, nil, "%s", msg).
			withHint("the hub is rate-limiting: set HF_TOKEN or try again later")
	}
	return errorf(CodeHTTP, place, nil, "%s", msg).
		withHint("try again later, or pass a local file with --model PATH")
}

// errStalled is the cause a stall guard cancels a request with.
var errStalled = errors.New("no data received within the stall timeout")

// stallGuard derives a request context from ctx that is cancelled (with
// cause errStalled) when touch is not called for the stall timeout. stop
// releases the timer.
func (c *client) stallGuard(ctx context.Context) (rctx context.Context, touch, stop func()) {
	rctx, cancel := context.WithCancelCause(ctx)
	if c.o.StallTimeout < 0 {
		return rctx, func() {}, func() { cancel(nil) }
	}
	t := time.AfterFunc(c.o.StallTimeout, func() { cancel(errStalled) })
	return rctx, func() { t.Reset(c.o.StallTimeout) }, func() { t.Stop(); cancel(nil) }
}

// list returns the files of repo at revision main, following the listing's
// pages.
func (c *client) list(ctx context.Context, repo string) ([]remoteFile, error) {
	next := c.url("/api/models/" + repo + "/tree/main?recursive=true")
	var files []remoteFile
	for page := 0; next != ""; page++ {
		if page == maxListPages {
			return nil, errorf(CodeProtocol, repo, nil, "listing longer than %d pages", maxListPages)
		}
		rctx, _, stop := c.stallGuard(ctx) // a page is small: one timeout for all of it
		req, err := c.request(rctx, next)
		if err != nil {
			stop()
			return nil, err
		}
		resp, err := c.do(ctx, req, repo)
		if err != nil {
			stop()
			return nil, err
		}
		entries, err := c.readPage(ctx, resp, repo)
		stop()
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			f, ok, err := fileOf(e, repo)
			if err != nil {
				return nil, err
			}
			if ok {
				files = append(files, f)
			}
		}
		next = nextLink(resp.Header.Get("Link"), req.URL)
	}
	return files, nil
}

// readPage decodes one page of the listing and closes the body.
func (c *client) readPage(ctx context.Context, resp *http.Response, repo string) ([]treeEntry, error) {
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, c.statusError(resp, repo)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxListBytes+1))
	if err != nil {
		return nil, c.transportError(ctx, repo, err)
	}
	if len(body) > maxListBytes {
		return nil, errorf(CodeProtocol, repo, nil, "listing page larger than %d bytes", maxListBytes)
	}
	var entries []treeEntry
	if err := json.Unmarshal(body, &entries); err != nil {
		return nil, errorf(CodeProtocol, repo, err, "reading the file listing").
			withHint("check --hf-endpoint points at a Hugging Face compatible hub")
	}
	return entries, nil
}

// fileOf converts a listing entry; ok is false for directories and for
// entries that are not files. A file path that would escape the cache, a
// negative size or a malformed LFS oid is an error: the listing is not
// trusted.
func fileOf(e treeEntry, repo string) (f remoteFile, ok bool, err error) {
	if e.Type != "file" {
		return remoteFile{}, false, nil
	}
	if msg := checkFilePath(e.Path); msg != "" {
		return remoteFile{}, false, errorf(CodeProtocol, repo, nil, "listing: %s", msg)
	}
	f = remoteFile{Path: e.Path, Size: e.Size}
	if e.LFS != nil {
		oid := strings.ToLower(e.LFS.OID)
		if b, err := hex.DecodeString(oid); err != nil || len(b) != 32 {
			return remoteFile{}, false, errorf(CodeProtocol, repo+"/"+e.Path, nil, "listing: LFS oid %q is not a SHA-256", clip(e.LFS.OID))
		}
		f.SHA256, f.Size = oid, e.LFS.Size
	}
	if f.Size < 0 {
		return remoteFile{}, false, errorf(CodeProtocol, repo+"/"+e.Path, nil, "listing: negative size %d", f.Size)
	}
	return f, true, nil
}

// nextLink returns the absolute URL of the rel="next" link of an RFC 8288
// Link header, or "".
func nextLink(h string, base *url.URL) string {
	for _, link := range strings.Split(h, ",") {
		link = strings.TrimSpace(link)
		if !strings.HasPrefix(link, "<") {
			continue
		}
		end := strings.IndexByte(link, '>')
		if end < 0 {
			continue
		}
		target, params := link[1:end], link[end+1:]
		isNext := false
		for _, p := range strings.Split(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(strings.TrimSpace(k), "rel") {
				for _, r := range strings.Fields(strings.Trim(strings.TrimSpace(v), `"`)) {
					isNext = isNext || strings.EqualFold(r, "next")
				}
			}
		}
		if !isNext {
			continue
		}
		u, err := base.Parse(target)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			return ""
		}
		return u.String()
	}
	return ""
}
