package hub

import (
	"strings"
	"testing"
)

func files(paths ...string) []remoteFile {
	out := make([]remoteFile, len(paths))
	for i, p := range paths {
		out[i] = remoteFile{Path: p, Size: int64(i + 1)}
	}
	return out
}

func TestQuantOf(t *testing.T) {
	tests := []struct{ path, want string }{
		{"Llama-3.2-1B-Instruct-Q4_K_M.gguf", "Q4_K_M"},
		{"model.q8_0.gguf", "Q8_0"},
		{"Qwen3-8B-UD-Q4_K_XL.gguf", "Q4_K_XL"},
		{"model-IQ2_XXS.gguf", "IQ2_XXS"},
		{"model-f16.gguf", "F16"},
		{"model-BF16-00001-of-00002.gguf", "BF16"},
		{"Q5_K_M/model-00001-of-00003.gguf", "Q5_K_M"},
		{"gpt-oss-20b-MXFP4.gguf", "MXFP4"},
		{"model-TQ1_0.gguf", "TQ1_0"},
		{"model.gguf", ""},
		{"Qwen3-8B.gguf", ""}, // "8B" is a size, not a quantization
	}
	for _, tt := range tests {
		if got := quantOf(tt.path); got != tt.want {
			t.Errorf("quantOf(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

func TestMatchQuant(t *testing.T) {
	tests := []struct {
		path, q string
		want    bool
	}{
		{"model-Q4_K_M.gguf", "Q4_K_M", true},
		{"model-Q4_K_M.gguf", "q4_k_m", true},
		{"model-Q4_K_M.gguf", "Q4_K", false},
		{"model-Q4_K_M.gguf", "4_K_M", false},
		{"model_Q4_K_M.gguf", "Q4_K_M", true},
		{"model-IQ4_XS.gguf", "Q4_XS", false},
		{"model-IQ4_XS.gguf", "IQ4_XS", true},
		{"model-UD-Q4_K_XL.gguf", "Q4_K_XL", true},
		{"model-UD-Q4_K_XL.gguf", "UD-Q4_K_XL", true},
		{"model.Q8_0.gguf", "Q8_0", true},
		{"Q8_0/model-00001-of-00002.gguf", "Q8_0", true},
		{"xQ8_0-Q8_0.gguf", "Q8_0", true}, // the second occurrence counts
		{"model-Q8_0.gguf", "", false},
	}
	for _, tt := range tests {
		if got := matchQuant(tt.path, tt.q); got != tt.want {
			t.Errorf("matchQuant(%q, %q) = %v, want %v", tt.path, tt.q, got, tt.want)
		}
	}
}

func TestChoose(t *testing.T) {
	repo := files(
		"README.md",
		"model-Q4_K_M.gguf",
		"model-Q4_K_S.gguf",
		"model-IQ4_XS.gguf",
		"model-UD-Q4_K_XL.gguf",
		"model-Q4_K_XL.gguf",
		"model-Q8_0.gguf",
		"mmproj-model-F16.gguf",
		"BF16/model-BF16-00001-of-00002.gguf",
		"BF16/model-BF16-00002-of-00002.gguf",
		"Q6_K/model-Q6_K-00001-of-00002.gguf",
		"Q6_K/model-Q6_K-00002-of-00002.gguf",
		"model-Q6_K.gguf",
		"F16/model-F16-00001-of-00003.gguf",
		"F16/model-F16-00003-of-00003.gguf",
	)
	tests := []struct {
		ref  Ref
		want string // paths joined by " "; "" when an error is expected
		code ErrorCode
	}{
		{Ref{Repo: "o/r"}, "model-Q4_K_M.gguf", 0},
		{Ref{Repo: "o/r", Quant: "q4_k_s"}, "model-Q4_K_S.gguf", 0},
		{Ref{Repo: "o/r", Quant: "Q4_K_XL"}, "model-Q4_K_XL.gguf", 0}, // exact token before UD-
		{Ref{Repo: "o/r", Quant: "UD-Q4_K_XL"}, "model-UD-Q4_K_XL.gguf", 0},
		{Ref{Repo: "o/r", Quant: "Q6_K"}, "model-Q6_K.gguf", 0}, // single before split
		{Ref{Repo: "o/r", Quant: "BF16"}, "BF16/model-BF16-00001-of-00002.gguf BF16/model-BF16-00002-of-00002.gguf", 0},
		{Ref{Repo: "o/r", File: "BF16/model-BF16-00002-of-00002.gguf"}, "BF16/model-BF16-00001-of-00002.gguf BF16/model-BF16-00002-of-00002.gguf", 0},
		{Ref{Repo: "o/r", File: "mmproj-model-F16.gguf"}, "mmproj-model-F16.gguf", 0},
		{Ref{Repo: "o/r", Quant: "F16"}, "", CodeSplit},
		{Ref{Repo: "o/r", Quant: "Q2_K"}, "", CodeUnknownQuant},
		{Ref{Repo: "o/r", Quant: "Q4"}, "", CodeUnknownQuant},
		{Ref{Repo: "o/r", File: "nope.gguf"}, "", CodeNotFound},
	}
	for _, tt := range tests {
		got, err := choose(repo, tt.ref)
		if tt.want == "" {
			if err == nil {
				t.Errorf("choose(%s) = %v, want code %v", tt.ref, got, tt.code)
			} else if c := code(t, err); c != tt.code {
				t.Errorf("choose(%s): code %v, want %v (%v)", tt.ref, c, tt.code, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("choose(%s) = %v, want %s", tt.ref, err, tt.want)
			continue
		}
		var paths []string
		for _, f := range got {
			paths = append(paths, f.Path)
		}
		if g := strings.Join(paths, " "); g != tt.want {
			t.Errorf("choose(%s) = %s, want %s", tt.ref, g, tt.want)
		}
	}
}

func TestChooseFallbacks(t *testing.T) {
	tests := []struct {
		name  string
		files []remoteFile
		ref   Ref
		want  string
		code  ErrorCode
	}{
		{"one model, default quant", files("model-Q8_0.gguf", "mmproj-f16.gguf"), Ref{Repo: "o/r"}, "model-Q8_0.gguf", 0},
		{"one model without a quant name", files("model.gguf"), Ref{Repo: "o/r"}, "model.gguf", 0},
		{"one model, explicit other quant", files("model-Q8_0.gguf"), Ref{Repo: "o/r", Quant: "Q4_K_M"}, "", CodeUnknownQuant},
		{"two models, no default", files("model-Q8_0.gguf", "model-Q6_K.gguf"), Ref{Repo: "o/r"}, "", CodeUnknownQuant},
		{"no gguf", files("model.safetensors", "config.json"), Ref{Repo: "o/r"}, "", CodeNoGGUF},
		{"projector only", files("mmproj-f16.gguf"), Ref{Repo: "o/r"}, "", CodeNoGGUF},
		{"root before folder", files("sub/m-Q4_K_M.gguf", "m-Q4_K_M.gguf"), Ref{Repo: "o/r"}, "m-Q4_K_M.gguf", 0},
	}
	for _, tt := range tests {
		got, err := choose(tt.files, tt.ref)
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("%s: choose = %v, want code %v", tt.name, got, tt.code)
		case tt.want == "":
			if c := code(t, err); c != tt.code {
				t.Errorf("%s: choose code %v, want %v (%v)", tt.name, c, tt.code, err)
			}
		case err != nil:
			t.Errorf("%s: choose = %v, want %s", tt.name, err, tt.want)
		case len(got) != 1 || got[0].Path != tt.want:
			t.Errorf("%s: choose = %v, want %s", tt.name, got, tt.want)
		}
	}
}

func TestSplitInfo(t *testing.T) {
	tests := []struct {
		path     string
		part, of int
		prefix   string
		ok       bool
	}{
		{"m-00001-of-00003.gguf", 1, 3, "m", true},
		{"d/m-Q8_0-00003-of-00003.GGUF", 3, 3, "d/m-Q8_0", true},
		{"m-00004-of-00003.gguf", 0, 0, "", false},
		{"m-00000-of-00003.gguf", 0, 0, "", false},
		{"m-00001-of-09999.gguf", 0, 0, "", false}, // over maxSplitParts
		{"m-0001-of-0003.gguf", 0, 0, "", false},
		{"m.gguf", 0, 0, "", false},
	}
	for _, tt := range tests {
		part, of, prefix, ok := splitInfo(tt.path)
		if part != tt.part || of != tt.of || prefix != tt.prefix || ok != tt.ok {
			t.Errorf("splitInfo(%q) = %d, %d, %q, %v; want %d, %d, %q, %v", tt.path, part, of, prefix, ok, tt.part, tt.of, tt.prefix, tt.ok)
		}
	}
	if got, want := splitPath("d/m", 2, 12), "d/m-00002-of-00012.gguf"; got != want {
		t.Errorf("splitPath(d/m, 2, 12) = %q, want %q", got, want)
	}
}
