package fsm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// A compiled constraint is a finished value: the context and the deadline
// of the compile bound only the compile, never the lazy expansions that
// later requests run (issue 13).

// nestedSchema builds, in the shape grammar/ emits for a JSON schema, an
// object of six properties nested four deep: at every level properties 3-5
// are objects (the bottom level has only leaves) and 0-2 are leaves
// (0: a string with an email format, 1: a string with a pattern, 2: a
// string that is not one of an enum), each a separate And (and Not) node,
// so a deferred value's first build compiles products. Properties 0, 2 and
// 4 are required, in any order (Perm). doc writes a valid instance that
// holds every property, in the order of the keys in order.
type nestedSchema struct {
	n   *Node
	doc func(order []int) string
}

func newNestedSchema(tb testing.TB) nestedSchema {
	const depth = 4
	strBody := `(?:[^"\\\x{0}-\x{1F}]|\\["\\/bfnrt])*`
	sep, colon := Lit(", "), Lit(": ")
	letters := "pqrs"
	key := func(level int, path string, i int) string {
		return fmt.Sprintf("%c%s%d", letters[level], path, i)
	}
	leaf := func(i int) *Node {
		switch i % 3 {
		case 0: // "format": "email"
			return Cat(Lit(`"`), And(mustParse(tb, strBody), mustParse(tb, `[a-z0-9._%+-]{1,24}@[a-z0-9-]{1,24}\.[a-z]{2,6}`)), Lit(`"`))
		case 1: // "pattern": "^[A-Z]{2,4}-[0-9]{2,8}$"
			return Cat(Lit(`"`), And(mustParse(tb, strBody), mustParse(tb, `[A-Z]{2,4}-[0-9]{2,8}`)), Lit(`"`))
		default: // "not": {"enum": ["red", "green"]}
			return And(mustParse(tb, `"`+strBody+`"`), Not(Alt(Lit(`"red"`), Lit(`"green"`))))
		}
	}
	leafText := [...]string{`"ab.c@ex-1.org"`, `"AB-1234"`, `"blue"`}
	var object func(level int, path string) *Node
	object = func(level int, path string) *Node {
		var members []*Node
		var req []bool
		for i := range 6 {
			v := leaf(i)
			if i >= 3 && level < depth-1 {
				v = object(level+1, path+fmt.Sprint(i)+"_")
			}
			members = append(members, Cat(Lit(`"`+key(level, path, i)+`"`), colon, Defer(v)))
			req = append(req, i%2 == 0)
		}
		return Cat(Lit("{"), Perm(sep, NoMatch(), members, req), Lit("}"))
	}
	var text func(level int, path string, order []int) string
	text = func(level int, path string, order []int) string {
		var kvs []string
		for _, i := range order {
			v := leafText[i%3]
			if i >= 3 && level < depth-1 {
				v = text(level+1, path+fmt.Sprint(i)+"_", order)
			}
			kvs = append(kvs, `"`+key(level, path, i)+`": `+v)
		}
		return "{" + strings.Join(kvs, ", ") + "}"
	}
	return nestedSchema{n: object(0, ""), doc: func(order []int) string { return text(0, "", order) }}
}

// byteVocab is a vocabulary of every single byte but 0xFF, plus an EOS
// token (id 256), so a walk visits exactly the states of the text it reads.
func byteVocab(tb testing.TB) *TokenIndex {
	tb.Helper()
	toks := make([][]byte, 257)
	for b := range 255 {
		toks[b] = []byte{byte(b)}
	}
	toks[256] = []byte{SpecialPrefix, 'E'}
	ti, err := NewTokenIndex(toks, []TokenID{256}, 320)
	if err != nil {
		tb.Fatalf("NewTokenIndex(bytes) = %v", err)
	}
	return ti
}

// walkText reads text byte by byte, filling the mask before each byte and
// checking that the byte is allowed, then checks that EOS is allowed at
// the end. It returns the first failure.
func walkText(m *Matcher, text string) error {
	ti := m.Constraint().TokenIndex()
	w := make([]uint64, ti.MaskWords())
	for i := range len(text) {
		if err := m.FillMask(w); err != nil {
			return fmt.Errorf("FillMask at byte %d of %.40q…: %w", i, text, err)
		}
		b := TokenID(text[i])
		if w[b>>6]&(1<<(b&63)) == 0 {
			return fmt.Errorf("byte %d (%q) of %.40q… not allowed", i, text[i], text)
		}
		if err := m.Accept(b); err != nil {
			return fmt.Errorf("Accept at byte %d of %.40q…: %w", i, text, err)
		}
	}
	if err := m.FillMask(w); err != nil {
		return fmt.Errorf("FillMask at the end: %w", err)
	}
	if w[256>>6]&(1<<(256&63)) == 0 || !m.IsAccepting() {
		return fmt.Errorf("EOS not allowed after the whole text %.40q…", text)
	}
	return nil
}

