package fsm

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"sync"
	"testing"
	"unsafe"
)

// lazyCases are constraints in the shapes grammar/ emits, plus nodes that
// exercise trimming (dead branches) and spliced intersections/complements.
func lazyCases(tb testing.TB) []struct {
	name string
	n    *Node
} {
	return []struct {
		name string
		n    *Node
	}{
		{"string", mustParse(tb, jsonString)},
		{"bounded-string", mustParse(tb, `"(?:[^"\\\x{0}-\x{1F}]|\\["\\/bfnrt]){0,40}"`)},
		{"number", mustParse(tb, jsonNumber)},
		{"datetime", Cat(Lit(`"`), mustParse(tb, dateTimeRe), Lit(`"`))},
		{"enum", enumNode(tb, 30)},
		{"object6", objectNode(tb, 6)},
		{"object15", objectNode(tb, 15)},
		{"dead-branch", Alt(Cat(Lit(`"a`), Alt()), Lit(`"b"`), Cat(Lit("x"), Repeat(Lit("y"), 0, -1), Alt()))},
		{"spliced-and", Cat(Lit("["), And(mustParse(tb, `"[a-z0-9_]*"`), mustParse(tb, `"[^"]{3,12}"`)), Lit("]"))},
		{"spliced-not", Cat(Lit("<"), Not(mustParse(tb, `[a-c]*`)), Lit(">"))},
		{"top-and", And(mustParse(tb, `"[a-z0-9_]*"`), mustParse(tb, `"[^"]{3,12}"`))},
		{"email-ish", Cat(Lit(`"`), mustParse(tb, emailLikeRe), Lit(`"`))},
		// Safe-universal states (safe.go): a loop of any character, an
		// extra key with the declared keys excluded, in an any-order object.
		{"pattern-body", mustParse(tb, `"[^"\\\x{0}-\x{1F}]*abc[^"\\\x{0}-\x{1F}]*"`)},
		{"perm-extras", mustParse(tb, `\{(?perm(,)("(?:[^"\\\x{0}-\x{1F}]*&~(?:a|b))":0)("a":"[^"\\\x{0}-\x{1F}]*")!("b":[0-9]))\}`)},
	}
}

// TestLazyMatchesEager walks both constraints of each case with the same
// random tokens and checks that every mask, accepting flag, terminated flag
// and forced continuation agree: the lazy DFA decodes the same language.
func TestLazyMatchesEager(t *testing.T) {
	ti := tokCl100kIndex(t)
	for _, tc := range lazyCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			eager, lazy := eagerAndLazy(t, ti, tc.n)
			if tc.n.Op != OpAnd && lazy.DFA() != nil {
				t.Errorf("CompileConstraint(%s) built an eager DFA", tc.name)
			}
			rng := rand.New(rand.NewPCG(1, uint64(len(tc.name))))
			for walk := range 12 {
				compareWalk(t, ti, eager.NewMatcher(), lazy.NewMatcher(), rng, fmt.Sprintf("walk %d", walk))
			}
			unbuilt, err := CompileConstraint(context.Background(), tc.n, ti, Options{NoPrebuild: true}, ConstraintOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for walk := range 6 {
				compareWalk(t, ti, eager.NewMatcher(), unbuilt.NewMatcher(), rng, fmt.Sprintf("no-prebuild walk %d", walk))
			}
			if st := lazy.Stats(); st.States < 2 || st.MasksComputed < 1 || lazy.MemoryBytes() <= 0 {
				t.Errorf("lazy stats = %+v, memory %d", st, lazy.MemoryBytes())
			}
		})
	}
}

