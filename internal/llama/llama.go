//go:build cgo

package llama

/*
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>

// llama.h of the pinned ollama module (v0.24.0), linked into
// build/include/ollama by the Makefile's llama-deps; llama.cpp itself is
// compiled and linked in by github.com/ollama/ollama/llama. The ollama
// wrapper has no way to free a context, read its actual size or set
// kv_unified, and its TokenToPiece trims trailing NUL bytes, so these are
// called here.
#include "ollama/llama.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/ollama/ollama/llama"
	"github.com/ollama/ollama/ml"
)

// maxPos bounds positions: llama_pos is an int32, and positions this large
// only come from a caller's bug.
const maxPos = 1<<31 - 1

// Model is a loaded model with its context (KV cache) and a reusable batch.
// Its methods are safe for concurrent use (they serialise on a mutex).
type Model struct {
	mu        sync.Mutex
	model     *llama.Model
	ctx       *llama.Context
	cctx      *C.struct_llama_context // ctx's C pointer, for llama_free; nil if unknown
	batch     *llama.Batch
	cbatch    *C.struct_llama_batch // batch's C struct; nil if unknown
	dec       *decoder              // the decode thread; nil: a cgo call
	nVocab    int
	params    Params // as resolved, ContextSize as llama.cpp made it
	seqCtx    int    // KV cells per sequence (llama_n_ctx_seq)
	arch      string
	path      string
	logits    []bool // which entries of the last decoded batch have logits
	placement Placement
	decoded   bool
	closed    bool
}

var _ Engine = (*Model)(nil)

// Load validates path with [Validate], loads the model into llama.cpp and
// creates a context for p.Parallel sequences sharing p.ContextSize tokens.
func Load(path string, p Params) (*Model, error) {
	p, err := p.resolve()
	if err != nil {
		err.(*Error).Path = path
		return nil, err
	}
	f, err := Validate(path)
	if err != nil {
		if e, ok := err.(*Error); ok {
			e.Op = "load"
		}
		return nil, err
	}
	arch, _ := f.String("general.architecture")
	backends, err := InitBackends(p.BackendDir)
	if err != nil {
		return nil, err
	}
	placement := offload(backends, p.GPULayers)

	lm, err := llama.LoadModelFromFile(path, llama.ModelParams{NumGpuLayers: placement.GPULayers, UseMmap: true, Progress: p.Progress})
	if err != nil {
		return nil, &Error{Code: CodeLoad, Op: "load", Path: path, Err: err}
	}
	fa := ml.FlashAttentionAuto
	switch p.FlashAttention {
	case FlashAttentionOn:
		fa = ml.FlashAttentionEnabled
	case FlashAttentionOff:
		fa = ml.FlashAttentionDisabled
	}
	cp := llama.NewContextParams(p.ContextSize, p.BatchSize, p.Parallel, p.Threads, fa, p.KVCacheType)
	if err := setContextParams(&cp, p); err != nil {
		llama.FreeModel(lm)
		err.Path = path
		return nil, err
	}
	ctx, err := llama.NewContextWithModel(lm, cp)
	if err != nil {
		llama.FreeModel(lm)
		return nil, &Error{Code: CodeLoad, Op: "load", Path: path, Msg: "creating the context", Err: err}
	}
	m := &Model{model: lm, ctx: ctx, nVocab: lm.NumVocab(), params: p, arch: arch, path: path, placement: placement}
	m.cctx = contextPointer(ctx, lm)
	m.seqCtx = p.ContextSize / p.Parallel
	if m.cctx != nil {
		// llama.cpp rounds a per-sequence size up to a multiple of 256;
		// a unified cache is one sequence's as far as llama.cpp goes
		// (n_ctx_seq = n_ctx), so each gets its share of it here.
		m.params.ContextSize = int(C.llama_n_ctx(m.cctx))
		m.seqCtx = int(C.llama_n_ctx_seq(m.cctx))
		if p.KVLayout == KVUnified {
			m.seqCtx = m.params.ContextSize / p.Parallel
		}
	}
	batch, err := llama.NewBatch(p.BatchSize, p.Parallel, 0)
	if err != nil {
		m.free()
		return nil, &Error{Code: CodeLoad, Op: "load", Path: path, Msg: "allocating the batch", Err: err}
	}
	m.batch = batch
	if m.cctx != nil {
		if m.cbatch = batchPointer(batch); m.cbatch != nil {
			m.dec = newDecoder()
		}
	}
	return m, nil
}

// batchPointer returns the llama_batch inside ollama's Batch, its first
// field (v0.24.0). It is trusted only if an entry added through Batch.Add
// reads back through it, and Clear empties it; otherwise nil.
func batchPointer(b *llama.Batch) *C.struct_llama_batch {
	c := (*C.struct_llama_batch)(unsafe.Pointer(b))
	b.Add(1, nil, 7, true, 0)
	ok := c.n_tokens == 1 && c.token != nil && *c.token == 1 && c.pos != nil && *c.pos == 7 &&
		c.n_seq_id != nil && *c.n_seq_id == 1 && c.seq_id != nil && *c.seq_id != nil && **c.seq_id == 0 &&
		c.logits != nil && *c.logits == 1
	b.Clear()
	if !ok || c.n_tokens != 0 {
		return nil
	}
	return c
}

// setContextParams sets in cp what ollama's NewContextParams leaves at
// llama.cpp's defaults: the KV layout. ContextParams (v0.24.0) is a struct
// whose one field is llama_context_params; it is read as that only when the
// sizes agree and the fields NewContextParams set read back as p's, so a
// layout change is a load error instead of a write into the wrong field.
func setContextParams(cp *llama.ContextParams, p Params) *Error {
	if unsafe.Sizeof(*cp) != unsafe.Sizeof(C.struct_llama_context_params{}) {
		return errorf(CodeLoad, "load", "ollama's ContextParams is %d bytes, llama_context_params %d: the binding does not match llama.h", unsafe.Sizeof(*cp), unsafe.Sizeof(C.struct_llama_context_params{}))
	}
	c := (*C.struct_llama_context_params)(unsafe.Pointer(cp))
	if int(c.n_ctx) != p.ContextSize || int(c.n_ubatch) != p.BatchSize || int(c.n_seq_max) != p.Parallel || int(c.n_threads) != p.Threads {
		return errorf(CodeLoad, "load", "ollama's ContextParams does not read back as llama_context_params (n_ctx %d, n_ubatch %d, n_seq_max %d, n_threads %d)", c.n_ctx, c.n_ubatch, c.n_seq_max, c.n_threads)
	}
	c.kv_unified = C.bool(p.KVLayout == KVUnified)
	return nil
}

// llamaSeqContext is llama.cpp's own n_ctx_seq (0 when the context pointer
// is unknown): n_ctx for a unified cache, a stream's cells otherwise. For
// tests that the layout reached llama.cpp.
func (m *Model) llamaSeqContext() int {
	if m.cctx == nil {
		return 0
	}
	return int(C.llama_n_ctx_seq(m.cctx))
}

// contextPointer returns the C context inside ollama's Context, whose only
// pointer field comes first (v0.24.0). It reads that field through unsafe
// and trusts it only if llama_get_model of it is the model's own pointer, so
// a layout change leaks the context instead of freeing garbage.
func contextPointer(ctx *llama.Context, lm *llama.Model) *C.struct_llama_context {
	c := *(**C.struct_llama_context)(unsafe.Pointer(ctx))
	mp := *(*unsafe.Pointer)(unsafe.Pointer(lm))
	if c == nil || unsafe.Pointer(C.llama_get_model(c)) != mp {
		return nil
	}
	return c
}

// free releases what m holds; m.mu must be held or m unshared.
func (m *Model) free() {
	if m.dec != nil {
		m.dec.close()
		m.dec = nil
	}
	if m.batch != nil {
		m.batch.Free()
		m.batch = nil
		m.cbatch = nil
	}
	if m.cctx != nil {
		C.llama_free(m.cctx)
		m.cctx = nil
	}
	m.ctx = nil
	if m.model != nil {
		llama.FreeModel(m.model)
		m.model = nil
	}
}

// Close frees the context, batch and weights. It is idempotent; every
// later call of another method returns [ErrClosed].
func (m *Model) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	m.free()
	return nil
}

func (m *Model) check(op string) error {
	if m.closed {
		return &Error{Code: CodeClosed, Op: op, Path: m.path}
	}
	return nil
}

// NumVocab returns the number of tokens, the width of a logits row.
func (m *Model) NumVocab() int { return m.nVocab }

// Params returns the parameters the model was loaded with, defaults filled
// and ContextSize as llama.cpp made it (it rounds up).
func (m *Model) Params() Params { return m.params }

// Placement says which backend and devices run the model, how many layers
// llama.cpp was asked to offload, and why none were when a GPU was asked
// for and none is registered.
func (m *Model) Placement() Placement { return m.placement }

// SeqContextSize is the number of KV cells each sequence has
// (llama_n_ctx_seq, or its share of a unified cache): a sequence holds at
// most that many positions.
func (m *Model) SeqContextSize() int { return m.seqCtx }

// Architecture returns the file's general.architecture.
func (m *Model) Architecture() string { return m.arch }

// BatchCapacity is the most tokens a Batch may hold (BatchSize*Parallel).
func (m *Model) BatchCapacity() int { return m.params.BatchSize * m.params.Parallel }

// IsEOG reports whether id ends generation (EOS, EOT, ...) for llama.cpp.
func (m *Model) IsEOG(id TokenID) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || !m.validToken(id) {
		return false
	}
	return m.model.TokenIsEog(int(id))
}

// AddBOS reports whether the vocabulary asks for a BOS token at the start.
func (m *Model) AddBOS() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	return m.model.AddBOSToken()
}

func (m *Model) validToken(id TokenID) bool { return id >= 0 && int(id) < m.nVocab }

// Tokenize runs llama.cpp's tokenizer. addSpecial adds BOS/EOS as the
// vocabulary asks; parseSpecial lets special-token text become the special
// token instead of plain text.
func (m *Model) Tokenize(text string, addSpecial, parseSpecial bool) ([]TokenID, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check("tokenize"); err != nil {
		return nil, err
	}
	ids, err := m.model.Tokenize(text, addSpecial, parseSpecial)
	if err != nil {
		return nil, &Error{Code: CodeTokenize, Op: "tokenize", Err: err}
	}
	out := make([]TokenID, len(ids))
	for i, id := range ids {
		out[i] = TokenID(id)
	}
	return out, nil
}

// TokenPiece returns llama.cpp's bytes for id (llama_token_to_piece, with
// special tokens rendered as their text), or nil when id is out of range.
func (m *Model) TokenPiece(id TokenID) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || !m.validToken(id) {
		return nil
	}
	vocab := unsafe.Pointer(m.model.Vocab())
	buf := make([]byte, 32)
	for {
		n := C.llama_token_to_piece((*C.struct_llama_vocab)(vocab), C.int32_t(id), (*C.char)(unsafe.Pointer(&buf[0])), C.int32_t(len(buf)), 0, true)
		if n >= 0 {
			return buf[:n]
		}
		buf = make([]byte, -n)
	}
}

// Decode runs b through the model. Entries must have tokens in the
// vocabulary, sequences below Params.Parallel and non-negative positions,
// and b at most BatchCapacity entries. A full KV cache is [ErrKVCacheFull],
// and so, in a unified cache, is a position at or past SeqContextSize.
func (m *Model) Decode(b Batch) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check("decode"); err != nil {
		return err
	}
	m.decoded = false
	if len(b) == 0 {
		return errorf(CodeBatch, "decode", "empty batch")
	}
	if len(b) > m.BatchCapacity() {
		return errorf(CodeBatch, "decode", "%d tokens, capacity %d (BatchSize %d × Parallel %d)", len(b), m.BatchCapacity(), m.params.BatchSize, m.params.Parallel)
	}
	m.batch.Clear()
	m.logits = m.logits[:0]
	for i, t := range b {
		switch {
		case !m.validToken(t.Token):
			return errorf(CodeBatch, "decode", "entry %d: token %d outside the vocabulary [0, %d)", i, t.Token, m.nVocab)
		case t.Seq < 0 || int(t.Seq) >= m.params.Parallel:
			return errorf(CodeBatch, "decode", "entry %d: sequence %d outside [0, %d)", i, t.Seq, m.params.Parallel)
		case t.Pos < 0 || t.Pos > maxPos:
			return errorf(CodeBatch, "decode", "entry %d: position %d outside [0, %d]", i, t.Pos, maxPos)
		case t.Pos >= m.seqCtx && m.params.KVLayout == KVUnified:
			// One buffer has room for one sequence past its share, at
			// the others' cost: each is held to its share, as its own
			// stream would hold it.
			return &Error{Code: CodeKVCacheFull, Op: "decode", Msg: fmt.Sprintf("entry %d: position %d past sequence %d's %d cells", i, t.Pos, t.Seq, m.seqCtx)}
		}
		m.batch.Add(int(t.Token), nil, t.Pos, t.Logits, int(t.Seq))
		m.logits = append(m.logits, t.Logits)
	}
	if err := m.decode(); err != nil {
		if errors.Is(err, llama.ErrKvCacheFull) {
			return &Error{Code: CodeKVCacheFull, Op: "decode", Msg: fmt.Sprintf("no slot for %d tokens", len(b))}
		}
		return &Error{Code: CodeDecode, Op: "decode", Err: err}
	}
	m.decoded = true
	return nil
}

// decode runs m.batch: on the decode thread when there is one (see
// decoder_unix.go), else through ollama's Decode; the results read as
// ollama's (ErrKvCacheFull for a positive code).
func (m *Model) decode() error {
	if m.dec == nil {
		return m.ctx.Decode(m.batch)
	}
	switch code := m.dec.decode(m.cctx, *m.cbatch); {
	case code < 0:
		return fmt.Errorf("llama_decode failed with code %d", code)
	case code > 0:
		return llama.ErrKvCacheFull
	}
	return nil
}

// Logits returns a copy, in Go memory, of the logits after entry i of the
// last decoded batch; that entry must have asked for them.
func (m *Model) Logits(i int) ([]float32, error) { return m.LogitsInto(i, nil) }

// LogitsInto is Logits copied into dst (grown when it is shorter than
// the vocabulary) instead of a new slice: a decode loop that reuses its
// rows allocates nothing per step (Logits allocates a row each call,
// 0.5 MB for a 128k vocabulary, and at a few sequences a step that is
// garbage the collector then marks while the forward pass wants every
// core). It returns dst[:NumVocab()].
func (m *Model) LogitsInto(i int, dst []float32) ([]float32, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check("logits"); err != nil {
		return nil, err
	}
	if !m.decoded || i < 0 || i >= len(m.logits) || !m.logits[i] {
		return nil, errorf(CodeBatch, "logits", "entry %d of the last batch has no logits", i)
	}
	if m.cctx == nil {
		l := m.ctx.GetLogitsIth(i) // a new slice already
		if l == nil {
			return nil, errorf(CodeDecode, "logits", "llama.cpp returned no logits for entry %d", i)
		}
		if dst == nil {
			return l, nil
		}
		return append(dst[:0], l...), nil
	}
	p := C.llama_get_logits_ith(m.cctx, C.int32_t(i))
	if p == nil {
		return nil, errorf(CodeDecode, "logits", "llama.cpp returned no logits for entry %d", i)
	}
	if cap(dst) < m.nVocab {
		dst = make([]float32, m.nVocab)
	}
	dst = dst[:m.nVocab]
	copy(dst, unsafe.Slice((*float32)(unsafe.Pointer(p)), m.nVocab))
	return dst, nil
}

// RemoveSeq drops positions [p0, p1) of seq from the KV cache; p1 < 0
// means to the end. Some caches (recurrent models) cannot drop a middle
// range; that is a CodeKVCache error.
func (m *Model) RemoveSeq(seq SeqID, p0, p1 int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check("remove"); err != nil {
		return err
	}
	if seq < 0 || int(seq) >= m.params.Parallel {
		return errorf(CodeKVCache, "remove", "sequence %d outside [0, %d)", seq, m.params.Parallel)
	}
	if p0 < 0 {
		p0 = 0
	}
	if p1 < 0 {
		p1 = -1
	}
	if !m.ctx.KvCacheSeqRm(int(seq), p0, p1) {
		return errorf(CodeKVCache, "remove", "llama.cpp could not remove [%d, %d) of sequence %d", p0, p1, seq)
	}
	return nil
}

// ClearSeq drops every position of seq from the KV cache.
func (m *Model) ClearSeq(seq SeqID) error { return m.RemoveSeq(seq, 0, -1) }

// CopySeq makes dst share src's KV entries for positions [p0, p1) (p1 < 0:
// to the end), so a common prompt prefix is computed once.
func (m *Model) CopySeq(src, dst SeqID, p0, p1 int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check("copy"); err != nil {
		return err
	}
	for _, s := range []SeqID{src, dst} {
		if s < 0 || int(s) >= m.params.Parallel {
			return errorf(CodeKVCache, "copy", "sequence %d outside [0, %d)", s, m.params.Parallel)
		}
	}
	m.ctx.KvCacheSeqCp(int(src), int(dst), max(p0, 0), max(p1, -1))
	return nil
}

// ClearAll empties the whole KV cache.
func (m *Model) ClearAll() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check("clear"); err != nil {
		return err
	}
	m.ctx.KvCacheClear()
	return nil
}
