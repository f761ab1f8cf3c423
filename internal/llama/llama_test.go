//go:build cgo

package llama

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"conform/gguf"
	"conform/internal/mkmodel"
	"conform/internal/sharedtest"
	"conform/tokenizer"
)

var (
	modelsMu sync.Mutex
	models   = map[string]string{}
)

// synthModel writes (once per test binary) a tiny synthetic model with the
// vocabulary spec ("cl100k" or a tokenizer.json path) and returns its path.
func synthModel(t testing.TB, spec string) string {
	t.Helper()
	modelsMu.Lock()
	defer modelsMu.Unlock()
	if p, ok := models[spec]; ok {
		return p
	}
	v, err := mkmodel.LoadVocab(spec)
	if err != nil {
		t.Fatalf("LoadVocab(%q): %v", spec, err)
	}
	p := filepath.Join(testDir, "model"+string(rune('a'+len(models)))+".gguf")
	if err := mkmodel.Write(p, mkmodel.Options{Vocab: v, Seed: 1}); err != nil {
		t.Fatalf("mkmodel.Write: %v", err)
	}
	models[spec] = p
	return p
}

func loadTest(t testing.TB, spec string, p Params) *Model {
	t.Helper()
	m, err := Load(synthModel(t, spec), p)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func argmax(l []float32) TokenID {
	best := 0
	for i, x := range l {
		if x > l[best] {
			best = i
		}
	}
	return TokenID(best)
}

func checkFinite(t *testing.T, what string, l []float32) {
	t.Helper()
	for i, x := range l {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			t.Fatalf("%s: logit %d is %v", what, i, x)
		}
	}
}

func promptBatch(ids []TokenID, seq SeqID, start int) Batch {
	b := make(Batch, len(ids))
	for i, id := range ids {
		b[i] = BatchToken{Token: id, Pos: start + i, Seq: seq, Logits: i == len(ids)-1}
	}
	return b
}

// TestGenerate decodes a chat prompt in one batch and generates greedily.
func TestGenerate(t *testing.T) {
	m := loadTest(t, "cl100k", Params{ContextSize: 512, BatchSize: 64, Threads: 2})
	// cl100k: 100256 ranks, specials up to id 100276, then the two ChatML
	// tokens mkmodel appends.
	if m.Architecture() != "llama" || m.NumVocab() != 100277+2 {
		t.Errorf("Architecture, NumVocab = %q, %d; want llama, %d", m.Architecture(), m.NumVocab(), 100277+2)
	}
	ids, err := m.Tokenize("<|im_start|>user\nHello, world! 12345<|im_end|>\n<|im_start|>assistant\n", false, true)
	if err != nil {
		t.Fatalf("Tokenize: %v", err)
	}
	b := promptBatch(ids, 0, 0)
	if err := m.Decode(b); err != nil {
		t.Fatalf("Decode(prompt of %d): %v", len(ids), err)
	}
	pos, last := len(ids), len(b)-1
	var out []TokenID
	for range 10 {
		l, err := m.Logits(last)
		if err != nil {
			t.Fatalf("Logits(%d): %v", last, err)
		}
		if len(l) != m.NumVocab() {
			t.Fatalf("len(Logits) = %d, want NumVocab %d", len(l), m.NumVocab())
		}
		checkFinite(t, "generation", l)
		next := argmax(l)
		out = append(out, next)
		if err := m.Decode(Batch{{Token: next, Pos: pos, Logits: true}}); err != nil {
			t.Fatalf("Decode(token %d at %d): %v", next, pos, err)
		}
		pos, last = pos+1, 0
	}
	t.Logf("prompt %d tokens, generated %v", len(ids), out)
}

