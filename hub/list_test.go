package hub

import (
	"net/http"
	"net/url"
	"testing"
)

func TestContentRange(t *testing.T) {
	tests := []struct {
		h            string
		start, total int64
		ok           bool
	}{
		{"bytes 100-199/200", 100, 200, true},
		{"bytes 0-0/1", 0, 1, true},
		{"bytes 5-9/*", 5, -1, true},
		{"bytes 5-9/9", 0, 0, false}, // end beyond total
		{"bytes 9-5/20", 0, 0, false},
		{"bytes */200", 0, 0, false},
		{"items 0-1/2", 0, 0, false},
		{"bytes -1-5/10", 0, 0, false},
		{"", 0, 0, false},
	}
	for _, tt := range tests {
		start, total, ok := contentRange(tt.h)
		if start != tt.start || total != tt.total || ok != tt.ok {
			t.Errorf("contentRange(%q) = %d, %d, %v; want %d, %d, %v", tt.h, start, total, ok, tt.start, tt.total, tt.ok)
		}
	}
}

func TestNextLink(t *testing.T) {
	base, _ := url.Parse("https://hub.example/api/models/o/r/tree/main?recursive=true")
	tests := []struct{ h, want string }{
		{`<https://hub.example/api/models/o/r/tree/main?cursor=abc>; rel="next"`, "https://hub.example/api/models/o/r/tree/main?cursor=abc"},
		{`</api/x?cursor=2>; rel=next`, "https://hub.example/api/x?cursor=2"},
		{`<https://a/prev>; rel="prev", <https://a/next>; rel="next"`, "https://a/next"},
		{`<https://a/x>; rel="prev next"`, "https://a/x"},
		{`<https://a/x>; rel="prev"`, ""},
		{`<file:///etc/passwd>; rel="next"`, ""},
		{`garbage`, ""},
		{`<unterminated; rel="next"`, ""},
		{``, ""},
	}
	for _, tt := range tests {
		if got := nextLink(tt.h, base); got != tt.want {
			t.Errorf("nextLink(%q) = %q, want %q", tt.h, got, tt.want)
		}
	}
}

func TestStatusError(t *testing.T) {
	c, err := newClient(Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		status int
		hfCode string
		want   ErrorCode
	}{
		{401, "RepoNotFound", CodeNotFound}, // HF hides private repositories behind 401
		{404, "", CodeNotFound},
		{404, "EntryNotFound", CodeNotFound},
		{404, "RevisionNotFound", CodeNotFound},
		{401, "", CodeGated},
		{403, "", CodeGated},
		{403, "GatedRepo", CodeGated},
		{429, "", CodeHTTP},
		{500, "", CodeHTTP},
	}
	for _, tt := range tests {
		resp := &http.Response{StatusCode: tt.status, Status: http.StatusText(tt.status), Header: http.Header{}}
		if tt.hfCode != "" {
			resp.Header.Set("X-Error-Code", tt.hfCode)
		}
		if got := c.statusError(resp, "o/r").Code; got != tt.want {
			t.Errorf("statusError(%d, X-Error-Code %q).Code = %v, want %v", tt.status, tt.hfCode, got, tt.want)
		}
	}
}

func TestFileOf(t *testing.T) {
	sha := "3f0c4bcd7d7c9b2c2d0d6b4a0e8c4c2f5a8b1e9d7c6b5a4f3e2d1c0b9a8f7e6d"
	type lfs = struct {
		OID  string `json:"oid"`
		Size int64  `json:"size"`
	}
	tests := []struct {
		e    treeEntry
		want remoteFile
		ok   bool
		err  bool
	}{
		{treeEntry{Type: "directory", Path: "d"}, remoteFile{}, false, false},
		{treeEntry{Type: "file", Path: "a.md", Size: 3}, remoteFile{Path: "a.md", Size: 3}, true, false},
		{treeEntry{Type: "file", Path: "m.gguf", Size: 134, LFS: &lfs{OID: sha, Size: 9}}, remoteFile{Path: "m.gguf", Size: 9, SHA256: sha}, true, false},
		{treeEntry{Type: "file", Path: "m.gguf", LFS: &lfs{OID: "ABCD", Size: 9}}, remoteFile{}, false, true},
		{treeEntry{Type: "file", Path: "../m.gguf", Size: 1}, remoteFile{}, false, true},
		{treeEntry{Type: "file", Path: "m.gguf", Size: -4}, remoteFile{}, false, true},
	}
	for _, tt := range tests {
		got, ok, err := fileOf(tt.e, "o/r")
		if got != tt.want || ok != tt.ok || (err != nil) != tt.err {
			t.Errorf("fileOf(%+v) = %+v, %v, %v; want %+v, %v, error %v", tt.e, got, ok, err, tt.want, tt.ok, tt.err)
		}
	}
}