// TestConstraintOutlivesCompile compiles the nested schema under a context
// that is cancelled right after, and under a compile timeout that has
// passed, then walks matchers (several at once) through every deferred
// operand, with and without the prebuild: every expansion must succeed, for
// the first matcher and every later one. The compile's Stats describe the
// compile and are not written by the expansions after it.
func TestConstraintOutlivesCompile(t *testing.T) {
	s := newNestedSchema(t)
	ti := byteVocab(t)
	orders := [][]int{{5, 3, 0, 2, 4, 1}, {0, 1, 2, 3, 4, 5}, {4, 2, 0}}
	for _, np := range []bool{false, true} {
		t.Run(fmt.Sprintf("cancelled/NoPrebuild=%v", np), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			var st Stats
			c, err := CompileConstraint(ctx, s.n, ti, Options{NoPrebuild: np, Stats: &st}, ConstraintOptions{})
			cancel()
			if err != nil {
				t.Fatalf("CompileConstraint = %v", err)
			}
			after := st
			walkAll(t, c, s, orders)
			if st != after {
				t.Errorf("Stats after the walks = %+v, want them as the compile left them, %+v", st, after)
			}
		})
		t.Run(fmt.Sprintf("timeout/NoPrebuild=%v", np), func(t *testing.T) {
			// The shortest timeout the compile fits in on this machine,
			// then wait until it has passed.
			for d := 50 * time.Millisecond; ; d *= 2 {
				c, err := CompileConstraint(context.Background(), s.n, ti, Options{NoPrebuild: np, Timeout: d}, ConstraintOptions{})
				if tokIsCode(err, ErrTimeout) && d < time.Minute {
					continue
				}
				if err != nil {
					t.Fatalf("CompileConstraint(Timeout %v) = %v", d, err)
				}
				time.Sleep(d)
				walkAll(t, c, s, orders)
				return
			}
		})
	}
}

// walkAll walks the documents of orders with four matchers at once, then
// once more with fresh matchers (the states are built by then), and checks
// that the not-enum leaf still refuses "red".
func walkAll(t *testing.T, c *Constraint, s nestedSchema, orders [][]int) {
	t.Helper()
	for round := range 2 {
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for g := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range orders {
					if err := walkText(c.NewMatcher(), s.doc(orders[(k+g)%len(orders)])); err != nil {
						errs[g] = err
						return
					}
				}
			}()
		}
		wg.Wait()
		for g, err := range errs {
			if err != nil {
				t.Errorf("round %d matcher %d: %v", round, g, err)
			}
		}
	}
	bad := strings.Replace(s.doc(orders[0]), `"blue"`, `"red"`, 1)
	if err := walkText(c.NewMatcher(), bad); err == nil || !strings.Contains(err.Error(), "not allowed") {
		t.Errorf("walk of a document with \"red\" for a not-enum = %v, want a byte not allowed", err)
	}
}

// doneAfter is a context whose Err is nil for its first n calls and
// context.Canceled after: a request cancelled in the middle of a compile.
type doneAfter struct {
	context.Context
	mu sync.Mutex
	n  int
}

func (c *doneAfter) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// TestCompileConstraintContext: the context bounds the compile (done
// before it starts, or half way), and a compiled constraint's compiler
// keeps no context, deadline or Stats.
func TestCompileConstraintContext(t *testing.T) {
	s := newNestedSchema(t)
	ti := byteVocab(t)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	blowup := mustParse(t, `[ab]*a[ab]{16}`)
	for _, tt := range []struct {
		name string
		ctx  context.Context
		n    *Node
	}{
		{"done-before", cancelled, s.n},
		{"done-before-eager", cancelled, And(blowup, mustParse(t, `[ab]*`))},
		// The prebuild polls the context while it builds the operands'
		// products; the eager compile while it determinizes.
		{"done-half-way", &doneAfter{Context: context.Background(), n: 1}, s.n},
		{"done-half-way-eager", &doneAfter{Context: context.Background(), n: 1}, And(blowup, mustParse(t, `[ab]*`))},
	} {
		c, err := CompileConstraint(tt.ctx, tt.n, ti, Options{}, ConstraintOptions{})
		if c != nil || !tokIsCode(err, ErrTimeout) || !strings.Contains(err.Error(), "context canceled") {
			t.Errorf("%s: CompileConstraint = %v, %v; want nil, ErrTimeout (context canceled)", tt.name, c, err)
		}
	}

	var st Stats
	c, err := CompileConstraint(context.Background(), s.n, ti, Options{NoPrebuild: true, Stats: &st}, ConstraintOptions{})
	if err != nil {
		t.Fatal(err)
	}
	comp := c.lazy.comp
	if comp == nil {
		t.Fatal("the nested schema's constraint has no fragment compiler")
	}
	if comp.ctx != nil || !comp.deadline.IsZero() || comp.opts.Stats != nil {
		t.Errorf("compiler after CompileConstraint: ctx %v, deadline %v, Stats %p; want none", comp.ctx, comp.deadline, comp.opts.Stats)
	}
	if st.NFAStates == 0 {
		t.Errorf("Stats of the compile = %+v, want the NFA states counted", st)
	}
}

