package hub

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"testing"
)

// FuzzParseRef checks that ParseRef never panics, that what it accepts
// passes checkRef, round-trips through String, and names a file that stays
// inside the cache folder.
func FuzzParseRef(f *testing.F) {
	for _, tt := range parseRefTests {
		f.Add(tt.in)
	}
	for _, s := range invalidRefs {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRef(s)
		if err != nil {
			if c := code(t, err); c != CodeBadRef {
				t.Fatalf("ParseRef(%q): code %v, want %v", s, c, CodeBadRef)
			}
			return
		}
		if err := checkRef(r); err != nil {
			t.Fatalf("ParseRef(%q) = %+v, which checkRef rejects: %v", s, r, err)
		}
		again, err := ParseRef(r.String())
		if err != nil || again != r {
			t.Fatalf("ParseRef(%q) = %+v; ParseRef(%q) = %+v, %v", s, r, r.String(), again, err)
		}
		local := filepath.Join(filepath.FromSlash(r.Repo), filepath.FromSlash(r.File))
		if !filepath.IsLocal(local) {
			t.Fatalf("ParseRef(%q) = %+v: cache path %q leaves the cache", s, r, local)
		}
	})
}

// FuzzQuant checks that a quantization read from a name is found in it by
// matchQuant, so an error's list of quantizations only offers choices that
// work.
func FuzzQuant(f *testing.F) {
	for _, s := range []string{"m-Q4_K_M.gguf", "Q8_0/m-00001-of-00002.gguf", "a.q5_1.gguf", "x-IQ4_XS-IQ4_XS.gguf", "UD-Q4_K_XL-00002-of-00003.gguf"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		q := quantOf(p)
		if q != "" && !matchQuant(p, q) {
			t.Fatalf("quantOf(%q) = %q, but matchQuant(%q, %q) = false", p, q, p, q)
		}
		splitInfo(p)
	})
}

// FuzzListing feeds arbitrary listing JSON through fileOf and choose: no
// panic, and a chosen model is made of listed, safe paths.
func FuzzListing(f *testing.F) {
	f.Add(`[{"type":"file","path":"m-Q4_K_M.gguf","size":3,"lfs":{"oid":"3f0c4bcd7d7c9b2c2d0d6b4a0e8c4c2f5a8b1e9d7c6b5a4f3e2d1c0b9a8f7e6d","size":3}}]`, "")
	f.Add(`[{"type":"file","path":"a-00001-of-00002.gguf","size":1},{"type":"file","path":"a-00002-of-00002.gguf","size":1}]`, "A")
	f.Add(`[{"type":"directory","path":"d"},{"type":"file","path":"d/x.gguf","size":1}]`, "Q8_0")
	f.Fuzz(func(t *testing.T, listing, quant string) {
		var entries []treeEntry
		if json.Unmarshal([]byte(listing), &entries) != nil {
			return
		}
		listed := map[string]bool{}
		var files []remoteFile
		for _, e := range entries {
			if fl, ok, err := fileOf(e, "o/r"); err == nil && ok {
				files = append(files, fl)
				listed[fl.Path] = true
			}
		}
		ref := Ref{Repo: "o/r", Quant: quant}
		if quant != "" && quant[0] == '/' {
			ref = Ref{Repo: "o/r", File: quant[1:]}
		}
		parts, err := choose(files, ref)
		if err != nil {
			code(t, err)
			return
		}
		if len(parts) == 0 {
			t.Fatalf("choose(%s) gave no file and no error", ref)
		}
		for _, p := range parts {
			if !listed[p.Path] || !filepath.IsLocal(filepath.FromSlash(p.Path)) {
				t.Fatalf("choose(%s) gave %q: not listed or not local", ref, p.Path)
			}
		}
	})
}

// FuzzHeaders checks the Content-Range and Link parsers: no panic, and
// only consistent ranges and http(s) links come out.
func FuzzHeaders(f *testing.F) {
	f.Add("bytes 1-2/3")
	f.Add(`<https://a/b?cursor=1>; rel="next"`)
	base, _ := url.Parse("https://hub.example/api/models/o/r/tree/main")
	f.Fuzz(func(t *testing.T, h string) {
		if start, total, ok := contentRange(h); ok && (start < 0 || total != -1 && total <= start) {
			t.Fatalf("contentRange(%q) = %d, %d, true", h, start, total)
		}
		if l := nextLink(h, base); l != "" {
			u, err := url.Parse(l)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
				t.Fatalf("nextLink(%q) = %q", h, l)
			}
		}
	})
}
