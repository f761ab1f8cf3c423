package main

import (
	"context"
	"fmt"

	"conform/runner"
	"conform/templates"
	"conform/tokenizer"
	"conform/turn"
)

// Model is what the handlers serve: the runner over an engine, the
// vocabulary as turns see it, the chat template and the tool-call format.
// It is the same whether the engine is llama.cpp or the tests' fake.
type Model struct {
	Name  string
	Vocab *tokenizer.Vocabulary
	// Tokens is the vocabulary as package turn sees it: the token index,
	// which texts are special tokens, every token's text.
	Tokens   *turn.Vocab
	Template *templates.Template
	// TemplateSource says where the template came from (for the summary).
	TemplateSource string
	Format         turn.Format
	// FormatSource says how Format was chosen: "flag", "detected" or "default".
	FormatSource string
	// Description is the tool-call format when detection built one from
	// the template's rendering that no registered format matches (Format
	// is then "template"); nil otherwise.
	Description *turn.Description
	// Reasoning is the model's reasoning format (none when its template
	// shows none), ReasoningSource how it was chosen ("flag", "detected"
	// or "default").
	Reasoning       turn.ReasoningFormat
	ReasoningSource string
	// Tokenize turns a rendered prompt into tokens, special-token text
	// included.
	Tokenize func(text string) ([]runner.TokenID, error)
	Runner   *runner.Runner
	Slots    int
	Context  int // tokens per slot
	// MaxTokenBytes is the most text bytes one token stands for (special
	// tokens by their text): a text of b bytes takes at least
	// b/MaxTokenBytes tokens, which refuses a prompt too long for the
	// context before tokenizing it.
	MaxTokenBytes int
	BOS, EOS      string
	// Info is the startup summary (architecture, size, quantisation...).
	Info string
}

// ModelSpec is what NewModel needs.
type ModelSpec struct {
	Name         string
	Vocab        *tokenizer.Vocabulary
	EOS          []runner.TokenID // end-of-generation ids (default Vocab.EOS)
	Template     string
	TemplateFrom string
	Parser       string // --tool-call-parser: "auto" or a format name
	Reasoning    string // --reasoning-format: "auto" (or "") or a format name
	Tokenize     func(text string) ([]runner.TokenID, error)
	Engine       runner.Engine
	Runner       runner.Config // Detokenize and EOS are set here
	Info         string
}

// templateFormat names a tool-call format built from the chat template's
// rendering (Model.Description).
const templateFormat turn.Format = "template"

// NewModel builds the vocabulary's token index, parses the template, picks
// the tool-call format and creates the runner (not yet running: see Run).
func NewModel(s ModelSpec) (*Model, error) {
	m := &Model{Name: s.Name, Vocab: s.Vocab, Tokenize: s.Tokenize, TemplateSource: s.TemplateFrom, Info: s.Info}
	eos := s.EOS
	if eos == nil {
		eos = s.Vocab.EOS
	}
	var err error
	if m.Tokens, err = turn.NewVocab(turn.VocabConfig{Tokens: s.Vocab.Tokens, Special: s.Vocab.Special, EOS: eos, Width: s.Vocab.Width}); err != nil {
		return nil, err
	}
	if m.Template, err = templates.Parse(s.Template); err != nil {
		return nil, fmt.Errorf("chat template (%s): %w", s.TemplateFrom, err)
	}
	switch s.Parser {
	case "", "auto":
		if d, ok := turn.DetectDescription(s.Template); ok && d.Name == "" {
			// A known shape with markers of its own: the description built
			// from the rendering is the format.
			m.Format, m.FormatSource, m.Description = templateFormat, "detected: built from the template's rendering of a call", &d
			break
		}
		f, ok := turn.DetectFormat(s.Template)
		m.Format, m.FormatSource = f, "detected"
		if !ok {
			m.FormatSource = "default"
		}
	default:
		f, err := turn.ParseFormat(s.Parser)
		if err != nil {
			return nil, err
		}
		m.Format, m.FormatSource = f, "flag"
	}
	if m.Reasoning, m.ReasoningSource, err = pickReasoning(s.Reasoning, s.Template); err != nil {
		return nil, err
	}
	m.BOS = m.Tokens.Text(s.Vocab.BOS)
	if len(eos) > 0 {
		m.EOS = m.Tokens.Text(eos[0])
	}
	cfg := s.Runner
	cfg.EOS = eos
	cfg.Detokenize = m.Tokens.DetokenizerWith(m.Format, m.Reasoning)
	if m.Description != nil {
		cfg.Detokenize = m.Tokens.DetokenizerOf(*m.Description, m.Reasoning)
	}
	m.MaxTokenBytes = m.Tokens.MaxTokenBytes()
	m.Slots = cfg.Slots
	m.Context = cfg.ContextSize
	if m.Runner, err = runner.New(s.Engine, cfg); err != nil {
		return nil, err
	}
	return m, nil
}

// Run runs the generation loop until ctx is done.
func (m *Model) Run(ctx context.Context) error { return m.Runner.Run(ctx) }

// Summary is the one-line startup description.
func (m *Model) Summary() string {
	return fmt.Sprintf("model %q: %s; vocabulary %d tokens; context %d tokens x %d slots; chat template: %s; tool-call format: %s (%s); reasoning format: %s (%s)",
		m.Name, m.Info, len(m.Vocab.Tokens), m.Context, m.Slots, m.TemplateSource, m.Format, m.FormatSource, m.Reasoning, m.ReasoningSource)
}
