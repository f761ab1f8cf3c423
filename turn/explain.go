package turn

// Explain: what a spec's constraint is, without generating. For each
// schema, every keyword with how it is enforced; for the whole turn, the
// sizes of its automata, whether the cache held it, the tokens allowed at
// the start, the shortest output and a few random ones. cmd/serve's
// /v1/conform/explain endpoint shows it.

import (
	"context"
	"encoding/json"
	"errors"
	"math/bits"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"time"

	"conform/fsm"
	"conform/grammar"
)

// KeywordStatus says how a compile enforces one schema keyword.
type KeywordStatus string

// The keyword statuses.
const (
	// KeywordExact: the output satisfies the keyword, always.
	KeywordExact KeywordStatus = "exact"
	// KeywordApproximated: a lenient compile does not enforce the keyword
	// or loosens it (the message says how); a strict one would refuse it.
	KeywordApproximated KeywordStatus = "approximated"
	// KeywordRefused: the compile refuses the keyword (a strict schema's
	// keyword that cannot be enforced exactly, or a keyword no mode
	// takes); the message is the error.
	KeywordRefused KeywordStatus = "refused"
	// KeywordAnnotation: the keyword never constrains a value (title,
	// description, default, an unknown keyword, …).
	KeywordAnnotation KeywordStatus = "annotation"
)

// KeywordReport is one keyword of a schema and its status.
type KeywordReport struct {
	Pointer string // the JSON Pointer of the schema object holding it
	Keyword string
	Status  KeywordStatus
	Message string // approximated: what is not enforced; refused: the error
}

// SchemaReport is the explanation of one schema of a spec (a tool's
// parameters, the output's schema).
type SchemaReport struct {
	Param    string // the request parameter holding the schema
	Strict   bool   // the request asked for a strict compile
	Keywords []KeywordReport
	// StrictErr is the error a strict compile of the schema raises, nil
	// when every keyword is enforced exactly: what strict mode would
	// refuse, asked for or not.
	StrictErr *Error
}

// DefaultSampleSlack is how many tokens past the shortest output a random
// sample may take before it is closed: enough for samples that show the
// optional parts of a schema, few enough that a sample stays readable and
// cheap (each token is one mask).
const DefaultSampleSlack = 64

// ExplainOptions configures Compiler.Explain.
type ExplainOptions struct {
	// Samples is the number of random outputs to draw (0: none).
	Samples int
	// Seed seeds the random walks: the same seed draws the same samples.
	Seed uint64
	// Slack bounds each sample to the shortest output's length plus Slack
	// tokens (0: DefaultSampleSlack).
	Slack int
	// Detokenize gives each token's output bytes, as the runner has them
	// (nil: Vocab.Detokenizer of the compiler's format); the samples'
	// content and calls are parsed from them.
	Detokenize func(TokenID) []byte
}

// Sample is one output the constraint accepts.
type Sample struct {
	// Text is the output, special tokens written by name (EOS left out).
	Text    string
	Tokens  int // EOS not counted
	Content string
	Calls   []Call
}

// Explanation is what Compiler.Explain finds out about a spec.
type Explanation struct {
	Schemas []SchemaReport
	// Err is the schema error the spec's compile raises (a *Error with
	// CodeSchema or CodeTooLarge, as Compile returns it); the fields below
	// are then zero.
	Err error
	// Constrained is false for a free-text turn (nothing below is set).
	Constrained bool
	// Calls reports that the turn may hold tool calls.
	Calls bool
	// ASTNodes, NFAStates and DFAStates are the sizes of a fresh compile:
	// the regex AST (distinct nodes), the Thompson NFA states the compile
	// built (fsm.Stats: the pinned languages that every process builds
	// once, such as JSON strings, count only in the first compile that
	// needs them), and the DFA states built to reach the start state's
	// mask.
	ASTNodes, NFAStates, DFAStates int
	// CompileTime is the fresh compile's time (the start mask not
	// included).
	CompileTime time.Duration
	// CacheHit reports that the constraint cache already held the turn's
	// constraint (the explanation's own compile was not needed to serve
	// it); on a miss the fresh compile is stored there.
	CacheHit bool
	// StartAllowed is the number of tokens allowed at the start (EOS
	// included).
	StartAllowed int
	// MinTokens is the fewest tokens of an output (the smallest max_tokens
	// that lets one complete); MinErr, when not nil, says why it is not
	// known (an *fsm.Error: ErrCloseBudget or ErrUnclosable), and
	// Shortest and Samples are then empty.
	MinTokens int
	MinErr    error
	// Shortest is an output of MinTokens tokens.
	Shortest *Sample
	// Samples are random outputs, each complete within MinTokens+Slack.
	Samples []Sample
	// WalkErr, when not nil, is why a walk stopped (the closing search ran
	// out of its budget, an *fsm.Error with ErrCloseBudget): the outputs
	// drawn before it are kept.
	WalkErr error
}

