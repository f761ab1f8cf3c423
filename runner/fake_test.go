package runner

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"sync"
)

// fakeEngine is a deterministic engine: the logits after a token are a
// pseudo-random function of the whole history of its sequence, so a
// sequence's output does not depend on what else shares the batch. It
// checks that positions continue each sequence's KV cache exactly.
type fakeEngine struct {
	vocab int

	mu      sync.Mutex
	kv      map[int][]TokenID
	rows    [][]float32
	rowOf   []int   // batch entry → index into rows, or -1
	batches []Batch // deep copies of every decoded batch
	removed [][3]int
	// failDecode, when set, is consulted before each decode.
	failDecode func(b Batch) error
	// onDecode, when set, is called at the start of each decode with the
	// number of decodes before it (tests submit requests from it).
	onDecode func(n int)
	// noPartialRemove makes RemoveKV fail unless it removes a whole
	// sequence, like a recurrent model's cache.
	noPartialRemove bool
	// failLogits, when set, is consulted before each Logits call.
	failLogits func(i int) error
	// onLogits, when set, is called at the start of each Logits call with
	// the number of decodes so far (a GPU backend's wait for the device).
	onLogits func(n int)
}

func newFakeEngine(vocab int) *fakeEngine {
	return &fakeEngine{vocab: vocab, kv: map[int][]TokenID{}}
}

func (e *fakeEngine) NumVocab() int { return e.vocab }

func (e *fakeEngine) Decode(b Batch) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.onDecode != nil {
		e.onDecode(len(e.batches))
	}
	if e.failDecode != nil {
		if err := e.failDecode(b); err != nil {
			return err
		}
	}
	if len(b.Tokens) == 0 || len(b.Pos) != len(b.Tokens) || len(b.Seq) != len(b.Tokens) || len(b.Logits) != len(b.Tokens) {
		return fmt.Errorf("fake: malformed batch %+v", b)
	}
	cp := Batch{Tokens: slices.Clone(b.Tokens), Pos: slices.Clone(b.Pos), Seq: slices.Clone(b.Seq), Logits: slices.Clone(b.Logits)}
	e.batches = append(e.batches, cp)
	e.rows = e.rows[:0]
	e.rowOf = e.rowOf[:0]
	for j, t := range b.Tokens {
		seq := b.Seq[j]
		if b.Pos[j] != len(e.kv[seq]) {
			return fmt.Errorf("fake: seq %d: position %d, want %d", seq, b.Pos[j], len(e.kv[seq]))
		}
		if t < 0 || int(t) >= e.vocab {
			return fmt.Errorf("fake: token %d outside the vocabulary", t)
		}
		e.kv[seq] = append(e.kv[seq], t)
		e.rowOf = append(e.rowOf, -1)
		if b.Logits[j] {
			e.rowOf[j] = len(e.rows)
			e.rows = append(e.rows, fakeLogits(e.kv[seq], e.vocab))
		}
	}
	return nil
}

func (e *fakeEngine) Logits(i int) ([]float32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.onLogits != nil {
		e.onLogits(len(e.batches))
	}
	if e.failLogits != nil {
		if err := e.failLogits(i); err != nil {
			return nil, err
		}
	}
	if i < 0 || i >= len(e.rowOf) || e.rowOf[i] < 0 {
		return nil, fmt.Errorf("fake: entry %d of the last batch has no logits", i)
	}
	return e.rows[e.rowOf[i]], nil
}

func (e *fakeEngine) RemoveKV(seq int, from, to int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.removed = append(e.removed, [3]int{seq, from, to})
	if e.noPartialRemove && from > 0 {
		return errors.New("fake: this cache cannot drop a suffix")
	}
	kv := e.kv[seq]
	if from > len(kv) {
		return fmt.Errorf("fake: seq %d: remove from %d past %d", seq, from, len(kv))
	}
	if to >= 0 && to < len(kv) {
		return errors.New("fake: only suffix removal is supported")
	}
	e.kv[seq] = kv[:from]
	return nil
}

func (e *fakeEngine) snapshot() (batches []Batch, removed [][3]int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.batches), slices.Clone(e.removed)
}

// fakeLogits hashes the history into a seed and draws a row from it, with
// a few strong peaks so that sampling is not uniform.
func fakeLogits(hist []TokenID, vocab int) []float32 {
	h := fnv.New64a()
	var b [4]byte
	for _, t := range hist {
		b[0], b[1], b[2], b[3] = byte(t), byte(t>>8), byte(t>>16), byte(t>>24)
		h.Write(b[:])
	}
	r := rand.New(rand.NewPCG(h.Sum64(), 7))
	row := make([]float32, vocab)
	for i := range row {
		row[i] = float32(r.NormFloat64())
	}
	for range 3 {
		row[r.IntN(vocab)] += 4
	}
	return row
}

// letters detokenizes token i as one lowercase letter; tokens from 26 up
// spell two-byte UTF-8 characters, to exercise the UTF-8 hold-back.
func letters(t TokenID) []byte {
	if t < 26 {
		return []byte{byte('a' + t)}
	}
	return []byte(string(rune(0xe0 + int(t)%26)))
}

// scriptGuide allows, at step i, exactly the tokens of steps[i]; after
// the last step it is accepting and allows only eos, and it is terminated
// if terminate is set. failAt makes FillMask fail at that step (-1: never);
// lieAt makes FillMask allow a token Accept then rejects.
type scriptGuide struct {
	steps     [][]TokenID
	eos       TokenID
	terminate bool
	failAt    int
	lieAt     int
	i         int
	err       error
	accepted  []TokenID
}

func newScript(eos TokenID, terminate bool, steps ...[]TokenID) *scriptGuide {
	return &scriptGuide{steps: steps, eos: eos, terminate: terminate, failAt: -1, lieAt: -1}
}

func (c *scriptGuide) FillMask(dst []uint64) error {
	if c.err != nil {
		return c.err
	}
	if c.i == c.failAt {
		c.err = fmt.Errorf("script: mask failure at step %d", c.i)
		return c.err
	}
	set := func(t TokenID) { dst[t>>6] |= 1 << (uint(t) & 63) }
	if c.i >= len(c.steps) {
		set(c.eos)
		return nil
	}
	for _, t := range c.steps[c.i] {
		set(t)
	}
	if c.i == c.lieAt {
		clear(dst)
		set(c.steps[c.i][0] + 1) // tests choose steps so that this one is not allowed
	}
	return nil
}

func (c *scriptGuide) Accept(t TokenID) error {
	if c.err != nil {
		return c.err
	}
	if c.i >= len(c.steps) || !slices.Contains(c.steps[c.i], t) {
		c.err = fmt.Errorf("script: token %d not allowed at step %d", t, c.i)
		return c.err
	}
	c.accepted = append(c.accepted, t)
	c.i++
	return nil
}

func (c *scriptGuide) IsAccepting() bool  { return c.err == nil && c.i >= len(c.steps) }
func (c *scriptGuide) IsTerminated() bool { return c.terminate && c.IsAccepting() }

func (c *scriptGuide) Forced(max int) []TokenID {
	var f []TokenID
	for j := c.i; j < len(c.steps) && len(c.steps[j]) == 1 && len(f) < max; j++ {
		f = append(f, c.steps[j][0])
	}
	return f
}

func (c *scriptGuide) Rollback(n int) error {
	if n > c.i {
		return errors.New("script: rollback past the start")
	}
	c.i -= n
	c.accepted = c.accepted[:len(c.accepted)-n]
	return nil
}

var _ Guide = (*scriptGuide)(nil)
var _ Engine = (*fakeEngine)(nil)