// TestTokenize checks special-token parsing and the pre-tokenizer on the
// synthetic cl100k model, whose pieces are compared with conform/tokenizer.
func TestTokenize(t *testing.T) {
	m := loadTest(t, "cl100k", Params{ContextSize: 256, Threads: 2})
	v, err := tokenizer.LoadGGUF(synthModel(t, "cl100k"))
	if err != nil {
		t.Fatalf("tokenizer.LoadGGUF: %v", err)
	}
	imStart := TokenID(m.NumVocab() - 2)
	tests := []struct {
		text         string
		parseSpecial bool
		want         []string // pieces
	}{
		{"<|im_start|>", true, []string{"<|im_start|>"}},
		{"<|im_start|>", false, []string{"<", "|", "im", "_start", "|", ">"}}, // as tiktoken: 27, 91, ...
		{"12345", false, []string{"123", "45"}},
		{"Hello, world!", false, []string{"Hello", ",", " world", "!"}},
		{"  x\n\n", false, []string{" ", " x", "\n\n"}},
		{"", false, nil},
	}
	for _, tt := range tests {
		ids, err := m.Tokenize(tt.text, false, tt.parseSpecial)
		if err != nil {
			t.Fatalf("Tokenize(%q): %v", tt.text, err)
		}
		var got []string
		for _, id := range ids {
			got = append(got, string(m.TokenPiece(id)))
			if !v.Special[id] && !bytes.Equal(m.TokenPiece(id), v.Tokens[id]) {
				t.Errorf("piece of %d: llama.cpp %q, tokenizer %q", id, m.TokenPiece(id), v.Tokens[id])
			}
		}
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("Tokenize(%q, parseSpecial=%v) pieces = %q, want %q", tt.text, tt.parseSpecial, got, tt.want)
		}
	}
	if ids, _ := m.Tokenize("<|im_start|>", false, true); len(ids) != 1 || ids[0] != imStart {
		t.Errorf("Tokenize(<|im_start|>) = %v, want [%d]", ids, imStart)
	}
	if p := m.TokenPiece(-1); p != nil {
		t.Errorf("TokenPiece(-1) = %q, want nil", p)
	}
	if p := m.TokenPiece(TokenID(m.NumVocab())); p != nil {
		t.Errorf("TokenPiece(NumVocab) = %q, want nil", p)
	}
}

