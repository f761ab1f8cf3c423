package hub

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// bigListing is a listing shaped like a large GGUF repository: 30
// quantizations, some split, with projectors and text files.
func bigListing() []remoteFile {
	quants := []string{"Q2_K", "Q3_K_S", "Q3_K_M", "Q3_K_L", "Q4_0", "Q4_1", "Q4_K_S", "Q4_K_M", "Q5_0", "Q5_1",
		"Q5_K_S", "Q5_K_M", "Q6_K", "Q8_0", "IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ2_M",
		"IQ3_XXS", "IQ3_XS", "IQ3_S", "IQ3_M", "IQ4_XS", "IQ4_NL", "UD-Q4_K_XL", "F16", "BF16", "Q4_K_XL"}
	var out []remoteFile
	for i, q := range quants {
		if i%3 == 0 {
			for p := 1; p <= 4; p++ {
				out = append(out, remoteFile{Path: fmt.Sprintf("%s/Model-70B-%s-%05d-of-00004.gguf", q, q, p), Size: 1 << 30})
			}
		}
		out = append(out, remoteFile{Path: "Model-70B-" + q + ".gguf", Size: 1 << 30})
	}
	return append(out, remoteFile{Path: "mmproj-F16.gguf"}, remoteFile{Path: "README.md"}, remoteFile{Path: ".gitattributes"})
}

// BenchmarkChoose measures picking a model from a 73-file listing (done
// once per start; it should be negligible next to the listing request).
func BenchmarkChoose(b *testing.B) {
	files := bigListing()
	ref := Ref{Repo: "o/r", Quant: "IQ4_XS"}
	for b.Loop() {
		if _, err := choose(files, ref); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDownload measures a whole Resolve of an 8 MiB file from a
// local fake hub (listing, transfer, SHA-256 while writing, fsync, rename):
// the per-byte overhead of the download path without a real network.
func BenchmarkDownload(b *testing.B) {
	const n = 8 << 20
	h := newFakeHub(b)
	h.add("o/r", "m-Q4_K_M.gguf", &fakeFile{data: randBytes(n, 1)})
	base := b.TempDir()
	b.SetBytes(n)
	i := 0
	for b.Loop() {
		i++
		dir := filepath.Join(base, strconv.Itoa(i))
		if _, err := Resolve(b.Context(), Ref{Repo: "o/r"}, Options{Endpoint: h.srv.URL, CacheDir: dir}); err != nil {
			b.Fatal(err)
		}
		os.RemoveAll(dir)
	}
}

// BenchmarkCacheHit measures a Resolve answered from the cache (sidecar
// read and stat, no request): the cost a second start pays.
func BenchmarkCacheHit(b *testing.B) {
	dir := b.TempDir()
	dst := filepath.Join(dir, "o", "r", "m-Q4_K_M.gguf")
	os.MkdirAll(filepath.Dir(dst), 0o755)
	os.WriteFile(dst, make([]byte, 1000), 0o644)
	os.WriteFile(sidecarPath(dst), []byte(`{"size":1000,"sha256":"x"}`), 0o644)
	recordRef(filepath.Join(dir, "o", "r"), "", "m-Q4_K_M.gguf")
	o := Options{CacheDir: dir, Offline: true}
	for b.Loop() {
		if _, err := Resolve(b.Context(), Ref{Repo: "o/r"}, o); err != nil {
			b.Fatal(err)
		}
	}
}
