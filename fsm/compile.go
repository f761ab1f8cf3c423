package fsm

import (
	"context"
	"sync"
	"time"
)

// Compile builds the trimmed, minimized byte DFA of n under the budgets in
// opts (the zero Options means defaults). Sub-nodes that are intersections
// or complements are compiled to DFAs of their own first and spliced into
// the enclosing NFA. Every failure is an *Error: ErrInvalidNode for a
// malformed AST, or a limit code carrying the limit and the size reached.
//
// Compile takes no context: it serves grammar/ and offline tools, and is
// bounded by opts.Timeout; a server compiles a request's constraint with
// CompileConstraint, which also takes the request's context.
func Compile(n *Node, opts Options) (*DFA, error) {
	c := newCompiler(opts)
	d, err := c.dfaOf(n)
	if err != nil || !d.loose {
		return d, err
	}
	return c.finish(d.raw())
}

// IsEmpty reports whether n matches no string at all. grammar/ uses it to
// prove oneOf branches disjoint: IsEmpty(And(a, b)).
//
// For an intersection it explores the product of the operands only until
// it reaches a tuple of accepting states, so proving overlap is usually
// much cheaper than building the product.
func IsEmpty(n *Node, opts Options) (bool, error) {
	return NewChecker(opts).IsEmpty(n)
}

// Checker answers IsEmpty for many nodes under one set of budgets, keeping
// the DFAs it builds (by node) between calls: a schema's emptiness proofs
// intersect the same few key and pattern languages in many combinations,
// and each DFA is then built once per compile instead of once per proof.
// A Checker is not safe for concurrent use.
type Checker struct{ c *compiler }

// NewChecker returns a Checker with the budgets in opts (each proof's
// searches and each DFA are bounded by them, as in Compile).
func NewChecker(opts Options) *Checker { return &Checker{c: newCompiler(opts)} }

// IsEmpty reports whether n matches no string at all (see IsEmpty).
func (k *Checker) IsEmpty(n *Node) (bool, error) {
	c := k.c
	if n != nil && n.Op == OpAnd && len(n.Subs) >= 2 {
		var ops []*Node
		var flatten func(x *Node)
		flatten = func(x *Node) {
			if x.Op == OpAnd {
				for _, s := range x.Subs {
					flatten(s)
				}
				return
			}
			ops = append(ops, x)
		}
		flatten(n)
		ds := make([]*DFA, len(ops))
		for i, x := range ops {
			d, err := c.dfaOf(x)
			if err != nil {
				return false, err
			}
			if d.Start == DeadState {
				return true, nil
			}
			ds[i] = d
		}
		found, err := c.tupleAccepts(ds)
		if err != nil {
			return false, err
		}
		return !found, nil
	}
	d, err := c.dfaOf(n)
	if err != nil {
		return false, err
	}
	return d.Start == DeadState, nil
}

// DumpNFA returns the dump of the Thompson NFA that Compile builds for n
// (the outer one: intersections and complements appear spliced in as
// DFA-shaped fragments). For tests and cmd/fsmdump.
func DumpNFA(n *Node, opts Options) (string, error) {
	c := newCompiler(opts)
	m, err := c.nfaOf(n)
	if err != nil {
		return "", err
	}
	return m.String(), nil
}

// compiler holds what one Compile call shares across the NFAs and DFAs it
// builds: the budgets, the nesting depth and the DFAs of intersection and
// complement nodes (memoized by node); and, for the call in progress, its
// context, deadline and Stats. A lazy constraint's builder keeps its
// compiler for the fragments it builds later, so CompileConstraint ends the
// call before it returns (endCall): from then on only the deterministic
// budgets apply, and each expansion of the constraint runs under its own
// work budget (beginExpansion).
type compiler struct {
	opts  Options
	depth int
	polls int
	dfas  map[*Node]*DFA

	// The call in progress (none once endCall ran).
	ctx      context.Context
	deadline time.Time

	// The lazy expansion in progress: the work spent so far and its
	// budget; limit 0 outside one (the compile).
	work, workLimit int64
}