// Explain explains the constraint of spec. Errors are Compile's, except a
// schema the compile refuses, which is the explanation's Err: the point of
// an explanation is to say why. A constraint that compiles is compiled
// through the cache, within ctx, as Compile does, under the same budgets;
// the walks for the shortest output and the samples run on the fresh
// compile, within the closing search's budgets.
func (c *Compiler) Explain(ctx context.Context, spec Spec, opts ExplainOptions) (*Explanation, error) {
	ex := &Explanation{}
	if err := c.explainSchemas(spec, ex); err != nil {
		return nil, err
	}
	res, err := Build(spec, c.opts)
	if err != nil {
		var te *Error
		if errors.As(err, &te) && (te.Code == CodeSchema || te.Code == CodeTooLarge) {
			ex.Err = err
			return ex, nil
		}
		return nil, err
	}
	if res.Node == nil {
		return ex, nil
	}
	ex.Constrained, ex.Calls = true, res.Calls
	ex.ASTNodes = res.Node.Size()
	var st fsm.Stats
	var fresh *fsm.Constraint
	compile := func() (*fsm.Constraint, error) {
		t0 := time.Now()
		cons, err := fsm.CompileConstraint(ctx, res.Node, c.vocab.Index(), fsm.Options{Stats: &st}, fsm.ConstraintOptions{})
		ex.CompileTime = time.Since(t0)
		if c.obs != nil {
			c.obs.Compiled(ex.CompileTime)
		}
		fresh = cons
		return cons, err
	}
	key := fsm.CacheKey{Constraint: res.Key, Options: res.Options, Vocab: c.vocab.Fingerprint()}
	if _, err := c.cache.Get(ctx, key, compile); err != nil {
		return nil, err
	}
	ex.CacheHit = fresh == nil
	if fresh == nil {
		// The sizes are those of a fresh compile: the cached constraint
		// has grown with the requests it served.
		t0 := time.Now()
		if fresh, err = fsm.CompileConstraint(ctx, res.Node, c.vocab.Index(), fsm.Options{Stats: &st}, fsm.ConstraintOptions{}); err != nil {
			return nil, err
		}
		ex.CompileTime = time.Since(t0)
	}
	ex.NFAStates = st.NFAStates
	m := fresh.NewMatcher()
	if ex.StartAllowed, err = m.AllowedCount(); err != nil {
		return nil, err
	}
	ex.DFAStates = fresh.Stats().States
	if ex.MinTokens, err = m.MinTokens(); err != nil {
		var fe *fsm.Error
		if errors.As(err, &fe) && (fe.Code == fsm.ErrCloseBudget || fe.Code == fsm.ErrUnclosable) {
			ex.MinErr = err
			return ex, nil
		}
		return nil, err
	}
	w := &walker{t: &Turn{c: c, res: res, cons: fresh}, detok: opts.Detokenize}
	if w.detok == nil {
		w.detok = c.vocab.Detokenizer(c.opts.Format)
	}
	if ex.Shortest, err = w.walk(ex.MinTokens, nil); err != nil {
		return walkFailed(ex, err)
	}
	slack := opts.Slack
	if slack <= 0 {
		slack = DefaultSampleSlack
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x6578706c61696e)) // "explain"
	for range opts.Samples {
		s, err := w.walk(ex.MinTokens+slack, rng)
		if err != nil {
			return walkFailed(ex, err)
		}
		ex.Samples = append(ex.Samples, *s)
	}
	return ex, nil
}