// eagerAndLazy compiles n both ways: the minimized DFA's constraint and
// the lazy one.
func eagerAndLazy(t *testing.T, ti *TokenIndex, n *Node) (eager, lazy *Constraint) {
	t.Helper()
	eager, err := NewConstraint(mustCompile(t, n), ti, ConstraintOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lazy, err = CompileConstraint(context.Background(), n, ti, Options{}, ConstraintOptions{}); err != nil {
		t.Fatal(err)
	}
	return eager, lazy
}

// compareWalk advances a and b with the same random allowed tokens (EOS when
// it is the only choice or by chance), checking that they agree each step.
func compareWalk(t *testing.T, ti *TokenIndex, a, b *Matcher, rng *rand.Rand, name string) {
	t.Helper()
	wa, wb := make([]uint64, ti.MaskWords()), make([]uint64, ti.MaskWords())
	for step := range 60 {
		if err := a.FillMask(wa); err != nil {
			t.Fatalf("%s step %d: eager FillMask = %v", name, step, err)
		}
		if err := b.FillMask(wb); err != nil {
			t.Fatalf("%s step %d: lazy FillMask = %v", name, step, err)
		}
		if !slices.Equal(wa, wb) {
			t.Fatalf("%s step %d: masks differ: %s", name, step, tokDiffMasks(ti, wb, wa))
		}
		if a.IsAccepting() != b.IsAccepting() || a.IsTerminated() != b.IsTerminated() {
			t.Fatalf("%s step %d: accepting %v/%v terminated %v/%v", name, step,
				a.IsAccepting(), b.IsAccepting(), a.IsTerminated(), b.IsTerminated())
		}
		if fa, fb := a.ForcedBytes(), b.ForcedBytes(); !slices.Equal(fa, fb) {
			t.Fatalf("%s step %d: forced bytes %q vs %q", name, step, fa, fb)
		}
		if fa, fb := a.Forced(4), b.Forced(4); !slices.Equal(fa, fb) {
			t.Fatalf("%s step %d: forced tokens %v vs %v", name, step, fa, fb)
		}
		ids := tokAllowedIDs(wa)
		if len(ids) == 0 || a.IsTerminated() {
			return
		}
		// Prefer short tokens now and then so walks get deep into
		// bounded repeats.
		tok := ids[rng.IntN(len(ids))]
		for range 3 {
			if len(ti.tokens[tok]) <= 2 {
				break
			}
			tok = ids[rng.IntN(len(ids))]
		}
		if ti.isEOS[tok] && rng.IntN(4) != 0 && len(ids) > 1 {
			continue
		}
		if err := a.Accept(tok); err != nil {
			t.Fatalf("%s step %d: eager Accept(%d) = %v", name, step, tok, err)
		}
		if err := b.Accept(tok); err != nil {
			t.Fatalf("%s step %d: lazy Accept(%d) = %v", name, step, tok, err)
		}
		if a.IsFinished() {
			return
		}
	}
}

// TestLazyConcurrent walks one lazy constraint from many goroutines at once
// (run with -race): expansions and table growth happen while other
// matchers read.
func TestLazyConcurrent(t *testing.T) {
	// An object in fixed order, and arrays of any-order objects with
	// deferred values (lazy NFA fragments built by concurrent readers).
	for _, n := range []*Node{objectNode(t, 12), deferCases(t)[8]} {
		lazyConcurrent(t, n)
	}
}

func lazyConcurrent(t *testing.T, n *Node) {
	ti := tokCl100kIndex(t)
	eager, err := NewConstraint(mustCompile(t, stripDefer(n, map[*Node]*Node{})), ti, ConstraintOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lazy, err := CompileConstraint(context.Background(), n, ti, Options{}, ConstraintOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			a, b := eager.NewMatcher(), lazy.NewMatcher()
			wa, wb := make([]uint64, ti.MaskWords()), make([]uint64, ti.MaskWords())
			for step := range 80 {
				if a.FillMask(wa) != nil || b.FillMask(wb) != nil {
					errs <- fmt.Sprintf("goroutine %d step %d: FillMask failed", g, step)
					return
				}
				if !slices.Equal(wa, wb) {
					errs <- fmt.Sprintf("goroutine %d step %d: masks differ", g, step)
					return
				}
				ids := tokAllowedIDs(wa)
				tok := ids[rng.IntN(len(ids))]
				if ti.isEOS[tok] {
					a.Reset()
					b.Reset()
					continue
				}
				if a.Accept(tok) != nil || b.Accept(tok) != nil {
					errs <- fmt.Sprintf("goroutine %d step %d: Accept(%d) failed", g, step, tok)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestLazyBudget: a lazy constraint that outgrows MaxDFAStates fails the
// call that needed the state with the limit error, stickily; the start mask
// is computed at compile time, so a too-small budget can also fail there.
func TestLazyBudget(t *testing.T) {
	ti := tokCl100kIndex(t)
	n := mustParse(t, `"[a-z]{0,400}"`)
	c, err := CompileConstraint(context.Background(), n, ti, Options{MaxDFAStates: 60}, ConstraintOptions{})
	if err != nil {
		t.Fatalf("CompileConstraint = %v", err)
	}
	m := c.NewMatcher()
	w := make([]uint64, ti.MaskWords())
	a := TokenID(-1)
	for id := range ti.numTokens {
		if string(ti.tokens[id]) == "a" {
			a = TokenID(id)
		}
	}
	if a < 0 {
		t.Fatal(`no token "a" in cl100k`)
	}
	quote := TokenID(-1)
	for id := range ti.numTokens {
		if string(ti.tokens[id]) == `"` {
			quote = TokenID(id)
		}
	}
	var got error
	for step := 0; step < 400 && got == nil; step++ {
		if got = m.FillMask(w); got != nil {
			break
		}
		tok := a
		if step == 0 {
			tok = quote
		}
		got = m.Accept(tok)
	}
	var fe *Error
	if !errors.As(got, &fe) || fe.Code != ErrTooManyDFAStates || fe.Limit != 60 {
		t.Fatalf("error = %v, want ErrTooManyDFAStates with limit 60", got)
	}
	if m.Err() == nil {
		t.Error("matcher error not sticky")
	}
	// Another matcher of the same constraint meets the same error when it
	// needs a state beyond the budget.
	m2 := c.NewMatcher()
	var err2 error
	for step := 0; step < 400 && err2 == nil; step++ {
		tok := a
		if step == 0 {
			tok = quote
		}
		err2 = m2.Accept(tok)
		if err2 == nil {
			err2 = m2.FillMask(w)
		}
	}
	if !errors.As(err2, &fe) || fe.Code != ErrTooManyDFAStates {
		t.Errorf("second matcher error = %v, want ErrTooManyDFAStates", err2)
	}
}

func TestLazyEmptyLanguage(t *testing.T) {
	ti := tokCl100kIndex(t)
	for _, n := range []*Node{Alt(), Cat(Lit("a"), Alt()), And(Lit("a"), Lit("b"))} {
		_, err := CompileConstraint(context.Background(), n, ti, Options{}, ConstraintOptions{})
		var te *Error
		if !errors.As(err, &te) || te.Code != ErrEmptyLanguage {
			t.Errorf("CompileConstraint(%s) = %v, want ErrEmptyLanguage", n, err)
		}
	}
}

// TestNFALiveByConstruction checks the builder's promise that lets the
// subset construction skip trimming: every NFA state reachable from the
// start can reach the match state.
func TestNFALiveByConstruction(t *testing.T) {
	nodes := []*Node{}
	for _, tc := range lazyCases(t) {
		nodes = append(nodes, tc.n)
	}
	for _, re := range []string{
		`(?:)`, `[^\x{0}-\x{10FFFF}]`, `a[^\x{0}-\x{10FFFF}]|b`, `(?:a[^\x{0}-\x{10FFFF}])*c`,
		`x{0,20}y`, `(?:ab|cd[^\x{0}-\x{10FFFF}]){3,12}`, `(?:[a-z]&[^\x{0}-\x{10FFFF}])|q`,
		`~(.*)z|w`, `(?:a|(?:b&c))+`, `[^"\\]{0,30}`, jsonString, jsonNumber, dateTimeRe, blowupRe,
	} {
		nodes = append(nodes, mustParse(t, re))
	}
	nodes = append(nodes, Repeat(Cat(Alt(), Lit("a")), 0, 12), Cat(Repeat(Lit("a"), 9, 9), Alt(Lit("b"), Alt())))
	for _, n := range nodes {
		checkNFALive(t, n, Options{})
	}
}

// checkNFALive fails t when the NFA built for n has a reachable state that
// cannot reach the match state, or a transition to the fail state.
func checkNFALive(t *testing.T, n *Node, opts Options) {
	t.Helper()
	m, err := newCompiler(opts).nfaOf(n)
	if err != nil {
		return // budgets; other tests cover errors
	}
	checkReachableLive(t, n, m)
}

// TestLazyReservedTable runs the lazy-versus-eager walks and the
// concurrent readers with tables, NFAs and determinizer arrays that move
// into reserved address space almost at once (reserve.go), where the
// platform can reserve.
func TestLazyReservedTable(t *testing.T) {
	old, oldElems := reserveAbove, reserveElemsAbove
	reserveAbove, reserveElemsAbove = 1<<10, 1<<8
	defer func() { reserveAbove, reserveElemsAbove = old, oldElems }()
	ti := tokCl100kIndex(t)
	for _, tc := range lazyCases(t)[:8] {
		eager, lazy := eagerAndLazy(t, ti, tc.n)
		rng := rand.New(rand.NewPCG(3, uint64(len(tc.name))))
		for walk := range 6 {
			compareWalk(t, ti, eager.NewMatcher(), lazy.NewMatcher(), rng, fmt.Sprintf("%s walk %d", tc.name, walk))
		}
		if r := reserveBytes(1 << 16); r != nil {
			r.release()
			if !lazy.lazy.reserved.Load() {
				t.Errorf("%s: the table did not move into a reservation", tc.name)
			}
			if m := lazy.lazy.s.m; len(m.states) > reserveElemsAbove && cap(m.states) != DefaultMaxNFAStates {
				t.Errorf("%s: %d NFA states in a capacity of %d, want a reservation of %d", tc.name, len(m.states), cap(m.states), DefaultMaxNFAStates)
			}
		}
		if st := lazy.Stats(); st.TotalBytes <= 0 || st.TotalBytes > 64<<20 {
			t.Errorf("%s: TotalBytes = %d, want the rows in use, not the reservation", tc.name, st.TotalBytes)
		}
	}
	lazyConcurrent(t, objectNode(t, 12))
	lazyConcurrent(t, deferCases(t)[8])
}

// TestLazyPooledGarbage runs the lazy-versus-eager walks with the pool of
// reservations (reserve.go) full of garbage (stamp generations, all-ones
// words): tables, NFAs and determinizer arrays that start in pooled memory
// must initialize what they read. Small budgets keep the reservations
// small enough to poison whole.
func TestLazyPooledGarbage(t *testing.T) {
	if mapBytes(1<<16) == nil {
		t.Skip("no reservations on this platform")
	}
	oldKeep, oldMax, oldElems := poolKeepBytes, poolMaxBytes, poolElemsAbove
	poolKeepBytes, poolMaxBytes, poolElemsAbove = 1<<23, 1<<30, 1<<6
	defer func() {
		poolKeepBytes, poolMaxBytes, poolElemsAbove = oldKeep, oldMax, oldElems
		drainPool()
	}()
	drainPool()
	fill := func() {
		for c := 1 << 19; c <= 1<<23; c <<= 1 {
			for range 6 {
				mem := mapBytes(c)
				words := unsafe.Slice((*uint32)(unsafe.Pointer(&mem[0])), c/4)
				for i := range words {
					words[i] = uint32(1 + i%3)
					if i%7 == 0 {
						words[i] = ^uint32(0)
					}
				}
				(&reservation{mem: mem}).release()
			}
		}
	}
	ti := tokCl100kIndex(t)
	opts := Options{MaxDFAStates: 20_000, MaxNFAStates: 100_000}
	for _, tc := range lazyCases(t)[:8] {
		fill()
		eager, err := NewConstraint(mustCompile(t, tc.n), ti, ConstraintOptions{})
		if err != nil {
			t.Fatal(err)
		}
		lazy, err := CompileConstraint(context.Background(), tc.n, ti, opts, ConstraintOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !lazy.lazy.reserved.Load() {
			t.Errorf("%s: the first table did not come from the pool", tc.name)
		}
		rng := rand.New(rand.NewPCG(5, uint64(len(tc.name))))
		for walk := range 6 {
			compareWalk(t, ti, eager.NewMatcher(), lazy.NewMatcher(), rng, fmt.Sprintf("%s walk %d", tc.name, walk))
		}
	}
}

// drainPool unmaps every pooled reservation.
func drainPool() {
	pool.Lock()
	defer pool.Unlock()
	for c, l := range pool.free {
		for _, r := range l {
			unmapBytes(r.mem)
		}
		delete(pool.free, c)
	}
	pool.kept = 0
}

// TestPoolAccounting checks that a released reservation is pooled with its
// committed bytes counted, its pages past poolKeepBytes dropped, and taken
// again by the next reservation of its size class (512 MB, which no other
// test's constraint reserves, so their releases cannot interfere).
func TestPoolAccounting(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("page residency is counted on linux only")
	}
	const class = 512 << 20
	oldKeep := poolKeepBytes
	poolKeepBytes = 1 << 20
	defer func() { poolKeepBytes = oldKeep }()
	r := reserveBytes(300 << 20)
	if r == nil || len(r.mem) != class {
		t.Fatalf("reserveBytes(300 MB) = %v, want a 512 MB mapping", r)
	}
	defer unmapBytes(r.mem)
	page := os.Getpagesize()
	r.mem[0], r.mem[2*page], r.mem[2<<20] = 1, 2, 3
	r.release()
	pool.Lock()
	pooled := slices.Contains(pool.free[class], r)
	pool.Unlock()
	// Two 4 KB pages were touched, or one 2 MB huge page (adviseHuge) of
	// which the first poolKeepBytes stay.
	if !pooled || r.kept != 2*page && r.kept != poolKeepBytes {
		t.Fatalf("after release: pooled %v with %d bytes kept, want true and %d (4 KB pages) or %d (a huge page)", pooled, r.kept, 2*page, poolKeepBytes)
	}
	if r2 := reserveBytes(class); r2 != r {
		t.Fatal("the pooled reservation was not reused")
	}
	if r.mem[2*page] != 2 || r.mem[2<<20] != 0 {
		t.Errorf("kept page holds %d (want the old 2), dropped page %d (want 0)", r.mem[2*page], r.mem[2<<20])
	}
}

// TestStoreRow: a row is stored whole, premultiplied, at every alignment
// (pairs of entries go out as one word) and every length, and nothing
// beside it is touched.
func TestStoreRow(t *testing.T) {
	buf := make([]uint32, 16)
	for off := range 3 {
		for n := range 6 {
			for i := range buf {
				buf[i] = unknownState
			}
			row := make([]int32, n)
			for i := range row {
				row[i] = int32(i*7 + 1)
			}
			storeRow(buf[off:off+n], row, 5)
			for i, v := range buf {
				want := uint32(unknownState)
				if i >= off && i < off+n {
					want = uint32(row[i-off]) * 5
				}
				if v != want {
					t.Fatalf("offset %d length %d: buf[%d] = %d, want %d", off, n, i, v, want)
				}
			}
		}
	}
}