// newCompiler starts a compile call bounded by opts.Timeout (the caller
// sets ctx, if it has one).
func newCompiler(opts Options) *compiler {
	c := &compiler{opts: opts.withDefaults(), dfas: make(map[*Node]*DFA)}
	if c.opts.Timeout > 0 {
		c.deadline = time.Now().Add(c.opts.Timeout)
	}
	return c
}

// endCall ends the compile call: the compiler forgets its context, its
// deadline and the caller's Stats (which describe the call, and which the
// caller reads once it has returned), keeping only the deterministic
// budgets for what a lazy constraint builds later.
func (c *compiler) endCall() {
	c.ctx = nil
	c.deadline = time.Time{}
	c.opts.Stats = nil
}

// beginExpansion starts one lazy expansion: a fresh work budget of
// MaxExpansionWork. The caller holds the constraint's lock.
func (c *compiler) beginExpansion() {
	c.work, c.workLimit = 0, c.opts.MaxExpansionWork
}

// endExpansion ends the expansion begun last and returns its work.
func (c *compiler) endExpansion() int64 {
	w := c.work
	c.work, c.workLimit = 0, 0
	return w
}

// expansionWorkErr is the error of an expansion over MaxExpansionWork.
func expansionWorkErr(limit, size int64) *Error {
	return &Error{Code: ErrTooMuchWork, Expr: "one lazy expansion (Options.MaxExpansionWork)", Pos: -1, Limit: limit, Size: size}
}

// enter counts one level of recursion; callers decrement c.depth on return.
func (c *compiler) enter() error {
	c.depth++
	if c.depth > c.opts.MaxDepth {
		return limitErr(ErrTooDeep, int64(c.opts.MaxDepth), int64(c.depth))
	}
	return nil
}

// poll counts work units of the step just done against the budget of the
// lazy expansion in progress (if one is), and checks the deadline and the
// context of the call in progress (if one is); it is cheap enough to call
// in inner loops because it reads the clock only every 256 calls.
func (c *compiler) poll(work int) error {
	if c.workLimit > 0 {
		if c.work += int64(work); c.work > c.workLimit {
			return expansionWorkErr(c.workLimit, c.work)
		}
	}
	c.polls++
	if c.polls&255 != 0 {
		return nil
	}
	if c.ctx != nil && c.ctx.Err() != nil {
		return &Error{Code: ErrTimeout, Expr: c.ctx.Err().Error(), Pos: -1}
	}
	if !c.deadline.IsZero() {
		if now := time.Now(); now.After(c.deadline) {
			t := c.opts.Timeout
			return &Error{Code: ErrTimeout, Pos: -1, Limit: int64(t), Size: int64(t + now.Sub(c.deadline))}
		}
	}
	return nil
}

// lazyNFAOf is nfaOf for a lazy constraint: the deferred operands are
// prebuilt while the NFA is small (builder.prebuild). A prebuild that
// fails (a budget) leaves a half-built builder, so the NFA is built again
// without it: the operand that failed fails again only if a generation
// reaches it. A prebuild stopped by the call's context or deadline fails
// the compile: the call is out of time, whatever is left to build.
func (c *compiler) lazyNFAOf(n *Node) (*nfa, error) {
	m, err := c.nfaOfWith(n, true)
	if err != nil || c.opts.NoPrebuild || m.b == nil || len(m.b.lazy) == 0 {
		return m, err
	}
	limit := min(prebuildFactor*len(m.states)+prebuildExtra, prebuildStates, c.opts.MaxNFAStates/4)
	err = m.b.prebuild(limit)
	if err == nil {
		return m, nil
	}
	if e, ok := err.(*Error); ok && e.Code == ErrTimeout {
		return nil, err
	}
	return c.nfaOfWith(n, true)
}

func (c *compiler) nfaOf(n *Node) (*nfa, error) { return c.nfaOfWith(n, false) }