// walkFailed ends ex with a walk's error: a closing search out of its
// budget is the explanation's WalkErr, anything else Explain's error.
func walkFailed(ex *Explanation, err error) (*Explanation, error) {
	var fe *fsm.Error
	if errors.As(err, &fe) && fe.Code == fsm.ErrCloseBudget {
		ex.WalkErr = err
		return ex, nil
	}
	return nil, err
}

// walker draws outputs of a turn's constraint token by token.
type walker struct {
	t     *Turn
	detok func(TokenID) []byte
	mask  []uint64
}

// walk draws one output of at most budget tokens: with rng nil, the first
// token (lowest id) of every step's mask, which with budget the shortest
// length is a shortest output (every token FillMaskWithin allows then
// leaves an accepting state exactly one token nearer); with rng, a token
// drawn uniformly from every step's mask, EOS included where the output
// may end. FillMaskWithin keeps every step completable within what is
// left of the budget, so the walk always ends with a complete output.
func (w *walker) walk(budget int, rng *rand.Rand) (*Sample, error) {
	cons := w.t.cons
	ti := cons.TokenIndex()
	if w.mask == nil {
		w.mask = make([]uint64, ti.MaskWords())
	}
	m := cons.NewMatcher()
	var toks []TokenID
	for left := budget; ; left-- {
		if m.IsAccepting() && (left == 0 || rng == nil) {
			break
		}
		if _, err := m.FillMaskWithin(w.mask, left); err != nil {
			return nil, err
		}
		n := 0
		for _, x := range w.mask {
			n += bits.OnesCount64(x)
		}
		if n == 0 {
			return nil, &Error{Code: CodeInternal, Msg: "explain: a walk reached a state with no allowed token"}
		}
		var tok TokenID
		if rng != nil {
			tok = nthBit(w.mask, rng.IntN(n))
		} else {
			// The first token that is not EOS (the state is not
			// accepting, so EOS is not allowed anyway).
			tok = nthBit(w.mask, 0)
		}
		if ti.IsEOS(tok) {
			break
		}
		if err := m.Accept(tok); err != nil {
			return nil, err
		}
		toks = append(toks, tok)
	}
	return w.sample(toks), nil
}

// nthBit returns the index of the n-th set bit (from 0) of mask, which
// has more than n.
func nthBit(mask []uint64, n int) TokenID {
	for i, x := range mask {
		c := bits.OnesCount64(x)
		if n >= c {
			n -= c
			continue
		}
		for ; n > 0; n-- {
			x &= x - 1
		}
		return TokenID(i*64 + bits.TrailingZeros64(x))
	}
	return -1
}

// sample is the output of toks, read back as the turn's parser reads a
// generation.
func (w *walker) sample(toks []TokenID) *Sample {
	s := &Sample{Tokens: len(toks)}
	p := w.t.NewParser()
	var evs []Event
	var text []byte
	for _, tok := range toks {
		text = append(text, w.t.c.vocab.Text(tok)...)
		evs = append(evs, p.Feed(string(w.detok(tok)))...)
	}
	evs = append(evs, p.Close()...)
	s.Text = string(text)
	s.Content, s.Calls = Merge(evs)
	return s
}