// TestExpansionWorkBudget: an expansion that builds more than
// MaxExpansionWork fails with ErrTooMuchWork, stickily on the constraint
// (the same error for every matcher that reaches the state, none for one
// that does not), while the same operand prebuilt in the compile, or
// compiled under the default budget, works.
func TestExpansionWorkBudget(t *testing.T) {
	ti := byteVocab(t)
	// The deferred operand needs a product of a few hundred states, behind
	// an alternative that is not empty (so the compile, which decides
	// whether the operand is empty, does not build the product).
	heavy := And(mustParse(t, `[a-z]{0,300}`), mustParse(t, `(?:[a-m][n-z]|[n-z][a-m]|[0-9])*`))
	n := Alt(Lit("ok"), Cat(Lit("x="), Defer(Cat(Alt(Lit("-"), heavy), Lit(";")))))
	const limit = 2000
	c, err := CompileConstraint(context.Background(), n, ti, Options{NoPrebuild: true, MaxExpansionWork: limit}, ConstraintOptions{})
	if err != nil {
		t.Fatalf("CompileConstraint = %v", err)
	}
	if err := walkText(c.NewMatcher(), "ok"); err != nil {
		t.Errorf("walk of the branch without the operand: %v", err)
	}
	var first error
	for i := range 3 {
		err := walkText(c.NewMatcher(), "x=an;")
		var e *Error
		if !errors.As(err, &e) || e.Code != ErrTooMuchWork || e.Limit != limit || e.Size <= limit {
			t.Fatalf("walk %d into the operand = %v, want ErrTooMuchWork with Limit %d and Size > Limit", i, err, limit)
		}
		if first == nil {
			first = e
		} else if e != first {
			t.Errorf("walk %d: error %p (%v), want the sticky %p", i, e, e, first)
		}
	}
	for _, opts := range []Options{{MaxExpansionWork: limit}, {NoPrebuild: true}} {
		c, err := CompileConstraint(context.Background(), n, ti, opts, ConstraintOptions{})
		if err != nil {
			t.Fatalf("CompileConstraint(%+v) = %v", opts, err)
		}
		if err := walkText(c.NewMatcher(), "x=an;"); err != nil {
			t.Errorf("Options %+v: walk into the operand = %v, want success", opts, err)
		}
	}
}

// TestExpansionPanic: a panic inside an expansion (a bug, forced here by
// breaking the placeholders' items) unwinds to the caller, releases the
// constraint's lock and fails the constraint for every later matcher with
// ErrInternal, rather than letting them build on a half-built NFA.
func TestExpansionPanic(t *testing.T) {
	s := newNestedSchema(t)
	ti := byteVocab(t)
	c, err := CompileConstraint(context.Background(), s.n, ti, Options{NoPrebuild: true}, ConstraintOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := c.lazy.s.m
	broken := &Node{Op: OpDefer} // no operand: expand indexes past Subs
	for i := range m.states {
		if st := &m.states[i]; st.kind == nfaLazy {
			m.b.lazy[st.next].n = broken
		}
	}
	doc := s.doc([]int{0, 1, 2, 3, 4, 5})
	var walkErr error
	panicked := func() (p any) {
		defer func() { p = recover() }()
		walkErr = walkText(c.NewMatcher(), doc)
		return nil
	}()
	if panicked == nil {
		t.Fatalf("walk over broken placeholders did not panic (err %v)", walkErr)
	}
	done := make(chan error, 1)
	go func() { done <- walkText(c.NewMatcher(), doc) }()
	select {
	case err := <-done:
		if !tokIsCode(err, ErrInternal) {
			t.Errorf("walk after the panic = %v, want ErrInternal", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("walk after the panic blocked: the constraint's lock was not released")
	}
}
