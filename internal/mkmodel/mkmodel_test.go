package mkmodel

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"slices"
	"testing"

	"conform/gguf"
	"conform/internal/sharedtest"
	"conform/tokenizer"
)

// byteVocab is a minimal byte-level vocabulary: 256 byte tokens, one
// merge, an EOS and a ChatML start token.
func byteVocab() *Vocab {
	v := &Vocab{Model: "gpt2", Pre: "default", Source: "bytes"}
	for b := range 256 {
		v.Tokens = append(v.Tokens, tokenizer.GPT2Encode([]byte{byte(b)}))
		v.Types = append(v.Types, tokenizer.TokenTypeNormal)
	}
	v.Tokens = append(v.Tokens, "ab", "<|endoftext|>", "<|im_start|>")
	v.Types = append(v.Types, 1, 3, 3)
	v.Merges = []string{"a b"}
	v.EOS, v.BOS = 257, 257
	return v
}

var gqa = Preset{Name: "gqa", Embd: 32, Blocks: 2, FF: 48, Heads: 4, KVHeads: 2, RopeDim: 8, ContextLength: 512, RopeFreqBase: 1e4, RMSEps: 1e-6}

func write(t *testing.T, o Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := WriteTo(&buf, o); err != nil {
		t.Fatalf("WriteTo: %v", err)
	}
	return buf.Bytes()
}

func parse(t *testing.T, data []byte) *gguf.File {
	t.Helper()
	f, err := gguf.Parse(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("gguf.Parse: %v", err)
	}
	return f
}

func TestShapes(t *testing.T) {
	v := byteVocab()
	n := uint64(len(v.Tokens))
	for _, tt := range []struct {
		preset Preset
		tensor map[string][]uint64
		absent []string
	}{
		{Presets["tiny"], map[string][]uint64{
			"token_embd.weight": {64, n}, "output.weight": {64, n}, "output_norm.weight": {64},
			"blk.0.attn_q.weight": {64, 64}, "blk.1.attn_k.weight": {64, 64}, "blk.1.attn_v.weight": {64, 64},
			"blk.0.attn_output.weight": {64, 64}, "blk.1.ffn_gate.weight": {64, 128}, "blk.1.ffn_up.weight": {64, 128},
			"blk.1.ffn_down.weight": {128, 64}, "blk.0.attn_norm.weight": {64}, "blk.0.ffn_norm.weight": {64},
		}, []string{"blk.2.attn_q.weight"}},
		{gqa, map[string][]uint64{
			"token_embd.weight": {32, n}, "blk.0.attn_q.weight": {32, 32}, "blk.0.attn_k.weight": {32, 16},
			"blk.0.attn_v.weight": {32, 16}, "blk.1.ffn_down.weight": {48, 32},
		}, nil},
		{Preset{Name: "tied", Embd: 16, Blocks: 1, FF: 16, Heads: 2, KVHeads: 1, RopeDim: 8, ContextLength: 64, TiedEmbeddings: true},
			map[string][]uint64{"token_embd.weight": {16, n}}, []string{"output.weight"}},
	} {
		f := parse(t, write(t, Options{Preset: tt.preset, Vocab: v}))
		for name, want := range tt.tensor {
			ti, ok := f.Tensor(name)
			if !ok || !reflect.DeepEqual(ti.Dims, want) {
				t.Errorf("%s: tensor %s dims = %v (present %v), want %v", tt.preset.Name, name, ti.Dims, ok, want)
			}
			wantType := gguf.TensorF16
			if len(want) == 1 {
				wantType = gguf.TensorF32
			}
			if ti.Type != wantType {
				t.Errorf("%s: tensor %s type %v, want %v", tt.preset.Name, name, ti.Type, wantType)
			}
		}
		for _, name := range tt.absent {
			if _, ok := f.Tensor(name); ok {
				t.Errorf("%s: tensor %s present, want absent", tt.preset.Name, name)
			}
		}
		if got, want := len(f.Tensors), 9*tt.preset.Blocks+2+map[bool]int{true: 0, false: 1}[tt.preset.TiedEmbeddings]; got != want {
			t.Errorf("%s: %d tensors, want %d", tt.preset.Name, got, want)
		}
	}
}

