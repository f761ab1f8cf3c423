package mkmodel

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"

	"conform/gguf"
)

// Preset is a model shape (llama architecture hyperparameters).
type Preset struct {
	Name          string
	Embd          int // llama.embedding_length
	Blocks        int // llama.block_count
	FF            int // llama.feed_forward_length
	Heads         int // llama.attention.head_count
	KVHeads       int // llama.attention.head_count_kv
	RopeDim       int // llama.rope.dimension_count (= Embd/Heads)
	ContextLength int // llama.context_length
	RopeFreqBase  float32
	RMSEps        float32
	// TiedEmbeddings leaves out output.weight; llama.cpp then uses
	// token_embd.weight for the output layer, as Qwen2.5-0.5B does.
	TiedEmbeddings bool
}

// Presets are the shapes cmd/mkmodel offers. "tiny" is the shape
// established in shared/notes/synthetic-gguf.md (about 45 MB with a 151k
// vocabulary, milliseconds per token); "qwen2.5-0.5b" has Qwen2.5-0.5B's
// shapes (about 1 GB in F16 with its vocabulary), for realistic timing.
var Presets = map[string]Preset{
	"tiny": {
		Name: "tiny", Embd: 64, Blocks: 2, FF: 128, Heads: 4, KVHeads: 4, RopeDim: 16,
		ContextLength: 2048, RopeFreqBase: 10000, RMSEps: 1e-5,
	},
	"qwen2.5-0.5b": {
		Name: "qwen2.5-0.5b", Embd: 896, Blocks: 24, FF: 4864, Heads: 14, KVHeads: 2, RopeDim: 64,
		ContextLength: 32768, RopeFreqBase: 1e6, RMSEps: 1e-6, TiedEmbeddings: true,
	},
	// "llama3.1-8b" is Llama-3.1-8B's shape (8.0B parameters with its
	// 128,256-token vocabulary: 16 GB in F16, 4.7 GB in Q4_0), for GPU
	// timing; its context length is cut to 8192 (the file's metadata only).
	"llama3.1-8b": {
		Name: "llama3.1-8b", Embd: 4096, Blocks: 32, FF: 14336, Heads: 32, KVHeads: 8, RopeDim: 128,
		ContextLength: 8192, RopeFreqBase: 500000, RMSEps: 1e-5,
	},
}

// WeightTypes are the element types Write makes matrices in ("f16" is the
// default); norms stay F32.
var WeightTypes = map[string]gguf.TensorType{"f16": gguf.TensorF16, "q8_0": gguf.TensorQ8_0, "q4_0": gguf.TensorQ4_0}

// fileType is general.file_type (llama_ftype) of a file whose matrices
// are all of type t.
func fileType(t gguf.TensorType) uint32 {
	switch t {
	case gguf.TensorQ8_0:
		return 7 // LLAMA_FTYPE_MOSTLY_Q8_0
	case gguf.TensorQ4_0:
		return 2 // LLAMA_FTYPE_MOSTLY_Q4_0
	}
	return 1 // LLAMA_FTYPE_MOSTLY_F16
}

