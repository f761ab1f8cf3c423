package hub

import (
	"strings"
	"testing"
)

var parseRefTests = []struct {
	in   string
	want Ref
}{
	{"org/repo", Ref{Repo: "org/repo"}},
	{"  org/repo\n", Ref{Repo: "org/repo"}},
	{"bartowski/Llama-3.2-1B-Instruct-GGUF:Q8_0", Ref{Repo: "bartowski/Llama-3.2-1B-Instruct-GGUF", Quant: "Q8_0"}},
	{"unsloth/Qwen3-8B-GGUF:UD-Q4_K_XL", Ref{Repo: "unsloth/Qwen3-8B-GGUF", Quant: "UD-Q4_K_XL"}},
	{"org/repo:q4_k_m", Ref{Repo: "org/repo", Quant: "q4_k_m"}},
	{"org/repo/model-Q4_K_M.gguf", Ref{Repo: "org/repo", File: "model-Q4_K_M.gguf"}},
	{"org/repo/Q4_K_M/model-Q4_K_M-00001-of-00002.GGUF", Ref{Repo: "org/repo", File: "Q4_K_M/model-Q4_K_M-00001-of-00002.GGUF"}},
	{"hf.co/org/repo:Q8_0", Ref{Repo: "org/repo", Quant: "Q8_0"}},
	{"https://huggingface.co/org/repo", Ref{Repo: "org/repo"}},
	{"org.name/re_po.v1", Ref{Repo: "org.name/re_po.v1"}},
}

var invalidRefs = []string{
	"",
	"   ",
	"org",
	"org/",
	"/repo",
	"org/repo:",
	"org/repo:Q4 K",
	"org/repo/file.bin",
	"org/repo/file.gguf:Q8_0",
	"org/repo/../x.gguf",
	"org/repo//x.gguf",
	"org/repo/./x.gguf",
	"org/repo/a\\b.gguf",
	"org/repo/a\x00b.gguf",
	"org/repo/a\nb.gguf",
	"org/re po",
	"../repo",
	"org/..",
	"org/repo/",
	"or g/repo",
	"org/" + strings.Repeat("r", 97),
	"org/repo:" + strings.Repeat("Q", 65),
	"org/repo/" + strings.Repeat("a/", 600) + "x.gguf",
}

func TestParseRef(t *testing.T) {
	for _, tt := range parseRefTests {
		got, err := ParseRef(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseRef(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			continue
		}
		// Round trip through String.
		again, err := ParseRef(got.String())
		if err != nil || again != got {
			t.Errorf("ParseRef(%q.String() = %q) = %+v, %v; want %+v", tt.in, got.String(), again, err, got)
		}
	}
}

func TestParseRefInvalid(t *testing.T) {
	for _, in := range invalidRefs {
		got, err := ParseRef(in)
		if err == nil {
			t.Errorf("ParseRef(%q) = %+v, want an error", in, got)
			continue
		}
		if c := code(t, err); c != CodeBadRef {
			t.Errorf("ParseRef(%q): code %v, want %v", in, c, CodeBadRef)
		}
		if !strings.Contains(err.Error(), "org/repo:QUANT") {
			t.Errorf("ParseRef(%q) error %q does not show the accepted forms", in, err)
		}
	}
}

func TestRefString(t *testing.T) {
	tests := []struct {
		r    Ref
		want string
	}{
		{Ref{Repo: "a/b"}, "a/b"},
		{Ref{Repo: "a/b", Quant: "Q8_0"}, "a/b:Q8_0"},
		{Ref{Repo: "a/b", File: "d/f.gguf"}, "a/b/d/f.gguf"},
	}
	for _, tt := range tests {
		if got := tt.r.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.r, got, tt.want)
		}
	}
}
