package llama

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"conform/gguf"
	"conform/internal/mkmodel"
)

// smallModel writes a tiny model with smallVocab (fast: no real
// vocabulary) and returns its path.
func smallModel(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "small.gguf")
	if err := mkmodel.Write(p, mkmodel.Options{Vocab: smallVocab(), Seed: 3}); err != nil {
		t.Fatalf("mkmodel.Write: %v", err)
	}
	return p
}

// rewrite copies the GGUF at src to a new file, letting edit change or
// drop (ok=false) metadata values and keep decide which tensors stay.
func rewrite(t *testing.T, src string, edit func(key string, v gguf.Value) (gguf.Value, bool), keep func(name string) bool, extra ...gguf.KV) string {
	t.Helper()
	f, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	w := gguf.NewWriter()
	for _, kv := range f.KVs {
		if kv.Key == gguf.KeyAlignment {
			continue
		}
		if v, ok := edit(kv.Key, kv.Value); ok {
			w.Add(kv.Key, v)
		}
	}
	for _, kv := range extra {
		w.Add(kv.Key, kv.Value)
	}
	for _, ti := range f.Tensors {
		if keep != nil && !keep(ti.Name) {
			continue
		}
		b, err := f.TensorData(bytes.NewReader(data), ti)
		if err != nil {
			t.Fatal(err)
		}
		w.AddTensor(ti.Name, ti.Type, ti.Dims, b)
	}
	dst := filepath.Join(t.TempDir(), "edited.gguf")
	if err := w.WriteFile(dst); err != nil {
		t.Fatalf("rewrite: %v", err)
	}
	return dst
}

func same(_ string, v gguf.Value) (gguf.Value, bool) { return v, true }

