package turn

import (
	"context"
	"errors"
	"fmt"
	"time"

	"conform/fsm"
	"conform/runner"
)

// Observer receives the measurements of compiles and generations; cmd/serve
// turns them into metrics. Its methods are called from many goroutines and
// must not block. A nil Observer in a config means none.
type Observer interface {
	// Compiled reports a constraint compiled on a cache miss, and how long
	// it took.
	Compiled(d time.Duration)
	// FirstToken reports a choice's first output token, d after the
	// request's Start.
	FirstToken(d time.Duration)
	// NextToken reports a later output token, d after the one before.
	NextToken(d time.Duration)
	// Finished reports a choice that ended, with its usage.
	Finished(u runner.Usage)
	// Panicked reports a panic recovered in a choice's event handling (the
	// choice fails with runner.CodePanic; the server goes on).
	Panicked()
}

// CompilerConfig configures a Compiler.
type CompilerConfig struct {
	// Vocab is the model's vocabulary (required).
	Vocab *Vocab
	// Format is the model's tool-call format (required).
	Format Format
	// Cache shares compiled constraints across requests; nil means a
	// cache of this Compiler's own (fsm.DefaultCacheBytes).
	Cache *fsm.Cache
	// Grammar and MaxTools are the server's Build options (Format and
	// IsSpecial come from the fields above).
	Options Options
	// Observer, if not nil, is told of every compile.
	Observer Observer
}

// Compiler turns Specs into Turns for one model: it holds what every
// request of the model shares (the vocabulary and its token index, which
// markers are special tokens, the tool-call format, the grammar options)
// and the cache of compiled constraints. It is safe for concurrent use.
type Compiler struct {
	vocab *Vocab
	opts  Options
	sx    syntax // the format resolved against the vocabulary's specials
	cache *fsm.Cache
	obs   Observer
}

// NewCompiler checks cfg and returns its Compiler.
func NewCompiler(cfg CompilerConfig) (*Compiler, error) {
	if cfg.Vocab == nil {
		return nil, &Error{Code: CodeInvalidConfig, Msg: "a Compiler needs a vocabulary"}
	}
	sx, ok := lookupFormat(Options{Format: cfg.Format, Description: cfg.Options.Description})
	if !ok {
		return nil, &Error{Code: CodeUnknownFormat, Param: "tool-call-parser", Msg: fmt.Sprintf("unknown tool-call format %q", cfg.Format)}
	}
	opts := cfg.Options
	opts.Format, opts.IsSpecial = cfg.Format, cfg.Vocab.IsSpecial
	c := &Compiler{vocab: cfg.Vocab, opts: opts, sx: sx.resolved(cfg.Vocab.IsSpecial), cache: cfg.Cache, obs: cfg.Observer}
	if c.cache == nil {
		c.cache = fsm.NewCache(0)
	}
	return c, nil
}

// Vocab returns the model's vocabulary.
func (c *Compiler) Vocab() *Vocab { return c.vocab }

// Format returns the model's tool-call format.
func (c *Compiler) Format() Format { return c.opts.Format }