// explainSchemas adds the report of each schema of spec to ex: the
// parameters of the tools that can be called, then the output's schema. A schema that is not JSON
// or is over the size limits fails as Build would.
func (c *Compiler) explainSchemas(spec Spec, ex *Explanation) error {
	for i, t := range spec.Tools {
		// Only the tools that can be called are compiled (Build).
		if spec.ToolMode == ToolNone || spec.ToolMode == ToolNamed && t.Name != spec.ToolName {
			continue
		}
		param := t.Param
		if param == "" {
			param = "tools[" + strconv.Itoa(i) + "].function.parameters"
		}
		raw := []byte(t.Parameters)
		if isBlankJSON(raw) {
			raw = []byte(`{"type":"object"}`)
		}
		r, err := c.schemaReport(raw, t.Strict, param)
		if err != nil {
			return err
		}
		ex.Schemas = append(ex.Schemas, *r)
	}
	o := spec.Output
	switch o.Kind {
	case OutputJSONObject, OutputJSONSchema:
		raw, param := []byte(o.Schema), o.Param
		if o.Kind == OutputJSONObject {
			raw = []byte(`{"type":"object"}`)
			if param == "" {
				param = "response_format"
			}
		} else if param == "" {
			param = "response_format.json_schema.schema"
		}
		if isBlankJSON(raw) {
			return nil // Build refuses it
		}
		r, err := c.schemaReport(raw, o.Strict, param)
		if err != nil {
			return err
		}
		ex.Schemas = append(ex.Schemas, *r)
	}
	return nil
}

// schemaReport compiles one schema both ways, leniently and strictly,
// under the compiler's grammar options, and gives each keyword its
// status: refused where the compile the request asked for fails (and,
// for a strict schema, wherever the lenient compile warns: strict mode
// refuses each of those), approximated where the lenient compile warns,
// an annotation where it never constrains, exact otherwise.
func (c *Compiler) schemaReport(raw []byte, strict bool, param string) (*SchemaReport, error) {
	g := c.opts.Grammar
	g.Extras = grammar.ExtrasAllowed
	kws, err := grammar.Keywords(raw, g)
	if err != nil {
		return nil, grammarError(err, param)
	}
	g.Strictness = grammar.Lenient
	lr, lerr := grammar.CompileSchema(raw, g)
	g.Strictness = grammar.Strict
	_, serr := grammar.CompileSchema(raw, g)
	r := &SchemaReport{Param: param, Strict: strict}
	var sge *grammar.Error
	if errors.As(serr, &sge) {
		r.StrictErr = grammarError(serr, param).(*Error)
	}
	type at struct{ ptr, kw string }
	listed := map[at]bool{}
	for _, k := range kws {
		listed[at{k.Pointer, k.Keyword}] = true
	}
	// place is where a warning or error is listed: grammar points some at
	// the keyword's own value (".../uniqueItems"), the listing at the
	// schema object holding it.
	// A place reached through a $ref is where the keyword is written.
	var doc any
	_ = json.Unmarshal(raw, &doc) // Keywords read it: it is JSON
	place := func(ptr, kw string) at {
		for _, p := range []string{ptr, throughRefs(doc, ptr)} {
			if p, ok := strings.CutSuffix(p, "/"+escapePointer(kw)); ok && listed[at{p, kw}] {
				return at{p, kw}
			}
			if listed[at{p, kw}] {
				return at{p, kw}
			}
		}
		return at{ptr, kw}
	}
	var warnings []grammar.Warning
	if lr != nil {
		warnings = lr.Warnings
	}
	warned := map[at]string{}
	for _, w := range warnings {
		if a := place(w.Pointer, w.Keyword); warned[a] == "" {
			warned[a] = w.Message
		}
	}
	var failed *grammar.Error // the error of the compile asked for
	if strict {
		failed = sge
	} else {
		errors.As(lerr, &failed)
	}
	var failedAt at
	if failed != nil {
		failedAt = place(failed.Pointer, failed.Keyword)
	}
	for _, k := range kws {
		a := at{k.Pointer, k.Keyword}
		kr := KeywordReport{Pointer: k.Pointer, Keyword: k.Keyword, Status: KeywordExact}
		msg, isWarned := warned[a]
		switch {
		case failed != nil && failedAt == a:
			kr.Status, kr.Message = KeywordRefused, failed.Message
		case isWarned && strict:
			kr.Status, kr.Message = KeywordRefused, msg
		case isWarned:
			kr.Status, kr.Message = KeywordApproximated, msg
		case k.Annotation:
			kr.Status = KeywordAnnotation
		}
		r.Keywords = append(r.Keywords, kr)
	}
	// then and else are reported at their if (which asserts nothing
	// alone, nor do they without it).
	status := map[at]KeywordReport{}
	for _, k := range r.Keywords {
		status[at{k.Pointer, k.Keyword}] = k
	}
	for i, k := range r.Keywords {
		switch k.Keyword {
		case "if", "then", "else":
			cond := status[at{k.Pointer, "if"}]
			_, hasThen := status[at{k.Pointer, "then"}]
			_, hasElse := status[at{k.Pointer, "else"}]
			if cond.Keyword == "" || !hasThen && !hasElse {
				r.Keywords[i].Status, r.Keywords[i].Message = KeywordAnnotation, ""
			} else if k.Keyword != "if" {
				r.Keywords[i].Status, r.Keywords[i].Message = cond.Status, cond.Message
			}
		}
	}
	// A warning or error at a keyword the listing does not hold is added.
	for _, w := range warnings {
		if a := place(w.Pointer, w.Keyword); !listed[a] {
			listed[a] = true
			st := KeywordApproximated
			if strict {
				st = KeywordRefused
			}
			r.Keywords = append(r.Keywords, KeywordReport{Pointer: w.Pointer, Keyword: w.Keyword, Status: st, Message: w.Message})
		}
	}
	if failed != nil && failed.Keyword != "" && !listed[failedAt] {
		r.Keywords = append(r.Keywords, KeywordReport{Pointer: failedAt.ptr, Keyword: failed.Keyword, Status: KeywordRefused, Message: failed.Message})
	}
	return r, nil
}

