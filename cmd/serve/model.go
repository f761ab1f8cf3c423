package main

import (
	"context"
	"fmt"
	"strings"

	"conform/fsm"
	"conform/runner"
	"conform/templates"
	"conform/tokenizer"
	"conform/turn"
)

// Model is what the handlers serve: the runner over an engine, the
// vocabulary and its token index, the chat template and the tool-call format.
// It is the same whether the engine is llama.cpp or the tests' fake.
type Model struct {
	Name     string
	Vocab    *tokenizer.Vocabulary
	Index    *fsm.TokenIndex
	Template *templates.Template
	// TemplateSource says where the template came from (for the summary).
	TemplateSource string
	Format         turn.Format
	// FormatSource says how Format was chosen: "flag", "detected" or "default".
	FormatSource string
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

	special map[string]bool
}

// ModelSpec is what NewModel needs.
type ModelSpec struct {
	Name         string
	Vocab        *tokenizer.Vocabulary
	EOS          []runner.TokenID // end-of-generation ids (default Vocab.EOS)
	Template     string
	TemplateFrom string
	Parser       string // --tool-call-parser: "auto" or a format name
	Tokenize     func(text string) ([]runner.TokenID, error)
	Engine       runner.Engine
	Runner       runner.Config // Detokenize and EOS are set here
	Info         string
}

// NewModel builds the token index, parses the template, picks the tool-call
// format and creates the runner (not yet running: see Run).
func NewModel(s ModelSpec) (*Model, error) {
	m := &Model{Name: s.Name, Vocab: s.Vocab, Tokenize: s.Tokenize, TemplateSource: s.TemplateFrom, Info: s.Info, special: map[string]bool{}}
	for id, sp := range s.Vocab.Special {
		if sp && id < len(s.Vocab.Tokens) && len(s.Vocab.Tokens[id]) > 1 {
			m.special[string(s.Vocab.Tokens[id][1:])] = true
		}
	}
	eos := s.EOS
	if eos == nil {
		for _, t := range s.Vocab.EOS {
			eos = append(eos, runner.TokenID(t))
		}
	}
	ti, err := fsm.NewTokenIndex(s.Vocab.Tokens, eos, s.Vocab.Width)
	if err != nil {
		return nil, fmt.Errorf("token index: %w", err)
	}
	m.Index = ti
	if m.Template, err = templates.Parse(s.Template); err != nil {
		return nil, fmt.Errorf("chat template (%s): %w", s.TemplateFrom, err)
	}
	switch s.Parser {
	case "", "auto":
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
	m.BOS, m.EOS = m.tokenText(s.Vocab.BOS), ""
	if len(eos) > 0 {
		m.EOS = m.tokenText(tokenizer.TokenID(eos[0]))
	}
	// Output text: plain tokens as their bytes; special tokens vanish,
	// except the tool-call markers of the format, which keep their
	// 0xFF-prefixed bytes so that the parser sees them.
	markers := map[runner.TokenID]bool{}
	for _, mk := range m.Format.Markers() {
		if m.special[mk] {
			for id, t := range s.Vocab.Tokens {
				if len(t) > 1 && t[0] == tokenizer.SpecialPrefix && string(t[1:]) == mk {
					markers[runner.TokenID(id)] = true
				}
			}
		}
	}
	toks := s.Vocab.Tokens
	cfg := s.Runner
	cfg.EOS = eos
	cfg.Detokenize = func(id runner.TokenID) []byte {
		if id < 0 || int(id) >= len(toks) {
			return nil
		}
		t := toks[id]
		if len(t) > 0 && t[0] == tokenizer.SpecialPrefix && !markers[id] {
			return nil
		}
		return t
	}
	for _, t := range s.Vocab.Tokens {
		n := len(t)
		if n > 0 && t[0] == tokenizer.SpecialPrefix {
			n--
		}
		m.MaxTokenBytes = max(m.MaxTokenBytes, n)
	}
	m.MaxTokenBytes = max(m.MaxTokenBytes, 1)
	m.Slots = cfg.Slots
	m.Context = cfg.ContextSize
	if m.Runner, err = runner.New(s.Engine, cfg); err != nil {
		return nil, err
	}
	return m, nil
}

// Run runs the generation loop until ctx is done.
func (m *Model) Run(ctx context.Context) error { return m.Runner.Run(ctx) }

// IsSpecial reports whether text is a special token of the vocabulary.
func (m *Model) IsSpecial(text string) bool { return m.special[text] }

func (m *Model) tokenText(id tokenizer.TokenID) string {
	if id < 0 || int(id) >= len(m.Vocab.Tokens) {
		return ""
	}
	return strings.TrimPrefix(string(m.Vocab.Tokens[id]), "\xff")
}

// TokenString returns a token's text for logprobs (special tokens as their
// name).
func (m *Model) TokenString(id runner.TokenID) (string, []int) {
	if id < 0 || int(id) >= len(m.Vocab.Tokens) {
		return "", nil
	}
	t := m.Vocab.Tokens[id]
	if len(t) > 0 && t[0] == tokenizer.SpecialPrefix {
		t = t[1:]
	}
	b := make([]int, len(t))
	for i, c := range t {
		b[i] = int(c)
	}
	return string(t), b
}

// Summary is the one-line startup description.
func (m *Model) Summary() string {
	return fmt.Sprintf("model %q: %s; vocabulary %d tokens; context %d tokens x %d slots; chat template: %s; tool-call format: %s (%s)",
		m.Name, m.Info, len(m.Vocab.Tokens), m.Context, m.Slots, m.TemplateSource, m.Format, m.FormatSource)
}
