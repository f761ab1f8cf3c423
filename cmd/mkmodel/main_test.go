package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"conform/gguf"
	"conform/internal/mkmodel"
	"conform/internal/sharedtest"
	"conform/tokenizer"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "t.jinja")
	if err := os.WriteFile(tmpl, []byte("{{ messages }}"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "m.gguf")
	if err := run(config{preset: "tiny", tokenizer: "cl100k", template: tmpl, seed: 3, out: out}); err != nil {
		t.Fatalf("run: %v", err)
	}
	f, err := gguf.Open(out)
	if err != nil {
		t.Fatalf("gguf.Open(output): %v", err)
	}
	if got, _ := f.String("tokenizer.chat_template"); got != "{{ messages }}" {
		t.Errorf("chat template = %q, want the -chat-template file", got)
	}
	if got, _ := f.Uint32("llama.embedding_length"); got != 64 {
		t.Errorf("embedding_length = %d, want the tiny preset's 64", got)
	}
	q4 := filepath.Join(dir, "q4.gguf")
	if err := run(config{preset: "tiny", tokenizer: "cl100k", seed: 3, typ: "q4_0", out: q4}); err != nil {
		t.Fatalf("run(-type q4_0): %v", err)
	}
	if f, err := gguf.Open(q4); err != nil {
		t.Fatal(err)
	} else if ft, _ := f.Uint32("general.file_type"); ft != 2 {
		t.Errorf("-type q4_0: general.file_type = %d, want 2 (MOSTLY_Q4_0)", ft)
	}
	bad := []struct {
		c    config
		want string
	}{
		{config{preset: "tiny", tokenizer: "cl100k", typ: "q5_k", out: out}, "unknown -type"},
		{config{preset: "tiny", out: out}, "required"},
		{config{preset: "tiny", tokenizer: "cl100k"}, "required"},
		{config{preset: "huge", tokenizer: "cl100k", out: out}, "unknown preset"},
		{config{preset: "tiny", tokenizer: filepath.Join(dir, "absent.json"), out: out}, "vocabulary"},
		{config{preset: "tiny", tokenizer: "cl100k", template: filepath.Join(dir, "absent.jinja"), out: out}, "chat template"},
		{config{preset: "tiny", tokenizer: "cl100k", family: "llama9", template: tmpl, out: out}, "unknown family"},
		{config{preset: "tiny", tokenizer: "cl100k", family: "qwen3", out: out}, "needs -chat-template"},
		{config{preset: "tiny", family: "qwen3", template: tmpl, out: out}, "required"},
		{config{preset: "tiny", family: "qwen3", shared: filepath.Join(dir, "no-shared"), out: out}, "vocabulary"},
	}
	for _, tt := range bad {
		err := run(tt.c)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("run(%+v): got %v, want an error containing %q", tt.c, err, tt.want)
		}
	}
}