func TestValidate(t *testing.T) {
	good := smallModel(t)
	dir := t.TempDir()
	text := filepath.Join(dir, "model.gguf")
	if err := os.WriteFile(text, []byte("<html>not a model</html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.gguf")
	if err := os.WriteFile(truncated, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	header := filepath.Join(dir, "header.gguf")
	if err := os.WriteFile(header, data[:300], 0o644); err != nil {
		t.Fatal(err)
	}
	setArch := func(arch string) string {
		return rewrite(t, good, func(k string, v gguf.Value) (gguf.Value, bool) {
			if k == "general.architecture" {
				return gguf.Value{Type: gguf.TypeString, Data: arch}, true
			}
			return v, true
		}, nil)
	}
	setU32 := func(key string, x uint32) string {
		return rewrite(t, good, func(k string, v gguf.Value) (gguf.Value, bool) {
			if k == key {
				return gguf.Value{Type: gguf.TypeUint32, Data: x}, true
			}
			return v, true
		}, nil)
	}
	setValue := func(key string, x gguf.Value) string {
		return rewrite(t, good, func(k string, v gguf.Value) (gguf.Value, bool) {
			if k == key {
				return x, true
			}
			return v, true
		}, nil)
	}
	drop := func(key string) string {
		return rewrite(t, good, func(k string, v gguf.Value) (gguf.Value, bool) { return v, k != key }, nil)
	}
	tests := []struct {
		name  string
		path  string
		want  error
		cause error // also in the chain, when not nil
	}{
		{"missing", filepath.Join(dir, "absent.gguf"), ErrModelFile, fs.ErrNotExist},
		{"directory", dir, ErrModelFile, nil},
		{"not GGUF", text, ErrModelFile, gguf.ErrBadMagic},
		{"truncated in the weights", truncated, ErrModelFile, gguf.ErrTruncated},
		{"truncated in the metadata", header, ErrModelFile, gguf.ErrTruncated},
		{"unknown architecture", setArch("no-such-arch"), ErrArchitecture, nil},
		{"vision encoder", setArch("clip"), ErrArchitecture, nil},
		{"no architecture", drop("general.architecture"), ErrArchitecture, nil},
		{"no block count", drop("llama.block_count"), ErrModelFile, nil},
		{"zero blocks (llama.cpp aborts on it)", setU32("llama.block_count", 0), ErrModelFile, nil},
		{"more blocks than llama.cpp allows", setU32("llama.block_count", 513), ErrModelFile, nil},
		{"no tokens", drop("tokenizer.ggml.tokens"), ErrModelFile, nil},
		{"no tokenizer model", drop("tokenizer.ggml.model"), ErrModelFile, nil},
		{"merges not strings", setU32("tokenizer.ggml.merges", 1), ErrModelFile, nil},
		{"token types not an array", setU32("tokenizer.ggml.token_type", 1), ErrModelFile, nil},
		{"token types short", setValue("tokenizer.ggml.token_type", gguf.Value{Type: gguf.TypeArray, Data: gguf.Array{Elem: gguf.TypeInt32, Data: []int32{1, 1}}}), ErrModelFile, nil},
		{"token types of another width", setValue("tokenizer.ggml.token_type", gguf.Value{Type: gguf.TypeArray, Data: gguf.Array{Elem: gguf.TypeUint8, Data: make([]uint8, len(smallVocab().Tokens))}}), ErrModelFile, nil},
		{"scores short", rewrite(t, good, same, nil, gguf.KV{Key: "tokenizer.ggml.scores", Value: gguf.Value{Type: gguf.TypeArray, Data: gguf.Array{Elem: gguf.TypeFloat32, Data: []float32{0}}}}), ErrModelFile, nil},
		{"duplicate tokens", setValue("tokenizer.ggml.tokens", gguf.Value{Type: gguf.TypeArray, Data: gguf.Array{Elem: gguf.TypeString, Data: append(append([]string(nil), smallVocab().Tokens[:len(smallVocab().Tokens)-1]...), "a")}}), ErrModelFile, nil},
		{"feed-forward lengths as strings (llama.cpp asserts)", setValue("llama.feed_forward_length", gguf.Value{Type: gguf.TypeArray, Data: gguf.Array{Elem: gguf.TypeString, Data: []string{"a", "b"}}}), ErrModelFile, nil},
		{"nested array", rewrite(t, good, same, nil, gguf.KV{Key: "x.nested", Value: gguf.Value{Type: gguf.TypeArray, Data: gguf.Array{Elem: gguf.TypeArray, Data: []gguf.Array{}}}}), ErrModelFile, nil},
		{"no tensors", rewrite(t, good, same, func(string) bool { return false }), ErrModelFile, nil},
	}
	for _, tt := range tests {
		_, err := Validate(tt.path)
		if !errors.Is(err, tt.want) || tt.cause != nil && !errors.Is(err, tt.cause) {
			t.Errorf("Validate(%s): got %v, want %v (cause %v)", tt.name, err, tt.want, tt.cause)
		}
		// Load validates first, in both builds: the same error.
		m, err := Load(tt.path, Params{})
		if !errors.Is(err, tt.want) || m != nil {
			t.Errorf("Load(%s): got %v, %v; want %v", tt.name, m, err, tt.want)
		}
	}
	f, err := Validate(good)
	if err != nil {
		t.Fatalf("Validate(good): %v", err)
	}
	if arch, _ := f.String("general.architecture"); arch != "llama" {
		t.Errorf("Validate(good).architecture = %q, want llama", arch)
	}
}

func TestParams(t *testing.T) {
	good := smallModel(t)
	bad := []Params{
		{ContextSize: -1},
		{Parallel: MaxParallel + 1},
		{ContextSize: 2, Parallel: 4},
		{KVCacheType: "q5_k"},
		{KVCacheType: "q8_0", FlashAttention: FlashAttentionOff},
		{FlashAttention: 7},
		{KVLayout: 9},
		{KVLayout: -1},
	}
	for _, p := range bad {
		if _, err := Load(good, p); !errors.Is(err, &Error{Code: CodeParams}) {
			t.Errorf("Load(%+v): got %v, want CodeParams", p, err)
		}
	}
	got, err := Params{KVCacheType: "Q8_0"}.resolve()
	if err != nil || got.ContextSize != DefaultContextSize || got.BatchSize != DefaultBatchSize || got.Parallel != 1 || got.Threads <= 0 || got.KVCacheType != "q8_0" || got.KVLayout != KVPerSequence {
		t.Errorf("Params{}.resolve() = %+v, %v; want defaults", got, err)
	}
}

func TestErrorFormat(t *testing.T) {
	e := &Error{Code: CodeKVCacheFull, Op: "decode", Path: "m.gguf", Msg: "no slot for 3 tokens"}
	if got, want := e.Error(), "llama: decode m.gguf: KV cache full: no slot for 3 tokens"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(e, ErrKVCacheFull) || errors.Is(e, ErrClosed) {
		t.Errorf("errors.Is by code is wrong for %v", e)
	}
}

func TestParseKVLayout(t *testing.T) {
	for _, k := range []KVLayout{KVAuto, KVUnified, KVPerSequence} {
		if got, err := ParseKVLayout(k.String()); got != k || err != nil {
			t.Errorf("ParseKVLayout(%q) = %v, %v; want %v", k.String(), got, err, k)
		}
	}
	for _, s := range []string{"", "Unified", "shared", "KVLayout(9)"} {
		if _, err := ParseKVLayout(s); !errors.Is(err, &Error{Code: CodeParams}) {
			t.Errorf("ParseKVLayout(%q) = %v, want CodeParams", s, err)
		}
	}
}
