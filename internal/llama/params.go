package llama

import (
	"fmt"
	"runtime"
	"strings"

	"conform/token"
)

// TokenID is a token of the model's vocabulary, as llama.cpp numbers it
// (llama_token). It is token.ID, the id type every stage shares.
type TokenID = token.ID

// SeqID is a sequence (one request's stream) in the shared KV cache, from 0
// to Params.Parallel-1 (llama_seq_id).
type SeqID int32

// FlashAttention selects llama.cpp's fused attention kernel.
type FlashAttention int

// The flash-attention settings. The zero value lets llama.cpp decide.
const (
	FlashAttentionAuto FlashAttention = iota
	FlashAttentionOn
	FlashAttentionOff
)

// String returns "auto", "on" or "off".
func (f FlashAttention) String() string {
	switch f {
	case FlashAttentionAuto:
		return "auto"
	case FlashAttentionOn:
		return "on"
	case FlashAttentionOff:
		return "off"
	}
	return fmt.Sprintf("FlashAttention(%d)", int(f))
}

// KVLayout selects how the sequences share the KV cache.
type KVLayout int

// The KV layouts. The zero value picks one from Parallel.
const (
	// KVAuto is KVUnified when Parallel > 1 (one sequence has one layout).
	KVAuto KVLayout = iota
	// KVUnified keeps every sequence in one buffer (llama.cpp's
	// kv_unified): a batch is never split by sequence, whatever mix of
	// sequences and token counts it holds, and each token attends over
	// the cells in use by all sequences (masked to its own).
	KVUnified
	// KVPerSequence gives each sequence its own stream: attention reads
	// only its own cells, but llama.cpp decodes a batch in one graph only
	// when its sequences are consecutive ids with equal token counts, and
	// splits it into several graph computes otherwise.
	KVPerSequence
)

// String returns "auto", "unified" or "per-sequence".
func (k KVLayout) String() string {
	switch k {
	case KVAuto:
		return "auto"
	case KVUnified:
		return "unified"
	case KVPerSequence:
		return "per-sequence"
	}
	return fmt.Sprintf("KVLayout(%d)", int(k))
}

// ParseKVLayout reads a layout's String form: auto, unified or
// per-sequence.
func ParseKVLayout(s string) (KVLayout, error) {
	for _, k := range []KVLayout{KVAuto, KVUnified, KVPerSequence} {
		if s == k.String() {
			return k, nil
		}
	}
	return 0, errorf(CodeParams, "parse", "KV layout %q: want auto, unified or per-sequence", s)
}

// Params configures Load. The zero value means the defaults below.
type Params struct {
	// ContextSize is the KV cache size in tokens, shared by all sequences
	// (llama.cpp's n_ctx); each sequence gets ContextSize/Parallel. 0 means
	// DefaultContextSize.
	ContextSize int
	// BatchSize is the most tokens one sequence contributes to a decode
	// (n_ubatch); a Batch holds at most BatchSize*Parallel tokens (n_batch).
	// 0 means DefaultBatchSize.
	BatchSize int
	// Parallel is the number of sequences (n_seq_max). 0 means 1.
	Parallel int
	// Threads is the CPU threads for decoding. 0 means runtime.NumCPU().
	Threads int
	// GPULayers is the number of layers offloaded to a GPU (0: none; a
	// negative value: all). With no GPU device registered (no backend
	// library in BackendDir, or no device for it) the model runs on the
	// CPU and Model.Placement says why.
	GPULayers int
	// BackendDir is the folder of backend libraries (libggml-cuda.so, ...)
	// loaded at the first Load of the process; "" loads none. See
	// InitBackends.
	BackendDir string
	// FlashAttention selects the fused attention kernel.
	FlashAttention FlashAttention
	// KVCacheType is the KV cache element type: "" or "f16" (default),
	// "q8_0" or "q4_0". Quantised caches need flash attention, so they
	// are refused with FlashAttentionOff.
	KVCacheType string
	// KVLayout selects one buffer for all sequences or one per sequence;
	// either way each sequence holds at most ContextSize/Parallel
	// positions.
	KVLayout KVLayout
	// Progress, if set, is called while the weights load with the fraction
	// done (0 to 1), from llama.cpp's loader thread; it must return quickly.
	Progress func(float32)
}