// isBlankJSON reports an absent schema: empty or null.
func isBlankJSON(raw []byte) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}

// maxRefHops bounds the $refs throughRefs follows: a cycle of references
// ends there (grammar refuses such schemas, or cuts them at its depth).
const maxRefHops = 64

// throughRefs returns the pointer at which the schema node at ptr of doc
// (a decoded JSON document) is written: where a token of ptr is not in the
// object at hand, the path goes on at the target of that object's local
// $ref ("#/…"), as the compile follows it. A path that cannot be followed
// is returned as it is.
func throughRefs(doc any, ptr string) string {
	if ptr == "" {
		return ""
	}
	toks := strings.Split(ptr[1:], "/")
	cur, at := doc, ""
	hops := 0
	for i := 0; i < len(toks); i++ {
		tok := strings.ReplaceAll(strings.ReplaceAll(toks[i], "~1", "/"), "~0", "~")
		switch v := cur.(type) {
		case map[string]any:
			if x, ok := v[tok]; ok {
				cur, at = x, at+"/"+toks[i]
				continue
			}
			ref, _ := v["$ref"].(string)
			target, ok := strings.CutPrefix(ref, "#")
			if u, err := url.PathUnescape(target); ok && err == nil && hops < maxRefHops {
				if node, ok := lookupJSON(doc, u); ok {
					hops++
					cur, at = node, u
					i-- // the same token, in the target
					continue
				}
			}
		case []any:
			if n, err := strconv.Atoi(tok); err == nil && n >= 0 && n < len(v) {
				cur, at = v[n], at+"/"+toks[i]
				continue
			}
		}
		return ptr
	}
	return at
}

// lookupJSON returns the node of doc at the JSON Pointer ptr.
func lookupJSON(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	if ptr[0] != '/' {
		return nil, false
	}
	cur := doc
	for _, t := range strings.Split(ptr[1:], "/") {
		t = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
		switch v := cur.(type) {
		case map[string]any:
			x, ok := v[t]
			if !ok {
				return nil, false
			}
			cur = x
		case []any:
			n, err := strconv.Atoi(t)
			if err != nil || n < 0 || n >= len(v) {
				return nil, false
			}
			cur = v[n]
		default:
			return nil, false
		}
	}
	return cur, true
}