func TestMetadata(t *testing.T) {
	f := parse(t, write(t, Options{Preset: gqa, Vocab: byteVocab(), Seed: 5}))
	u32 := map[string]uint32{
		"llama.context_length": 512, "llama.embedding_length": 32, "llama.block_count": 2,
		"llama.feed_forward_length": 48, "llama.attention.head_count": 4, "llama.attention.head_count_kv": 2,
		"llama.rope.dimension_count": 8, "llama.vocab_size": 259, "tokenizer.ggml.eos_token_id": 257,
		"tokenizer.ggml.bos_token_id": 257, "general.alignment": 32,
	}
	for k, want := range u32 {
		if got, ok := f.Uint32(k); !ok || got != want {
			t.Errorf("Uint32(%q) = %d, %v; want %d", k, got, ok, want)
		}
	}
	str := map[string]string{
		"general.architecture": "llama", "tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "default",
		"tokenizer.chat_template": DefaultChatTemplate,
	}
	for k, want := range str {
		if got, ok := f.String(k); !ok || got != want {
			t.Errorf("String(%q) = %q, %v; want %q", k, got, ok, want)
		}
	}
	if eps, ok := f.Float32("llama.attention.layer_norm_rms_epsilon"); !ok || eps != 1e-6 {
		t.Errorf("rms epsilon = %v, %v", eps, ok)
	}
	if add, ok := f.Bool("tokenizer.ggml.add_bos_token"); !ok || add {
		t.Errorf("add_bos_token = %v, %v; want false", add, ok)
	}
	if toks, ok := f.Strings("tokenizer.ggml.tokens"); !ok || !slices.Equal(toks, byteVocab().Tokens) {
		t.Errorf("tokens differ from the vocabulary's")
	}
	if types, ok := f.Int32s("tokenizer.ggml.token_type"); !ok || types[258] != 3 || types[0] != 1 {
		t.Errorf("token types = %v...", types[:3])
	}
	if m, ok := f.Strings("tokenizer.ggml.merges"); !ok || !slices.Equal(m, []string{"a b"}) {
		t.Errorf("merges = %q", m)
	}
	// A caller's template wins over the default.
	f = parse(t, write(t, Options{Preset: gqa, Vocab: byteVocab(), ChatTemplate: "{{ x }}"}))
	if got, _ := f.String("tokenizer.chat_template"); got != "{{ x }}" {
		t.Errorf("chat template = %q, want the caller's", got)
	}
}

// TestWeights checks that weights are deterministic per seed and in the
// documented range, and that norms are ones.
func TestWeights(t *testing.T) {
	a := write(t, Options{Preset: gqa, Vocab: byteVocab(), Seed: 1})
	b := write(t, Options{Preset: gqa, Vocab: byteVocab(), Seed: 1})
	c := write(t, Options{Preset: gqa, Vocab: byteVocab(), Seed: 2})
	if !bytes.Equal(a, b) {
		t.Errorf("same seed, different files")
	}
	if bytes.Equal(a, c) {
		t.Errorf("different seeds, same file")
	}
	f := parse(t, a)
	for _, ti := range f.Tensors {
		data, err := f.TensorData(bytes.NewReader(a), ti)
		if err != nil {
			t.Fatal(err)
		}
		switch ti.Type {
		case gguf.TensorF32:
			for i := 0; i < len(data); i += 4 {
				if !bytes.Equal(data[i:i+4], []byte{0, 0, 0x80, 0x3f}) {
					t.Fatalf("%s: element %d is not 1.0", ti.Name, i/4)
				}
			}
		case gguf.TensorF16:
			var neg int
			for i := 0; i < len(data); i += 2 {
				h := uint16(data[i]) | uint16(data[i+1])<<8
				if exp := h >> 10 & 0x1f; exp != 8 && exp != 9 {
					t.Fatalf("%s: element %d = %#04x, exponent %d outside [2^-7, 2^-5)", ti.Name, i/2, h, exp)
				}
				neg += int(h >> 15)
			}
			if n := len(data) / 2; neg < n/4 || neg > 3*n/4 {
				t.Errorf("%s: %d of %d weights negative", ti.Name, neg, n)
			}
		}
	}
}