// nfaOfWith builds n's NFA; with products, large intersections are lazy
// products (lazy_product.go), which only a lazy constraint gains from: a
// DFA built whole reaches every pair anyway and is better off with the
// minimized product spliced.
func (c *compiler) nfaOfWith(n *Node, products bool) (*nfa, error) {
	b := newBuilder(c)
	b.products = products
	start, err := b.build(n, nfaAccept)
	if err != nil {
		return nil, err
	}
	b.m.start = start
	b.m.liveByConstruction = true
	b.collectBounds()
	return b.m, nil
}

// dfaOf compiles n to a DFA, memoized by node.
func (c *compiler) dfaOf(n *Node) (*DFA, error) {
	if n == nil {
		return nil, &Error{Code: ErrInvalidNode, Expr: "nil node", Pos: -1}
	}
	if d, ok := c.dfas[n]; ok {
		return d, nil
	}
	if n.pinned {
		if v, ok := pinnedDFAs.Load(n); ok {
			if d := v.(*DFA); d.NumStates() <= c.opts.MaxDFAStates && int64(len(d.Trans))*4 <= int64(c.opts.MaxDFABytes) {
				c.dfas[n] = d
				return d, nil
			}
		}
	}
	if err := c.enter(); err != nil {
		return nil, err
	}
	d, err := c.dfaOf1(n)
	c.depth--
	if err != nil {
		return nil, err
	}
	c.dfas[n] = d
	if n.pinned {
		pinnedDFAs.Store(n, d)
	}
	return d, nil
}

// pinnedDFAs holds the DFAs of pinned nodes (Pin): *Node → *DFA. A DFA is
// never modified after it is built, so compiles share it.
var pinnedDFAs sync.Map

func (c *compiler) dfaOf1(n *Node) (*DFA, error) {
	switch n.Op {
	case OpAnd:
		if len(n.Subs) == 0 {
			return nil, &Error{Code: ErrInvalidNode, Expr: "and needs operands", Pos: -1}
		}
		d, err := c.dfaOf(n.Subs[0])
		if err != nil {
			return nil, err
		}
		for _, sub := range n.Subs[1:] {
			if d.Start == DeadState {
				break
			}
			if sub.Op == OpNot && len(sub.Subs) == 1 {
				// d ∧ ¬x: one product, no DFA of ¬x; none at all when x
				// is a few strings.
				if strs, ok := finiteStrings(sub.Subs[0]); ok {
					if d, err = c.subtractStrings(d, strs); err != nil {
						return nil, err
					}
					continue
				}
				e, err := c.dfaOf(sub.Subs[0])
				if err != nil {
					return nil, err
				}
				if d, err = c.difference(d, e); err != nil {
					return nil, err
				}
				continue
			}
			e, err := c.dfaOf(sub)
			if err != nil {
				return nil, err
			}
			if d, err = c.intersect(d, e); err != nil {
				return nil, err
			}
		}
		return d, nil
	case OpNot:
		if len(n.Subs) != 1 {
			return nil, &Error{Code: ErrInvalidNode, Expr: "not needs one operand", Pos: -1}
		}
		d, err := c.dfaOf(n.Subs[0])
		if err != nil {
			return nil, err
		}
		return c.complement(d)
	case OpResidue:
		return residueDFA(n.Min, n.Req)
	}
	t0 := time.Now()
	m, err := c.nfaOf(n)
	if err != nil {
		return nil, err
	}
	t1 := time.Now()
	raw, err := c.determinize(m)
	if err != nil {
		return nil, err
	}
	t2 := time.Now()
	d, err := c.finish(raw)
	if st := c.opts.Stats; st != nil {
		st.NFAStates += len(m.states)
		st.RawDFAStates += len(raw.accept)
		st.NFATime += t1.Sub(t0)
		st.DetTime += t2.Sub(t1)
		st.MinTime += time.Since(t2)
	}
	return d, err
}