// Compile builds the constraint of spec and compiles it through the cache
// (a hit costs a map lookup). ctx bounds the compile only: the compiled
// constraint keeps no context, so it serves later requests after this
// one is gone. Errors are *Error (the request's fault, naming its
// parameter) or *fsm.Error (a limit, an empty language, a bad regex).
func (c *Compiler) Compile(ctx context.Context, spec Spec) (*Turn, error) {
	res, err := Build(spec, c.opts)
	if err != nil {
		return nil, err
	}
	t := &Turn{c: c, res: res}
	if res.Node == nil {
		return t, nil
	}
	key := fsm.CacheKey{Constraint: res.Key, Options: res.Options, Vocab: c.vocab.Fingerprint()}
	t.cons, err = c.cache.Get(ctx, key, func() (*fsm.Constraint, error) {
		t0 := time.Now()
		// Lazy determinization: the first mask needs only the states its
		// tokens reach; the rest are built as decoding reaches them.
		cons, err := fsm.CompileConstraint(ctx, res.Node, c.vocab.Index(), fsm.Options{}, fsm.ConstraintOptions{})
		if c.obs != nil {
			c.obs.Compiled(time.Since(t0))
		}
		return cons, err
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Turn is one request's compiled assistant turn: the constraint every
// choice is generated under (shared, never changed), and what reading the
// output back needs. It hands out one Guide and one Parser per choice.
type Turn struct {
	c    *Compiler
	res  *Result
	cons *fsm.Constraint // nil: unconstrained
}

// Constrained reports whether the turn has a constraint (tools or a
// structured output); without one its choices are free text.
func (t *Turn) Constrained() bool { return t.cons != nil }

// Calls reports whether the turn may hold tool calls.
func (t *Turn) Calls() bool { return t.res.Calls }

// Unenforced lists the schema keywords lenient compiles did not enforce.
func (t *Turn) Unenforced() []Unenforced { return t.res.Unenforced }

// NewMatcher returns a fresh walker over the turn's constraint for one
// choice, or nil when the turn is unconstrained.
func (t *Turn) NewMatcher() runner.Guide {
	if t.cons == nil {
		return nil
	}
	return t.guide(t.cons.NewMatcher()) // wrapped when the turn has a reasoning block (reasoning_guide.go)
}

// NewParser returns the parser of one choice's text: the model's tool-call
// format when the turn may hold calls, else content only; either way the
// content is cleaned of special markers and stray bytes, which only
// unconstrained output can hold.
func (t *Turn) NewParser() *Parser {
	p := newParser(t.c.sx, t.res.Calls, true)
	p.kinds = t.res.params // how ArgsParams parameters are written (format_params.go)
	// The reasoning block ahead of the format (reasoning.go).
	return t.withReasoning(p)
}

// MinTokens returns the fewest tokens (EOS not counted) of an output the
// constraint accepts; 0 for an unconstrained turn. An *fsm.Error with
// ErrCloseBudget means the search gave up (the answer is not known).
func (t *Turn) MinTokens() (int, error) {
	if t.cons == nil {
		return 0, nil
	}
	return t.cons.NewMatcher().MinTokens()
}

// Budget is what bounds the outputs of a request, as CheckBudget weighs it.
type Budget struct {
	// MaxTokens is the request's limit on output tokens (0: none, the
	// context bounds the output).
	MaxTokens int
	// Prompt is the length in tokens of the longest prompt.
	Prompt int
	// Context is how many tokens one sequence holds.
	Context int
	// MaxTokensParam and PromptParam name the request fields behind
	// MaxTokens and the prompt, for the errors ("max_tokens", "messages").
	MaxTokensParam, PromptParam string
}

// CheckBudget refuses, before anything is generated, a turn whose
// shortest output does not fit b: the request's token limit, or the room
// its longest prompt leaves in the context. The runner closes a
// constrained output within its budget (runner.BudgetGuide), which can
// only work when the shortest output fits; refusing here says by how much,
// where a generation could only fail. The errors are *Error with
// CodeUnsatisfiable, CodeMaxTokensTooSmall or CodeContextTooSmall.
//
// A minimum the closing search cannot find within its state budget
// (fsm.ErrCloseBudget) lets the turn through: the runner then closes the
// output if the budget turns out to be enough, and fails it otherwise.
func (t *Turn) CheckBudget(b Budget) error {
	if t.cons == nil {
		return nil
	}
	need, err := t.MinTokens()
	var fe *fsm.Error
	switch {
	case errors.As(err, &fe) && fe.Code == fsm.ErrCloseBudget:
		return nil
	case errors.As(err, &fe) && fe.Code == fsm.ErrUnclosable:
		return &Error{Code: CodeUnsatisfiable, Msg: "no sequence of this model's tokens completes an output of the requested format", Err: err}
	case err != nil:
		return err
	}
	room := b.Context - b.Prompt
	if mt := b.MaxTokens; mt > 0 && mt < need && mt <= room {
		return &Error{Code: CodeMaxTokensTooSmall, Param: b.MaxTokensParam,
			Msg: fmt.Sprintf("%s is %d, but the shortest output of the requested format takes %d tokens: set %s to at least %d", b.MaxTokensParam, mt, need, b.MaxTokensParam, need)}
	}
	if room > 0 && room < need {
		return &Error{Code: CodeContextTooSmall, Param: b.PromptParam,
			Msg: fmt.Sprintf("the prompt (%d tokens) leaves %d of the context's %d tokens, but the shortest output of the requested format takes %d: shorten the prompt", b.Prompt, room, b.Context, need)}
	}
	return nil
}