func TestOptionErrors(t *testing.T) {
	bad := []Options{
		{},
		{Vocab: &Vocab{}},
		{Vocab: func() *Vocab { v := byteVocab(); v.Types = v.Types[:3]; return v }()},
		{Vocab: func() *Vocab { v := byteVocab(); v.EOS = 999; return v }()},
		{Vocab: byteVocab(), Preset: Preset{Name: "odd", Embd: 30, Blocks: 1, FF: 8, Heads: 4, KVHeads: 4, RopeDim: 4, ContextLength: 8}},
		{Vocab: byteVocab(), Preset: Preset{Name: "gqa", Embd: 32, Blocks: 1, FF: 8, Heads: 4, KVHeads: 3, RopeDim: 8, ContextLength: 8}},
		{Vocab: byteVocab(), Preset: Preset{Name: "rope", Embd: 32, Blocks: 1, FF: 8, Heads: 4, KVHeads: 4, RopeDim: 16, ContextLength: 8}},
	}
	for i, o := range bad {
		var e *Error
		if _, err := WriteTo(&bytes.Buffer{}, o); !errors.As(err, &e) || e.Code != CodeOptions {
			t.Errorf("case %d: WriteTo: got %v, want a CodeOptions error", i, err)
		}
	}
	for _, name := range PresetNames() {
		if err := Presets[name].check(); err != nil {
			t.Errorf("preset %s: %v", name, err)
		}
	}
	q := Presets["qwen2.5-0.5b"]
	if q.Embd != 896 || q.Blocks != 24 || q.FF != 4864 || q.Heads != 14 || q.KVHeads != 2 || q.RopeDim != 64 || !q.TiedEmbeddings {
		t.Errorf("qwen2.5-0.5b preset = %+v, want Qwen2.5-0.5B's shapes", q)
	}
	var e *Error
	if _, err := LoadVocab("/no/such/tokenizer.json"); !errors.As(err, &e) || e.Code != CodeVocab {
		t.Errorf("LoadVocab(missing): got %v, want CodeVocab", err)
	}
}

// TestTiktokenVocab converts cl100k and reads it back with the tokenizer
// package's GGUF loader: every rank's bytes must survive.
func TestTiktokenVocab(t *testing.T) {
	v, err := LoadVocab("cl100k")
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Tokens) != 100279 || len(v.Merges) != 100256-256 || v.Pre != "llama-bpe" || v.EOS != 100257 || v.AddBOS {
		t.Errorf("cl100k: %d tokens, %d merges, pre %q, EOS %d, AddBOS %v", len(v.Tokens), len(v.Merges), v.Pre, v.EOS, v.AddBOS)
	}
	if v.Tokens[100277] != "<|im_start|>" || v.Types[100277] != tokenizer.TokenTypeControl || v.Types[100256] != tokenizer.TokenTypeUnused {
		t.Errorf("cl100k: ChatML or hole types wrong: %q %d %d", v.Tokens[100277], v.Types[100277], v.Types[100256])
	}
	data := write(t, Options{Preset: gqa, Vocab: v})
	path := t.TempDir() + "/cl100k.gguf"
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := tokenizer.LoadGGUF(path)
	if err != nil {
		t.Fatalf("tokenizer.LoadGGUF: %v", err)
	}
	want, err := tokenizer.LoadTiktoken("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	for id := range want.Len() {
		if want.Tokens[id] != nil && !bytes.Equal(got.Tokens[id], want.Tokens[id]) {
			t.Fatalf("token %d: GGUF round trip %q, tiktoken %q", id, got.Tokens[id], want.Tokens[id])
		}
	}
	if !got.IsEOS(100257) {
		t.Errorf("EOS 100257 lost in the round trip: %v", got.EOS)
	}
}