// PresetNames returns the preset names, sorted.
func PresetNames() []string {
	names := make([]string, 0, len(Presets))
	for n := range Presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (p Preset) check() error {
	switch {
	case p.Embd <= 0 || p.Blocks <= 0 || p.FF <= 0 || p.Heads <= 0 || p.KVHeads <= 0 || p.ContextLength <= 0:
		return fmt.Errorf("non-positive size in %+v", p)
	case p.Embd%p.Heads != 0:
		return fmt.Errorf("embedding %d is not a multiple of %d heads", p.Embd, p.Heads)
	case p.Heads%p.KVHeads != 0:
		return fmt.Errorf("%d heads are not a multiple of %d KV heads", p.Heads, p.KVHeads)
	case p.RopeDim <= 0 || p.RopeDim > p.Embd/p.Heads || p.RopeDim%2 != 0:
		return fmt.Errorf("rope dimension %d must be even and at most the head size %d", p.RopeDim, p.Embd/p.Heads)
	}
	return nil
}

// Options says what Write makes.
type Options struct {
	// Preset is the shape; the zero value means Presets["tiny"].
	Preset Preset
	// Vocab is the vocabulary (required).
	Vocab *Vocab
	// ChatTemplate overrides the vocabulary's template; when both are
	// empty, DefaultChatTemplate is used.
	ChatTemplate string
	// Seed seeds the weights.
	Seed uint64
	// Type is the matrices' element type: gguf.TensorF16 (the zero value
	// means it), TensorQ8_0 or TensorQ4_0 (see WeightTypes).
	Type gguf.TensorType
}

// Write writes a synthetic model to path.
func Write(path string, o Options) error {
	w, err := newWriter(o)
	if err != nil {
		return err
	}
	if err := w.WriteFile(path); err != nil {
		return &Error{Code: CodeWrite, Source: path, Err: err}
	}
	return nil
}

// WriteTo writes a synthetic model to out and returns the bytes written.
func WriteTo(out io.Writer, o Options) (int64, error) {
	w, err := newWriter(o)
	if err != nil {
		return 0, err
	}
	n, err := w.WriteTo(out)
	if err != nil {
		return n, &Error{Code: CodeWrite, Err: err}
	}
	return n, nil
}

func newWriter(o Options) (*gguf.Writer, error) {
	p := o.Preset
	if p.Name == "" && p.Embd == 0 {
		p = Presets["tiny"]
	}
	if err := p.check(); err != nil {
		return nil, &Error{Code: CodeOptions, Source: p.Name, Err: err}
	}
	v := o.Vocab
	if v == nil || len(v.Tokens) == 0 {
		return nil, &Error{Code: CodeOptions, Msg: "no vocabulary"}
	}
	if len(v.Types) != len(v.Tokens) || (v.Scores != nil && len(v.Scores) != len(v.Tokens)) {
		return nil, &Error{Code: CodeOptions, Source: v.Source, Msg: fmt.Sprintf("%d tokens, %d types, %d scores", len(v.Tokens), len(v.Types), len(v.Scores))}
	}
	if v.EOS < 0 || v.EOS >= len(v.Tokens) || v.BOS < 0 || v.BOS >= len(v.Tokens) {
		return nil, &Error{Code: CodeOptions, Source: v.Source, Msg: fmt.Sprintf("BOS %d or EOS %d outside the %d tokens", v.BOS, v.EOS, len(v.Tokens))}
	}
	tmpl := o.ChatTemplate
	if tmpl == "" {
		tmpl = v.ChatTemplate
	}
	if tmpl == "" {
		tmpl = DefaultChatTemplate
	}
	nVocab := len(v.Tokens)
	typ := o.Type
	if typ == 0 {
		typ = gguf.TensorF16
	}
	random := randomF16
	switch typ {
	case gguf.TensorF16:
	case gguf.TensorQ8_0:
		random = randomQ8_0
	case gguf.TensorQ4_0:
		random = randomQ4_0
	default:
		return nil, &Error{Code: CodeOptions, Source: p.Name, Msg: fmt.Sprintf("weight type %v: want F16, Q8_0 or Q4_0", typ)}
	}
	if typ != gguf.TensorF16 && (p.Embd%32 != 0 || p.FF%32 != 0) {
		return nil, &Error{Code: CodeOptions, Source: p.Name, Msg: fmt.Sprintf("embedding %d and feed-forward %d must be multiples of 32 (the quantised block) for %v", p.Embd, p.FF, typ)}
	}

	w := gguf.NewWriter()
	w.AddString("general.architecture", "llama")
	w.AddString("general.name", "conform-synthetic-"+p.Name)
	w.AddUint32("general.file_type", fileType(typ))
	w.AddUint32("llama.context_length", uint32(p.ContextLength))
	w.AddUint32("llama.embedding_length", uint32(p.Embd))
	w.AddUint32("llama.block_count", uint32(p.Blocks))
	w.AddUint32("llama.feed_forward_length", uint32(p.FF))
	w.AddUint32("llama.attention.head_count", uint32(p.Heads))
	w.AddUint32("llama.attention.head_count_kv", uint32(p.KVHeads))
	w.AddUint32("llama.rope.dimension_count", uint32(p.RopeDim))
	w.AddFloat32("llama.rope.freq_base", p.RopeFreqBase)
	w.AddFloat32("llama.attention.layer_norm_rms_epsilon", p.RMSEps)
	w.AddUint32("llama.vocab_size", uint32(nVocab))
	w.AddString("tokenizer.ggml.model", v.Model)
	w.AddString("tokenizer.ggml.pre", v.Pre)
	w.AddStrings("tokenizer.ggml.tokens", v.Tokens)
	w.AddInt32s("tokenizer.ggml.token_type", v.Types)
	if v.Scores != nil {
		w.AddFloat32s("tokenizer.ggml.scores", v.Scores)
	}
	if len(v.Merges) > 0 {
		w.AddStrings("tokenizer.ggml.merges", v.Merges)
	}
	w.AddUint32("tokenizer.ggml.bos_token_id", uint32(v.BOS))
	w.AddUint32("tokenizer.ggml.eos_token_id", uint32(v.EOS))
	w.AddUint32("tokenizer.ggml.padding_token_id", uint32(v.EOS))
	w.AddBool("tokenizer.ggml.add_bos_token", v.AddBOS)
	w.AddBool("tokenizer.ggml.add_eos_token", false)
	w.AddString("tokenizer.chat_template", tmpl)

	// One PCG stream for all weights, consumed in tensor order, so that a
	// seed names one file.
	rng := rand.New(rand.NewPCG(o.Seed, 0x636f6e666f726d)) // "conform"
	embd, ff, kv := uint64(p.Embd), uint64(p.FF), uint64(p.Embd/p.Heads*p.KVHeads)
	mat := func(name string, dims ...uint64) {
		w.AddTensorFunc(name, typ, dims, random(rng, dims[0]*dims[1]))
	}
	ones := func(name string, n uint64) {
		w.AddTensorFunc(name, gguf.TensorF32, []uint64{n}, onesF32(n))
	}
	mat("token_embd.weight", embd, uint64(nVocab))
	for i := range p.Blocks {
		b := fmt.Sprintf("blk.%d.", i)
		ones(b+"attn_norm.weight", embd)
		mat(b+"attn_q.weight", embd, embd)
		mat(b+"attn_k.weight", embd, kv)
		mat(b+"attn_v.weight", embd, kv)
		mat(b+"attn_output.weight", embd, embd)
		ones(b+"ffn_norm.weight", embd)
		mat(b+"ffn_gate.weight", embd, ff)
		mat(b+"ffn_up.weight", embd, ff)
		mat(b+"ffn_down.weight", ff, embd)
	}
	ones("output_norm.weight", embd)
	if !p.TiedEmbeddings {
		mat("output.weight", embd, uint64(nVocab))
	}
	if err := w.Err(); err != nil {
		return nil, &Error{Code: CodeOptions, Source: v.Source, Err: err}
	}
	return w, nil
}

// randomF16 returns a writer of n F16 values with random signs and
// magnitudes in [2^-7, 2^-5): small enough that activations stay finite
// through the blocks, large enough that logits differ between tokens. The
// values are made directly as F16 bits (exponent field 8 or 9, a random
// 10-bit mantissa), four per 64 random bits.
func randomF16(rng *rand.Rand, n uint64) func(io.Writer) error {
	return func(out io.Writer) error {
		buf := make([]byte, 64<<10)
		for n > 0 {
			k := min(n, uint64(len(buf)/2))
			for i := uint64(0); i < k; i += 4 {
				r := rng.Uint64()
				for j := uint64(0); j < 4 && i+j < k; j++ {
					bits := uint16(r >> (16 * j))
					sign := bits & 0x8000
					exp := uint16(8+(bits>>10)&1) << 10 // 2^-7 or 2^-6 times 1.mantissa
					binary.LittleEndian.PutUint16(buf[2*(i+j):], sign|exp|bits&0x3ff)
				}
			}
			if _, err := out.Write(buf[:2*k]); err != nil {
				return err
			}
			n -= k
		}
		return nil
	}
}

// Scales of the quantised weights, as F16 bits: values d·q reach ±2^-5,
// the F16 weights' largest magnitude. Q8_0 (q in [-127, 127]):
// d = 2^-5/127 ≈ 2.46e-4; Q4_0 (q-8 in [-8, 7]): d = 2^-8.
const (
	q8Scale = 0x0C08 // 2.4605e-4
	q4Scale = 0x1C00 // 2^-8
)

// randomQ8_0 returns a writer of n Q8_0 values (n a multiple of 32): per
// block of 32, the F16 scale q8Scale and 32 random int8 in [-127, 127].
func randomQ8_0(rng *rand.Rand, n uint64) func(io.Writer) error {
	return randomBlocks(n, 34, func(blk []byte) {
		binary.LittleEndian.PutUint16(blk, q8Scale)
		for i := 0; i < 32; i += 8 {
			r := rng.Uint64()
			for j := range 8 {
				q := int8(r >> (8 * j))
				if q == -128 {
					q = -127
				}
				blk[2+i+j] = byte(q)
			}
		}
	})
}

// randomQ4_0 returns a writer of n Q4_0 values (n a multiple of 32): per
// block of 32, the F16 scale q4Scale and 16 random bytes of two 4-bit
// quants each.
func randomQ4_0(rng *rand.Rand, n uint64) func(io.Writer) error {
	return randomBlocks(n, 18, func(blk []byte) {
		binary.LittleEndian.PutUint16(blk, q4Scale)
		binary.LittleEndian.PutUint64(blk[2:], rng.Uint64())
		binary.LittleEndian.PutUint64(blk[10:], rng.Uint64())
	})
}

// randomBlocks returns a writer of n values in blocks of 32, each block
// size bytes that fill writes, in order.
func randomBlocks(n uint64, size int, fill func(blk []byte)) func(io.Writer) error {
	return func(out io.Writer) error {
		if n%32 != 0 {
			return fmt.Errorf("%d values are not whole blocks of 32", n)
		}
		buf := make([]byte, 1024*size)
		for n > 0 {
			k := min(n/32, uint64(len(buf)/size))
			for b := range int(k) {
				fill(buf[b*size : (b+1)*size])
			}
			if _, err := out.Write(buf[:int(k)*size]); err != nil {
				return err
			}
			n -= 32 * k
		}
		return nil
	}
}

// onesF32 returns a writer of n F32 ones (norm weights).
func onesF32(n uint64) func(io.Writer) error {
	return func(out io.Writer) error {
		buf := make([]byte, 4*n)
		for i := range n {
			binary.LittleEndian.PutUint32(buf[4*i:], 0x3f800000)
		}
		_, err := out.Write(buf)
		return err
	}
}