// Defaults for Params' zero fields.
const (
	// DefaultContextSize fits a few thousand-token tool-calling chats.
	DefaultContextSize = 4096
	// DefaultBatchSize is llama.cpp's own default n_ubatch.
	DefaultBatchSize = 512
	// MaxParallel bounds Parallel: llama.cpp's LLAMA_MAX_SEQ is 256.
	MaxParallel = 256
)

// resolve fills defaults and checks p.
func (p Params) resolve() (Params, error) {
	if p.ContextSize == 0 {
		p.ContextSize = DefaultContextSize
	}
	if p.BatchSize == 0 {
		p.BatchSize = DefaultBatchSize
	}
	if p.Parallel == 0 {
		p.Parallel = 1
	}
	if p.Threads == 0 {
		p.Threads = runtime.NumCPU()
	}
	if p.GPULayers < 0 {
		p.GPULayers = 999 // llama.cpp clamps to the model's layer count
	}
	p.KVCacheType = strings.ToLower(p.KVCacheType)
	switch {
	case p.ContextSize < 0 || p.BatchSize < 0 || p.Parallel < 0 || p.Threads < 0:
		return p, errorf(CodeParams, "load", "negative size in %+v", p)
	case p.Parallel > MaxParallel:
		return p, errorf(CodeParams, "load", "Parallel %d exceeds %d", p.Parallel, MaxParallel)
	case p.ContextSize < p.Parallel:
		return p, errorf(CodeParams, "load", "ContextSize %d is less than one token per sequence (Parallel %d)", p.ContextSize, p.Parallel)
	case p.FlashAttention < FlashAttentionAuto || p.FlashAttention > FlashAttentionOff:
		return p, errorf(CodeParams, "load", "unknown FlashAttention %d", int(p.FlashAttention))
	case p.KVLayout < KVAuto || p.KVLayout > KVPerSequence:
		return p, errorf(CodeParams, "load", "unknown KVLayout %d", int(p.KVLayout))
	}
	if p.KVLayout == KVAuto {
		p.KVLayout = KVPerSequence
		if p.Parallel > 1 {
			p.KVLayout = KVUnified
		}
	}
	switch p.KVCacheType {
	case "", "f16":
	case "q8_0", "q4_0":
		if p.FlashAttention == FlashAttentionOff {
			return p, errorf(CodeParams, "load", "KV cache type %s needs flash attention", p.KVCacheType)
		}
	default:
		return p, errorf(CodeParams, "load", "unknown KV cache type %q (want f16, q8_0 or q4_0)", p.KVCacheType)
	}
	return p, nil
}

// BatchToken is one entry of a Batch: Token at position Pos of sequence
// Seq; Logits asks for the logits after this token (for the next one).
type BatchToken struct {
	Token  TokenID
	Pos    int
	Seq    SeqID
	Logits bool
}

// Batch is the input of one decode: tokens of one or more sequences. The
// i-th entry that asked for logits can be read with Logits(i) after Decode.
type Batch []BatchToken

// Engine is what a decode loop needs from a model; *Model implements it,
// and tests use a fake.
type Engine interface {
	// NumVocab is the width of a logits row.
	NumVocab() int
	// Decode runs the batch through the model.
	Decode(b Batch) error
	// Logits returns a copy of the logits after entry i of the last batch.
	Logits(i int) ([]float32, error)
	// RemoveSeq drops positions [p0, p1) of seq from the KV cache (p1 < 0:
	// to the end).
	RemoveSeq(seq SeqID, p0, p1 int) error
	// ClearSeq drops all of seq's positions.
	ClearSeq(seq SeqID) error
	// Close frees the model; it is idempotent.
	Close() error
}