// checkPieces compares, for every token, conform/tokenizer's bytes (read
// from the GGUF with LoadGGUF) with llama.cpp's piece; special tokens and
// holes are skipped. It returns the number of tokens compared.
func checkPieces(t *testing.T, m *Model, path string) int {
	t.Helper()
	v, err := tokenizer.LoadGGUF(path)
	if err != nil {
		t.Fatalf("tokenizer.LoadGGUF: %v", err)
	}
	if v.Len() != m.NumVocab() {
		t.Fatalf("tokenizer has %d tokens, llama.cpp %d", v.Len(), m.NumVocab())
	}
	compared, bad := 0, 0
	for id := range v.Len() {
		if v.Special[id] || v.Tokens[id] == nil {
			continue
		}
		compared++
		if got := m.TokenPiece(TokenID(id)); !bytes.Equal(got, v.Tokens[id]) {
			if bad++; bad <= 10 {
				t.Errorf("token %d: llama.cpp piece %q, tokenizer bytes %q", id, got, v.Tokens[id])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d pieces differ", bad, compared)
	}
	return compared
}

func TestPiecesMatchTokenizer(t *testing.T) {
	m := loadTest(t, "cl100k", Params{ContextSize: 256, Threads: 2})
	if n := checkPieces(t, m, synthModel(t, "cl100k")); n != 100256 {
		t.Errorf("compared %d pieces, want the 100256 ranks", n)
	}
}

// TestPiecesO200k is TestPiecesMatchTokenizer for o200k (200k tokens; the
// merge recovery alone takes ~10 s), run when CONFORM_LLAMA_SLOW=1.
func TestPiecesO200k(t *testing.T) {
	if os.Getenv("CONFORM_LLAMA_SLOW") == "" {
		t.Skip("set CONFORM_LLAMA_SLOW=1 to check the o200k vocabulary")
	}
	m := loadTest(t, "o200k", Params{ContextSize: 256, Threads: 2})
	if n := checkPieces(t, m, synthModel(t, "o200k")); n != 199998 {
		t.Errorf("compared %d pieces, want the 199998 ranks", n)
	}
	ids, err := m.Tokenize("Hello, world! 12345", false, false)
	if err != nil {
		t.Fatal(err)
	}
	var pieces []string
	for _, id := range ids {
		pieces = append(pieces, string(m.TokenPiece(id)))
	}
	if got, want := strings.Join(pieces, "|"), "Hello|,| world|!| |123|45"; got != want {
		t.Errorf("o200k pieces of %q = %q, want %q", "Hello, world! 12345", got, want)
	}
}

// TestSharedVocabularies builds synthetic models with real HF vocabularies
// from ../shared and checks every piece against conform/tokenizer and
// llama.cpp's tokenization against the HF reference ids.
func TestSharedVocabularies(t *testing.T) {
	if testing.Short() {
		t.Skip("short: skipping the 150k-token vocabularies")
	}
	for _, name := range []string{"qwen3", "llama3_1", "llama2"} {
		t.Run(name, func(t *testing.T) {
			tj := sharedtest.Path(t, "vocab", name, "tokenizer.json")
			m := loadTest(t, tj, Params{ContextSize: 256, Threads: 2})
			n := checkPieces(t, m, synthModel(t, tj))
			ref, err := os.ReadFile(filepath.Join(filepath.Dir(tj), "reference.jsonl"))
			if err != nil {
				t.Skipf("no reference.jsonl: %v", err)
			}
			cases, bad := 0, 0
			for line := range strings.Lines(string(ref)) {
				var c struct {
					Text string
					IDs  []TokenID
				}
				if err := json.Unmarshal([]byte(line), &c); err != nil {
					t.Fatalf("reference.jsonl: %v", err)
				}
				got, err := m.Tokenize(c.Text, false, true)
				if err != nil {
					t.Fatalf("Tokenize(%q): %v", c.Text, err)
				}
				cases++
				if !equalIDs(got, c.IDs) {
					bad++
					t.Errorf("Tokenize(%q) = %v, HF reference %v", c.Text, got, c.IDs)
				}
			}
			t.Logf("%s: %d pieces equal; %d/%d reference texts tokenized as HF does", name, n, cases-bad, cases)
		})
	}
}

func equalIDs(a, b []TokenID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestSequences decodes two prompts as two sequences of one batch and
// checks them against each prompt decoded alone, then edits the KV cache.
// TestSequences runs two sequences in one batch, drops, clears and copies
// them, in both KV layouts: each sequence's logits are those it has alone.
func TestSequences(t *testing.T) {
	for _, kv := range []KVLayout{KVUnified, KVPerSequence} {
		t.Run(kv.String(), func(t *testing.T) { testSequences(t, kv) })
	}
}

func testSequences(t *testing.T, kv KVLayout) {
	m := loadTest(t, "cl100k", Params{ContextSize: 512, BatchSize: 32, Parallel: 2, Threads: 2, KVLayout: kv})
	a, _ := m.Tokenize("The quick brown fox", false, false)
	b, _ := m.Tokenize("jumps over the lazy dog again and again", false, false)
	solo := func(ids []TokenID) []float32 {
		t.Helper()
		if err := m.ClearAll(); err != nil {
			t.Fatalf("ClearAll: %v", err)
		}
		if err := m.Decode(promptBatch(ids, 0, 0)); err != nil {
			t.Fatalf("Decode: %v", err)
		}
		l, err := m.Logits(len(ids) - 1)
		if err != nil {
			t.Fatalf("Logits: %v", err)
		}
		return l
	}
	wantA, wantB := solo(a), solo(b)
	if err := m.ClearAll(); err != nil {
		t.Fatal(err)
	}
	batch := append(promptBatch(a, 0, 0), promptBatch(b, 1, 0)...)
	if err := m.Decode(batch); err != nil {
		t.Fatalf("Decode(two sequences): %v", err)
	}
	gotA, err := m.Logits(len(a) - 1)
	if err != nil {
		t.Fatal(err)
	}
	gotB, err := m.Logits(len(batch) - 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want []float32
	}{{"seq 0", gotA, wantA}, {"seq 1", gotB, wantB}} {
		if d := maxDiff(c.got, c.want); d > 1e-3 || argmax(c.got) != argmax(c.want) {
			t.Errorf("%s in a shared batch: max |Δlogit| %g, argmax %d; alone: argmax %d", c.name, d, argmax(c.got), argmax(c.want))
		}
	}

	// Drop seq 0's last position and decode that token again: the logits
	// must be those of the first time.
	if err := m.RemoveSeq(0, len(a)-1, -1); err != nil {
		t.Fatalf("RemoveSeq: %v", err)
	}
	if err := m.Decode(Batch{{Token: a[len(a)-1], Pos: len(a) - 1, Seq: 0, Logits: true}}); err != nil {
		t.Fatalf("Decode after RemoveSeq: %v", err)
	}
	again, _ := m.Logits(0)
	if d := maxDiff(again, wantA); d > 1e-3 {
		t.Errorf("after RemoveSeq and re-decode: max |Δlogit| %g", d)
	}
	// A cleared sequence starts again at position 0.
	if err := m.ClearSeq(1); err != nil {
		t.Fatalf("ClearSeq: %v", err)
	}
	if err := m.Decode(promptBatch(b, 1, 0)); err != nil {
		t.Fatalf("Decode after ClearSeq: %v", err)
	}
	if l, _ := m.Logits(len(b) - 1); maxDiff(l, wantB) > 1e-3 {
		t.Errorf("after ClearSeq and re-decode: max |Δlogit| %g", maxDiff(l, wantB))
	}
	// CopySeq shares seq 0's prefix with seq 1.
	if err := m.ClearSeq(1); err != nil {
		t.Fatal(err)
	}
	if err := m.CopySeq(0, 1, 0, -1); err != nil {
		t.Fatalf("CopySeq: %v", err)
	}
	if err := m.Decode(Batch{{Token: b[0], Pos: len(a), Seq: 1, Logits: true}, {Token: b[0], Pos: len(a), Seq: 0, Logits: true}}); err != nil {
		t.Fatalf("Decode after CopySeq: %v", err)
	}
	l0, _ := m.Logits(0)
	l1, _ := m.Logits(1)
	if d := maxDiff(l0, l1); d > 1e-3 {
		t.Errorf("seq 1 copied from seq 0 differs from it: max |Δlogit| %g", d)
	}

	// LogitsInto: the same row as Logits, into the caller's buffer when
	// it is large enough (a short one is grown), and Logits' errors.
	buf := make([]float32, 3, m.NumVocab()+5)
	for i, want := range [][]float32{l0, l1} {
		got, err := m.LogitsInto(i, buf)
		if err != nil || !slices.Equal(got, want) || &got[0] != &buf[:1][0] {
			t.Errorf("LogitsInto(%d): %d values (%v), equal %v, in the buffer %v", i, len(got), err, slices.Equal(got, want), err == nil && &got[0] == &buf[:1][0])
		}
	}
	if got, err := m.LogitsInto(1, nil); err != nil || !slices.Equal(got, l1) {
		t.Errorf("LogitsInto(1, nil): %d values, %v", len(got), err)
	}
	if _, err := m.LogitsInto(2, buf); !errors.Is(err, ErrBatch) {
		t.Errorf("LogitsInto past the batch: %v, want ErrBatch", err)
	}
}

func maxDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}

// TestKVLayout: the layout reaches llama.cpp (a unified cache is one
// n_ctx_seq of all the cells, per-sequence streams split them), each
// sequence gets ContextSize/Parallel positions in both, and a unified
// cache refuses a position past that share although it has free cells.
func TestKVLayout(t *testing.T) {
	for _, tt := range []struct {
		p        Params
		want     KVLayout
		llamaSeq int // llama_n_ctx_seq
	}{
		{Params{ContextSize: 512, Parallel: 2}, KVUnified, 512},
		{Params{ContextSize: 512, Parallel: 2, KVLayout: KVUnified}, KVUnified, 512},
		{Params{ContextSize: 512, Parallel: 2, KVLayout: KVPerSequence}, KVPerSequence, 256},
		{Params{ContextSize: 256, Parallel: 1}, KVPerSequence, 256},
		{Params{ContextSize: 256, Parallel: 1, KVLayout: KVUnified}, KVUnified, 256},
	} {
		tt.p.Threads = 2
		m := loadTest(t, "cl100k", tt.p)
		name := fmt.Sprintf("Parallel %d, %v", tt.p.Parallel, tt.p.KVLayout)
		if got := m.Params().KVLayout; got != tt.want {
			t.Errorf("%s: layout %v, want %v", name, got, tt.want)
		}
		if got := m.llamaSeqContext(); got != tt.llamaSeq {
			t.Errorf("%s: llama_n_ctx_seq %d, want %d", name, got, tt.llamaSeq)
		}
		share := tt.p.ContextSize / tt.p.Parallel
		if got := m.SeqContextSize(); got != share {
			t.Errorf("%s: SeqContextSize %d, want %d", name, got, share)
		}
		last := tt.p.Parallel - 1
		if err := m.Decode(Batch{{Token: 100, Pos: share - 1, Seq: SeqID(last), Logits: true}}); err != nil {
			t.Errorf("%s: position %d (the share's last): %v", name, share-1, err)
		}
		err := m.Decode(Batch{{Token: 100, Pos: share, Seq: SeqID(last)}})
		if tt.want == KVUnified && !errors.Is(err, ErrKVCacheFull) {
			t.Errorf("%s: position %d, past the share: %v, want ErrKVCacheFull", name, share, err)
		}
		m.Close()
	}
}

func TestKVCacheFull(t *testing.T) {
	m := loadTest(t, "cl100k", Params{ContextSize: 256, BatchSize: 64, Parallel: 2, Threads: 2})
	n := m.SeqContextSize()
	if n < 128 {
		t.Fatalf("SeqContextSize = %d, want at least 128", n)
	}
	var err error
	pos := 0
	for pos <= n && err == nil {
		var b Batch
		for i := 0; i < 64 && pos <= n; i++ {
			b = append(b, BatchToken{Token: 100, Pos: pos, Seq: 0})
			pos++
		}
		err = m.Decode(b)
	}
	if !errors.Is(err, ErrKVCacheFull) {
		t.Fatalf("decoding %d positions into a sequence of %d cells: got %v, want ErrKVCacheFull", pos, n, err)
	}
	// The model stays usable: clear and decode again.
	if err := m.ClearSeq(0); err != nil {
		t.Fatal(err)
	}
	if err := m.Decode(Batch{{Token: 100, Pos: 0, Seq: 0, Logits: true}}); err != nil {
		t.Fatalf("Decode after a full cache was cleared: %v", err)
	}
}

func TestBatchErrors(t *testing.T) {
	m := loadTest(t, "cl100k", Params{ContextSize: 256, BatchSize: 4, Parallel: 2, Threads: 2})
	if _, err := m.Logits(0); !errors.Is(err, ErrBatch) {
		t.Errorf("Logits before any Decode: got %v, want ErrBatch", err)
	}
	tok := func(id TokenID, pos int, seq SeqID) BatchToken {
		return BatchToken{Token: id, Pos: pos, Seq: seq, Logits: true}
	}
	tests := []struct {
		name string
		b    Batch
	}{
		{"empty", nil},
		{"over capacity", Batch{tok(1, 0, 0), tok(1, 1, 0), tok(1, 2, 0), tok(1, 3, 0), tok(1, 4, 0), tok(1, 5, 0), tok(1, 6, 0), tok(1, 7, 0), tok(1, 8, 0)}},
		{"negative token", Batch{tok(-1, 0, 0)}},
		{"token past vocabulary", Batch{tok(TokenID(m.NumVocab()), 0, 0)}},
		{"negative sequence", Batch{tok(1, 0, -1)}},
		{"sequence past Parallel", Batch{tok(1, 0, 2)}},
		{"negative position", Batch{tok(1, -1, 0)}},
	}
	for _, tt := range tests {
		if err := m.Decode(tt.b); !errors.Is(err, ErrBatch) {
			t.Errorf("Decode(%s): got %v, want ErrBatch", tt.name, err)
		}
	}
	if err := m.Decode(Batch{{Token: 1, Pos: 0}, {Token: 2, Pos: 1, Logits: true}}); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	for _, i := range []int{-1, 0, 2} {
		if _, err := m.Logits(i); !errors.Is(err, ErrBatch) {
			t.Errorf("Logits(%d) (no logits asked there): got %v, want ErrBatch", i, err)
		}
	}
	if _, err := m.Logits(1); err != nil {
		t.Errorf("Logits(1): %v", err)
	}
	if err := m.RemoveSeq(5, 0, -1); err == nil {
		t.Errorf("RemoveSeq(5): got nil error for a sequence past Parallel")
	}
	if err := m.CopySeq(0, 9, 0, -1); err == nil {
		t.Errorf("CopySeq(0, 9): got nil error for a sequence past Parallel")
	}
}

func TestClose(t *testing.T) {
	m, err := Load(synthModel(t, "cl100k"), Params{ContextSize: 256, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := m.Decode(Batch{{Token: 1}}); !errors.Is(err, ErrClosed) {
		t.Errorf("Decode after Close: got %v, want ErrClosed", err)
	}
	if _, err := m.Tokenize("x", false, false); !errors.Is(err, ErrClosed) {
		t.Errorf("Tokenize after Close: got %v, want ErrClosed", err)
	}
	if _, err := m.Logits(0); !errors.Is(err, ErrClosed) {
		t.Errorf("Logits after Close: got %v, want ErrClosed", err)
	}
	if err := m.ClearSeq(0); !errors.Is(err, ErrClosed) {
		t.Errorf("ClearSeq after Close: got %v, want ErrClosed", err)
	}
	if p := m.TokenPiece(1); p != nil {
		t.Errorf("TokenPiece after Close = %q, want nil", p)
	}
}

// TestLoadCycles loads and closes a model repeatedly: Close must free the
// context (checked by the context pointer being known at all).
func TestLoadCycles(t *testing.T) {
	for range 3 {
		m, err := Load(synthModel(t, "cl100k"), Params{ContextSize: 256, Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		if m.cctx == nil {
			t.Fatalf("the context pointer was not recovered from ollama's Context: Close would leak it")
		}
		m.Close()
	}
}

// TestGrammar runs llama.cpp's own grammar sampler from a JSON Schema over
// the synthetic model's vocabulary, greedily.
func TestGrammar(t *testing.T) {
	m := loadTest(t, "cl100k", Params{ContextSize: 512, BatchSize: 64, Threads: 2})
	if _, err := SchemaToGrammar([]byte(`{"type": 7`)); err == nil {
		t.Errorf("SchemaToGrammar(invalid JSON): got nil error")
	}
	gbnf, err := SchemaToGrammar([]byte(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`))
	if err != nil {
		t.Fatalf("SchemaToGrammar: %v", err)
	}
	if !strings.Contains(string(gbnf), "root") {
		t.Fatalf("grammar has no root rule:\n%s", gbnf)
	}
	pieces := make([]string, m.NumVocab())
	for id := range pieces {
		pieces[id] = string(m.TokenPiece(TokenID(id)))
	}
	eos := TokenID(100257) // <|endoftext|>
	if _, err := NewGrammar("root ::= (", pieces, []TokenID{eos}); err == nil {
		t.Errorf("NewGrammar(bad GBNF): got nil error")
	}
	g, err := NewGrammar(string(gbnf), pieces, []TokenID{eos})
	if err != nil {
		t.Fatalf("NewGrammar: %v", err)
	}
	defer g.Close()
	x, _ := m.Tokenize("x", false, false)
	if err := g.Accept(x[0]); err == nil {
		t.Errorf("Accept(%q) at the start of an object: got nil error", "x")
	}

	ids, _ := m.Tokenize("<|im_start|>user\nJSON please<|im_end|>\n<|im_start|>assistant\n", false, true)
	if err := m.Decode(promptBatch(ids, 0, 0)); err != nil {
		t.Fatal(err)
	}
	var text []byte
	pos, last, done := len(ids), len(ids)-1, false
	for range 40 {
		l, err := m.Logits(last)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Apply(l); err != nil {
			t.Fatalf("Apply: %v", err)
		}
		next := argmax(l)
		if math.IsInf(float64(l[next]), -1) {
			t.Fatalf("every token masked after %q", text)
		}
		if err := g.Accept(next); err != nil {
			t.Fatalf("Accept(%d %q) after %q: %v", next, pieces[next], text, err)
		}
		if next == eos {
			done = true
			break
		}
		text = append(text, pieces[next]...)
		if err := m.Decode(Batch{{Token: next, Pos: pos, Logits: true}}); err != nil {
			t.Fatal(err)
		}
		pos, last = pos+1, 0
	}
	if !bytes.HasPrefix(text, []byte("{")) {
		t.Errorf("grammar output %q does not start an object", text)
	}
	if done && !json.Valid(text) {
		t.Errorf("grammar output %q ended but is not valid JSON", text)
	}
	t.Logf("grammar output (ended: %v): %q", done, text)
	if err := g.Close(); err != nil || g.Close() != nil {
		t.Errorf("Close twice: %v", err)
	}
	if err := g.Apply(make([]float32, len(pieces))); !errors.Is(err, ErrClosed) {
		t.Errorf("Apply after Close: got %v, want ErrClosed", err)
	}
}

// benchModel is the tiny cl100k model, or the GGUF file named by
// CONFORM_LLAMA_BENCH_MODEL (for example a qwen2.5-0.5b synthetic model);
// CONFORM_LLAMA_BENCH_THREADS sets the decode threads (default: all CPUs;
// on a loaded machine 1 avoids llama.cpp's spinning thread barriers).
func benchModel(b *testing.B, p Params) *Model {
	if n, err := strconv.Atoi(os.Getenv("CONFORM_LLAMA_BENCH_THREADS")); err == nil {
		p.Threads = n
	}
	if path := os.Getenv("CONFORM_LLAMA_BENCH_MODEL"); path != "" {
		m, err := Load(path, p)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { m.Close() })
		return m
	}
	return loadTest(b, "cl100k", p)
}

// BenchmarkDecodeToken measures one generation step: decode one token and
// copy its logits row into Go.
func BenchmarkDecodeToken(b *testing.B) {
	m := benchModel(b, Params{ContextSize: 4096, BatchSize: 64})
	pos := 0
	for b.Loop() {
		if pos == m.SeqContextSize() {
			m.ClearSeq(0)
			pos = 0
		}
		if err := m.Decode(Batch{{Token: 100, Pos: pos, Logits: true}}); err != nil {
			b.Fatal(err)
		}
		if _, err := m.Logits(0); err != nil {
			b.Fatal(err)
		}
		pos++
	}
}

// BenchmarkPrompt128 measures decoding a 128-token prompt in one batch
// (prefill), logits for the last token only.
func BenchmarkPrompt128(b *testing.B) {
	m := benchModel(b, Params{ContextSize: 512, BatchSize: 128})
	batch := make(Batch, 128)
	for i := range batch {
		batch[i] = BatchToken{Token: TokenID(100 + i), Pos: i, Logits: i == 127}
	}
	for b.Loop() {
		if err := m.ClearSeq(0); err != nil {
			b.Fatal(err)
		}
		if err := m.Decode(batch); err != nil {
			b.Fatal(err)
		}
		if _, err := m.Logits(127); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLogitsCopy measures copying one logits row into Go memory.
func BenchmarkLogitsCopy(b *testing.B) {
	m := benchModel(b, Params{ContextSize: 256, Threads: 2})
	if err := m.Decode(Batch{{Token: 100, Logits: true}}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := m.Logits(0); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLoadRefused: files that pass Validate but that llama.cpp refuses
// (a missing weight, a wrong shape) are a CodeLoad error, not a crash.
func TestLoadRefused(t *testing.T) {
	good := smallModel(t)
	m, err := Load(good, Params{ContextSize: 256, Threads: 2})
	if err != nil {
		t.Fatalf("Load(small model): %v", err)
	}
	m.Close()
	noFFN := rewrite(t, good, same, func(name string) bool { return name != "blk.1.ffn_up.weight" })
	wrongShape := rewrite(t, good, func(k string, v gguf.Value) (gguf.Value, bool) {
		if k == "llama.feed_forward_length" {
			return gguf.Value{Type: gguf.TypeUint32, Data: uint32(96)}, true
		}
		return v, true
	}, nil)
	for name, p := range map[string]string{"missing tensor": noFFN, "wrong shape": wrongShape} {
		m, err := Load(p, Params{ContextSize: 256, Threads: 2})
		if !errors.Is(err, &Error{Code: CodeLoad}) || m != nil {
			t.Errorf("Load(%s): got %v, %v; want CodeLoad", name, m, err)
		}
	}
}

// TestQuantisedModels: llama.cpp loads mkmodel's Q8_0 and Q4_0 files (the
// GPU benchmark's model types) and decodes them to finite logits.
func TestQuantisedModels(t *testing.T) {
	v, err := mkmodel.LoadVocab("cl100k")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"q8_0", "q4_0"} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), name+".gguf")
			if err := mkmodel.Write(p, mkmodel.Options{Vocab: v, Seed: 1, Type: mkmodel.WeightTypes[name]}); err != nil {
				t.Fatal(err)
			}
			m, err := Load(p, Params{ContextSize: 256, BatchSize: 64, Threads: 2})
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			defer m.Close()
			ids, err := m.Tokenize("<|im_start|>user\nHello, world!<|im_end|>\n", false, true)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Decode(promptBatch(ids, 0, 0)); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			l, err := m.Logits(len(ids) - 1)
			if err != nil {
				t.Fatal(err)
			}
			checkFinite(t, name, l)
			lo, hi := l[0], l[0]
			for _, x := range l {
				lo, hi = min(lo, x), max(hi, x)
			}
			if hi-lo == 0 {
				t.Errorf("%s: every logit is %v", name, lo)
			}
		})
	}
}