func TestHFVocab(t *testing.T) {
	for _, tt := range []struct {
		dir          string
		model, pre   string
		n, bos, eos  int
		addBOS       bool
		control, usr string
	}{
		{"qwen3", "gpt2", "qwen2", 151669, 151645, 151645, false, "<|im_start|>", "<tool_call>"},
		{"qwen3", "gpt2", "qwen2", 151669, 151645, 151645, false, "<|fim_prefix|>", "</think>"}, // special=false but looks special
		{"llama3_1", "gpt2", "llama-bpe", 128256, 128000, 128009, true, "<|eot_id|>", ""},
		{"llama2", "llama", "default", 32000, 1, 2, true, "<s>", ""},
	} {
		t.Run(tt.dir, func(t *testing.T) {
			v, err := HFVocab(sharedtest.Path(t, "vocab", tt.dir, "tokenizer.json"))
			if err != nil {
				t.Fatal(err)
			}
			if v.Model != tt.model || v.Pre != tt.pre || len(v.Tokens) != tt.n || v.BOS != tt.bos || v.EOS != tt.eos || v.AddBOS != tt.addBOS {
				t.Errorf("HFVocab(%s) = model %q pre %q %d tokens BOS %d EOS %d AddBOS %v; want %q %q %d %d %d %v",
					tt.dir, v.Model, v.Pre, len(v.Tokens), v.BOS, v.EOS, v.AddBOS, tt.model, tt.pre, tt.n, tt.bos, tt.eos, tt.addBOS)
			}
			if v.ChatTemplate == "" && tt.dir != "llama2" {
				t.Errorf("HFVocab(%s): no chat template", tt.dir)
			}
			for want, tok := range map[int32]string{tokenizer.TokenTypeControl: tt.control, tokenizer.TokenTypeUserDefined: tt.usr} {
				if tok == "" {
					continue
				}
				i := slices.Index(v.Tokens, tok)
				if i < 0 || v.Types[i] != want {
					t.Errorf("HFVocab(%s): %q at %d has type %v, want %d", tt.dir, tok, i, v.Types[max(i, 0)], want)
				}
			}
		})
	}
}

// TestQuantisedWeights: Q8_0 and Q4_0 files have every matrix in that type,
// blocks with the fixed scale and random quants, F32 norms, the matching
// general.file_type, and are refused for shapes that are not whole blocks.
func TestQuantisedWeights(t *testing.T) {
	for _, tc := range []struct {
		typ      gguf.TensorType
		fileType uint32
		block    int
		scale    uint16
	}{
		{gguf.TensorQ8_0, 7, 34, q8Scale},
		{gguf.TensorQ4_0, 2, 18, q4Scale},
	} {
		t.Run(tc.typ.String(), func(t *testing.T) {
			data := write(t, Options{Vocab: byteVocab(), Seed: 1, Type: tc.typ})
			f := parse(t, data)
			if ft, _ := f.Uint32("general.file_type"); ft != tc.fileType {
				t.Errorf("general.file_type = %d, want %d", ft, tc.fileType)
			}
			mats := 0
			for _, ti := range f.Tensors {
				if len(ti.Dims) == 1 {
					if ti.Type != gguf.TensorF32 {
						t.Errorf("%s: %v, want F32", ti.Name, ti.Type)
					}
					continue
				}
				mats++
				if ti.Type != tc.typ {
					t.Fatalf("%s: %v, want %v", ti.Name, ti.Type, tc.typ)
				}
				raw, err := f.TensorData(bytes.NewReader(data), ti)
				if err != nil {
					t.Fatal(err)
				}
				if want := int(ti.Dims[0]*ti.Dims[1]) / 32 * tc.block; len(raw) != want {
					t.Fatalf("%s: %d bytes, want %d", ti.Name, len(raw), want)
				}
				counts := map[byte]int{}
				for b := 0; b < len(raw); b += tc.block {
					if s := uint16(raw[b]) | uint16(raw[b+1])<<8; s != tc.scale {
						t.Fatalf("%s: block %d scale %#04x, want %#04x", ti.Name, b/tc.block, s, tc.scale)
					}
					for _, q := range raw[b+2 : b+tc.block] {
						if tc.typ == gguf.TensorQ8_0 && q == 0x80 {
							t.Fatalf("%s: block %d holds -128 (outside [-127, 127])", ti.Name, b/tc.block)
						}
						counts[q]++
					}
				}
				if len(counts) < 200 {
					t.Errorf("%s: %d distinct quant bytes, want most of 256 (random)", ti.Name, len(counts))
				}
			}
			if mats == 0 {
				t.Fatal("no matrices")
			}
		})
	}
	for _, o := range []Options{
		{Vocab: byteVocab(), Preset: gqa, Type: gguf.TensorQ4_0}, // FF 48 is not whole blocks of 32
		{Vocab: byteVocab(), Type: gguf.TensorBF16},
	} {
		var e *Error
		if _, err := WriteTo(&bytes.Buffer{}, o); !errors.As(err, &e) || e.Code != CodeOptions {
			t.Errorf("WriteTo(%v, %s): got %v, want a CodeOptions error", o.Type, o.Preset.Name, err)
		}
	}
}