// TestFamilyApply applies a family to small hand-made vocabularies: every
// way a marker can land (already an added token, at its real id in a hole,
// appended) and the ordinary-token error.
func TestFamilyApply(t *testing.T) {
	const (
		normal = tokenizer.TokenTypeNormal
		ctrl   = tokenizer.TokenTypeControl
		user   = tokenizer.TokenTypeUserDefined
		unused = tokenizer.TokenTypeUnused
	)
	fam := family{
		markers: []marker{
			{"<s>", ctrl, -1},
			{"<think>", user, -1},
			{"<|call|>", ctrl, 2},
			{"<|end|>", ctrl, 9},
		},
		bos: "<s>", eos: "<|end|>",
	}
	tests := []struct {
		name       string
		tokens     []string
		types      []int32
		scores     bool
		wantTokens []string
		wantTypes  []int32
		bos, eos   int
		err        string
	}{
		{
			name:       "all appended",
			tokens:     []string{"a", "b"},
			types:      []int32{normal, normal},
			wantTokens: []string{"a", "b", "<s>", "<think>", "<|call|>", "<|end|>"},
			wantTypes:  []int32{normal, normal, ctrl, user, ctrl, ctrl},
			bos:        2, eos: 5,
		},
		{
			name:       "existing added tokens take the family's type, a hole at the real id is filled",
			tokens:     []string{"<think>", "a", "<|unused_2|>", "<s>"},
			types:      []int32{ctrl, normal, unused, user},
			scores:     true,
			wantTokens: []string{"<think>", "a", "<|call|>", "<s>", "<|end|>"},
			wantTypes:  []int32{user, normal, ctrl, ctrl, ctrl},
			bos:        3, eos: 4,
		},
		{
			name:       "a used id is not taken",
			tokens:     []string{"a", "b", "c"},
			types:      []int32{normal, normal, normal},
			wantTokens: []string{"a", "b", "c", "<s>", "<think>", "<|call|>", "<|end|>"},
			wantTypes:  []int32{normal, normal, normal, ctrl, user, ctrl, ctrl},
			bos:        3, eos: 6,
		},
		{
			name:   "marker is an ordinary token",
			tokens: []string{"a", "<think>"},
			types:  []int32{normal, normal},
			err:    `marker "<think>" is an ordinary token (id 1)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := &mkmodel.Vocab{Tokens: slices.Clone(tt.tokens), Types: slices.Clone(tt.types), Source: "test"}
			if tt.scores {
				v.Scores = make([]float32, len(v.Tokens))
			}
			err := fam.apply(v)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("apply: got %v, want an error containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("apply: %v", err)
			}
			if !slices.Equal(v.Tokens, tt.wantTokens) || !slices.Equal(v.Types, tt.wantTypes) {
				t.Errorf("apply: tokens %q types %v, want %q %v", v.Tokens, v.Types, tt.wantTokens, tt.wantTypes)
			}
			if tt.scores && len(v.Scores) != len(v.Tokens) {
				t.Errorf("apply: %d scores for %d tokens", len(v.Scores), len(v.Tokens))
			}
			if v.BOS != tt.bos || v.EOS != tt.eos {
				t.Errorf("apply: BOS %d EOS %d, want %d %d", v.BOS, v.EOS, tt.bos, tt.eos)
			}
		})
	}
}

// checkFamilyModel reads a family model back: its chat template is the
// file's, every marker is one token of the family's type (special in
// conform/tokenizer exactly when control), and BOS/EOS are the family's.
func checkFamilyModel(t *testing.T, path string, fam family, template string, wantLen int) *tokenizer.Vocabulary {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatalf("gguf.Open(%s): %v", path, err)
	}
	if got, _ := f.String("tokenizer.chat_template"); got != template {
		t.Errorf("tokenizer.chat_template is %d bytes, want the %d-byte template file", len(got), len(template))
	}
	tokens, _ := f.Strings("tokenizer.ggml.tokens")
	types, _ := f.Int32s("tokenizer.ggml.token_type")
	if len(tokens) != wantLen || len(types) != wantLen {
		t.Fatalf("%d tokens and %d types, want %d", len(tokens), len(types), wantLen)
	}
	if n, _ := f.Uint32("llama.vocab_size"); int(n) != wantLen {
		t.Errorf("llama.vocab_size = %d, want %d", n, wantLen)
	}
	v, err := tokenizer.LoadGGUF(path)
	if err != nil {
		t.Fatalf("tokenizer.LoadGGUF: %v", err)
	}
	for _, m := range fam.markers {
		var ids []int
		for id, s := range tokens {
			if s == m.text {
				ids = append(ids, id)
			}
		}
		if len(ids) != 1 {
			t.Errorf("marker %q is at ids %v, want exactly one", m.text, ids)
			continue
		}
		id := ids[0]
		if types[id] != m.typ {
			t.Errorf("marker %q (id %d) has type %d, want %d", m.text, id, types[id], m.typ)
		}
		if got, want := v.Special[id], m.typ == tokenizer.TokenTypeControl; got != want {
			t.Errorf("tokenizer: marker %q (id %d) special = %v, want %v", m.text, id, got, want)
		}
		if m.typ == tokenizer.TokenTypeUserDefined && string(v.Text(tokenizer.TokenID(id))) != m.text {
			t.Errorf("tokenizer: marker %q (id %d) has text %q", m.text, id, v.Text(tokenizer.TokenID(id)))
		}
	}
	for key, name := range map[string]string{"tokenizer.ggml.bos_token_id": fam.bos, "tokenizer.ggml.eos_token_id": fam.eos} {
		if name == "" {
			continue
		}
		if id, ok := f.Uint32(key); !ok || int(id) >= len(tokens) || tokens[id] != name {
			t.Errorf("%s = %d, want the id of %q", key, id, name)
		}
	}
	return v
}

// TestFamilies builds a tiny model of every family the way the README says
// (-family NAME -shared DIR: the Qwen3 vocabulary and the family's template
// from the shared folder) and reads it back.
func TestFamilies(t *testing.T) {
	shared := sharedtest.Path(t, "vocab", "qwen3", "tokenizer.json")
	shared = filepath.Dir(filepath.Dir(filepath.Dir(shared)))
	const qwen3Len = 151_669 // 151,643 + 26 added tokens
	added := map[string]int{ // markers the Qwen3 vocabulary lacks
		"qwen3": 0, "qwen3.5": 0, "deepseek-v3.1": 13, "deepseek-r1": 13, "kimi-k2": 13, "gpt-oss": 7,
	}
	if len(added) != len(families) {
		t.Fatalf("the table covers %d families, want all %d", len(added), len(families))
	}
	dir := t.TempDir()
	for _, name := range familyNames() {
		t.Run(name, func(t *testing.T) {
			fam := families[name]
			src, err := os.ReadFile(fam.templatePath(shared))
			if err != nil {
				t.Fatalf("the family's template: %v", err)
			}
			out := filepath.Join(dir, name+".gguf")
			if err := run(config{preset: "tiny", family: name, shared: shared, seed: 1, out: out}); err != nil {
				t.Fatalf("run(-family %s -shared %s): %v", name, shared, err)
			}
			defer os.Remove(out)
			checkFamilyModel(t, out, fam, string(src), qwen3Len+added[name])
		})
	}
}

// TestGPTOSSHarmonyIDs: on the o200k vocabulary (offline) the harmony
// tokens take their real gpt-oss ids, which are holes of o200k_base.
func TestGPTOSSHarmonyIDs(t *testing.T) {
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "t.jinja")
	if err := os.WriteFile(tmpl, []byte("{{ '<|start|>' }}"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "gpt-oss.gguf")
	if err := run(config{preset: "tiny", tokenizer: "o200k", family: "gpt-oss", template: tmpl, seed: 1, out: out}); err != nil {
		t.Fatalf("run: %v", err)
	}
	base, err := mkmodel.LoadVocab("o200k")
	if err != nil {
		t.Fatal(err)
	}
	fam := families["gpt-oss"]
	v := checkFamilyModel(t, out, fam, "{{ '<|start|>' }}", len(base.Tokens))
	for _, m := range fam.markers {
		if got := string(v.Text(tokenizer.TokenID(m.id))); !strings.HasSuffix(got, m.text) {
			t.Errorf("id %d has text %q, want %q there", m.id, got, m.text)
		}
	}
}
