package templates

import (
	"time"
)

// Template is a parsed chat template. It is immutable after Parse and safe
// for concurrent Render calls.
type Template struct {
	body    []stmt
	missing []string // root-frame names that start missing (frames.go)
}

// Parse parses a Jinja chat template (as found in GGUF
// tokenizer.chat_template or tokenizer_config.json) with the lexing options
// transformers uses. Unknown filters and tests are reported here, as jinja2
// reports them when compiling, except inside if statements and conditional
// expressions, where they fail only when evaluated (CodeUnknown from
// Render; see check.go).
func Parse(src string) (*Template, error) {
	body, err := parse(src)
	if err != nil {
		return nil, err
	}
	foldBody(body)
	if err := checkBody(body, false); err != nil {
		return nil, err
	}
	return &Template{body: body, missing: annotateFrames(body, nil)}, nil
}

// Limits bounds one Render call. The zero value of a field means its
// default.
type Limits struct {
	// MaxSteps caps statements and expressions evaluated (default 20M:
	// a 1,000-message conversation with tools takes well under 1M).
	MaxSteps int
	// MaxOutput caps the bytes written, counting the output of macro calls
	// and set blocks, and the length of any one string or list value
	// (default 32 MiB, far above any real prompt).
	MaxOutput int
	// MaxDepth caps nested macro calls and recursive loops (default 200;
	// jinja2 fails near Python's recursion limit of 1000 frames, which is a
	// few hundred macro levels).
	MaxDepth int
}

func (l Limits) withDefaults() Limits {
	if l.MaxSteps <= 0 {
		l.MaxSteps = 20_000_000
	}
	if l.MaxOutput <= 0 {
		l.MaxOutput = 32 << 20
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = 200
	}
	return l
}

// Vars are the inputs of one rendering, bound as transformers'
// apply_chat_template binds them: messages, tools, documents,
// add_generation_prompt, bos_token, eos_token, then every Extra entry
// (which may override the others).
type Vars struct {
	// Messages is the conversation: a *List of *Dict (see DecodeJSON).
	// nil binds an empty list.
	Messages Value
	// Tools is the tool list; nil binds None (it is still defined, as in
	// transformers).
	Tools Value
	// Documents is the RAG document list; nil binds None.
	Documents           Value
	AddGenerationPrompt bool
	BosToken            string
	EosToken            string
	// Extra holds further variables (chat_template_kwargs such as
	// enable_thinking).
	Extra map[string]Value
	// Now is the clock strftime_now reads; nil means time.Now.
	Now func() time.Time
	// Limits bounds the work of this rendering.
	Limits Limits
}

// Render renders the template. Errors are *Error: CodeRaised carries the
// template's raise_exception message in Msg exactly.
func (t *Template) Render(vars Vars) (string, error) {
	ev := &evaluator{limits: vars.Limits.withDefaults(), now: vars.Now}
	if ev.now == nil {
		ev.now = time.Now
	}
	ctx := newScope(nil)
	or := func(v Value, def Value) Value {
		if v == nil {
			return def
		}
		return v
	}
	ctx.vars["messages"] = or(vars.Messages, &List{})
	ctx.vars["tools"] = or(vars.Tools, None{})
	ctx.vars["documents"] = or(vars.Documents, None{})
	ctx.vars["add_generation_prompt"] = Bool(vars.AddGenerationPrompt)
	ctx.vars["bos_token"] = Str(vars.BosToken)
	ctx.vars["eos_token"] = Str(vars.EosToken)
	for k, v := range vars.Extra {
		if v == nil {
			v = None{}
		}
		ctx.vars[k] = v
	}
	out, err := ev.capture(func() error {
		_, err := ev.execBody(t.body, declare(newScope(ctx), t.missing))
		return err
	})
	if err != nil {
		return "", err
	}
	return out, nil
}
