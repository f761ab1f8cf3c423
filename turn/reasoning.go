package turn

// The reasoning block: an outer layer around the turn that Build makes of
// the request's output and tools (INNER below). A reasoning model writes
//
//	[open] R close sep INNER
//
// where open and close are the format's markers ("<think>", "</think>"),
// R is free text that cannot contain close, and sep is at most sepMax
// newlines (models write "</think>\n\n"), which the parser drops. open is
// left out when the rendered prompt already opened the block (the
// generation prompt of DeepSeek-R1-Distill and of Qwen3.5 with thinking
// ends with "<think>\n"); the whole block is left out when thinking is off,
// except that a prompt which opened it must still see it closed: then the
// turn is close sep INNER. A prompt that holds a closed block already
// (Qwen3's enable_thinking: false renders "<think>\n\n</think>\n\n") gets
// INNER alone: the model must not think again. A turn without a constraint
// of its own (free text) still gets one when it has a block, so that the
// block is bounded and closed: its INNER is free text without the markers.
//
// The budget is not part of the language: the guide of each choice
// (reasoning_guide.go) counts the block's tokens and forces the close.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"conform/fsm"
)

// ReasoningFormat names how a model writes its reasoning (its thinking
// before the answer).
type ReasoningFormat string

// The registered reasoning formats.
const (
	// ReasoningNone: the model's output has no reasoning block (or the
	// server is told to treat it so); a Reasoning of a request is ignored.
	ReasoningNone ReasoningFormat = "none"
	// ReasoningThink: the <think>…</think> family (Qwen3 and Qwen3.5,
	// DeepSeek-R1 and V3.1 thinking, GLM-4.5, MiniMax-M2, Kimi-K2-Thinking,
	// Nemotron).
	ReasoningThink ReasoningFormat = "think"
)

// thinkSyntax is a reasoning format as data: its markers (text; each is
// written as its 0xFF-prefixed bytes when the vocabulary has it as a
// special token, see markerBytes) and the separator after the block.
type thinkSyntax struct {
	Open, Close string
	// SepMax is the most newlines allowed between Close and the answer;
	// the parser drops them.
	SepMax int
}

// reasoningFormats is the registry of reasoning formats: the one place a
// name maps to its markers. ReasoningNone has no entry.
var reasoningFormats = map[ReasoningFormat]thinkSyntax{
	ReasoningThink: {Open: "<think>", Close: "</think>", SepMax: 2},
}

// ReasoningFormats returns the reasoning format names, "none" included,
// sorted.
func ReasoningFormats() []ReasoningFormat {
	out := []ReasoningFormat{ReasoningNone}
	for f := range reasoningFormats {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// ParseReasoningFormat checks a reasoning format name ("auto" is not a
// format: use DetectReasoningFormat).
func ParseReasoningFormat(name string) (ReasoningFormat, error) {
	f := ReasoningFormat(strings.TrimSpace(name))
	if _, ok := reasoningFormats[f]; ok || f == ReasoningNone {
		return f, nil
	}
	return "", &Error{Code: CodeUnknownFormat, Param: "reasoning-format", Msg: fmt.Sprintf("unknown reasoning format %q (want none or think)", name)}
}

// DetectReasoningFormat guesses the reasoning format of a chat template
// from what it writes and reads: a template that writes "<think>" or
// "</think>" (Qwen3, DeepSeek-R1, GLM-4.5, MiniMax-M2 all do, to open a
// generation or to strip or render earlier reasoning) or that reads
// reasoning_content is the think family. gpt-oss's harmony channels are a
// format of their own, not read here: a harmony template ("<|channel|>")
// is none. It returns false when the template shows no reasoning.
func DetectReasoningFormat(template string) (ReasoningFormat, bool) {
	switch {
	case strings.Contains(template, "<|channel|>"):
		return ReasoningNone, false
	case strings.Contains(template, "<think>"), strings.Contains(template, "</think>"), strings.Contains(template, "reasoning_content"):
		return ReasoningThink, true
	}
	return ReasoningNone, false
}

// Markers returns the marker texts of reasoning format f (the strings a
// detokenizer must keep when they are special tokens), none for "none".
func (f ReasoningFormat) Markers() []string {
	sx, ok := reasoningFormats[f]
	if !ok {
		return nil
	}
	return []string{sx.Open, sx.Close}
}

// PromptState says how a rendered prompt leaves the reasoning block.
type PromptState uint8

// The prompt states.
const (
	// PromptPlain: the prompt has no block at its end; the model opens it
	// itself when it thinks.
	PromptPlain PromptState = iota
	// PromptOpened: the generation prompt ends inside an opened block
	// ("<think>\n"): the turn starts in the reasoning.
	PromptOpened
	// PromptClosed: the generation prompt ends with a closed block (an
	// empty "<think>\n\n</think>\n\n"): thinking is off for this turn.
	PromptClosed
)

// PromptState reads the tail of a rendered prompt, after its trailing
// whitespace: the open marker there is PromptOpened, the close marker
// PromptClosed. It is how a request learns, at request time and from the
// template's own output rather than its name, whether the template opened
// the block. With f "none" it is always PromptPlain.
func (f ReasoningFormat) PromptState(prompt string) PromptState {
	sx, ok := reasoningFormats[f]
	if !ok {
		return PromptPlain
	}
	tail := strings.TrimRight(prompt, " \t\r\n")
	switch {
	case strings.HasSuffix(tail, sx.Close):
		return PromptClosed
	case strings.HasSuffix(tail, sx.Open):
		return PromptOpened
	}
	return PromptPlain
}

// NoBudget is a Reasoning.Budget without limit.
const NoBudget = -1

// Reasoning is what a request says about the model's thinking, in no
// API's terms: Chat Completions (chat_template_kwargs, reasoning_effort,
// thinking_token_budget), Anthropic Messages (thinking) and Responses
// (reasoning) adapters each fill one into Spec.Reasoning. The zero value
// is no thinking.
type Reasoning struct {
	// Format is the model's reasoning format when the Compiler was not
	// given one (Options.Reasoning wins when it is set); "" means the
	// Compiler's.
	Format ReasoningFormat
	// Enabled lets the model think before it answers (when the model's
	// reasoning format is not "none").
	Enabled bool
	// Budget bounds the block's text in tokens: once that many tokens
	// were generated inside the block, only tokens that write the close
	// marker are allowed (the rest of a character the budget cut comes
	// first). NoBudget (any negative value) is no limit but max_tokens;
	// 0 is no thinking: as Enabled false.
	Budget int
	// Prompt is how the rendered prompt leaves the block
	// (ReasoningFormat.PromptState of the prompt text).
	Prompt PromptState
}

// EffortBudget maps an OpenAI reasoning_effort to a budget: "none" and
// "minimal" 0 (no thinking), "low" 1024 tokens, "medium" 4096, "high"
// 16384. It returns false for any other value.
func EffortBudget(effort string) (int, bool) {
	switch effort {
	case "none", "minimal":
		return 0, true
	case "low":
		return 1024, true
	case "medium":
		return 4096, true
	case "high":
		return 16384, true
	}
	return 0, false
}

// thinkLayout is a turn's reasoning block as the guide and the parser
// follow it: the markers as written in generated text, whether the block
// is already open at the start, whether it may hold text, and the budget.
type thinkLayout struct {
	open, close string // as generated (0xFF-prefixed when special)
	opened      bool   // the prompt opened the block: no open marker
	text        bool   // the block may hold reasoning (else it is only closed)
	budget      int    // the text's token budget; negative: none
	sepMax      int
	fail        []int // the KMP failure function of close
}

// applyReasoning wraps res's node in the reasoning block of r under the
// model's reasoning format: the outer layer of Build (see the file
// comment). It leaves res as it is when the turn has no block.
func applyReasoning(r Reasoning, opts Options, res *Result) error {
	f := opts.Reasoning
	if f == "" {
		f = r.Format
	}
	if f == "" || f == ReasoningNone {
		return nil
	}
	sx, ok := reasoningFormats[f]
	if !ok {
		return &Error{Code: CodeUnknownFormat, Param: "reasoning-format", Msg: fmt.Sprintf("unknown reasoning format %q", f)}
	}
	for _, m := range []string{markerBytes(sx.Open, opts.IsSpecial), markerBytes(sx.Close, opts.IsSpecial)} {
		if m[0] == fsm.SpecialPrefix {
			res.thinkSpecials = append(res.thinkSpecials, m)
		}
	}
	think := r.Enabled && r.Budget != 0 && r.Prompt != PromptClosed
	opened := r.Prompt == PromptOpened
	if !think && !opened {
		return nil
	}
	lay := &thinkLayout{open: markerBytes(sx.Open, opts.IsSpecial), close: markerBytes(sx.Close, opts.IsSpecial),
		opened: opened, text: think, budget: r.Budget, sepMax: sx.SepMax}
	if lay.budget < 0 {
		lay.budget = NoBudget
	}
	lay.fail = kmpFailure(lay.close)
	inner := res.Node
	if inner == nil {
		// Free text without the markers, so that the block cannot be
		// reopened nor a close read into the answer.
		inner = fsm.Star(fsm.AnyRune())
		var banned []*fsm.Node
		for _, m := range []string{lay.open, lay.close} {
			if m[0] != fsm.SpecialPrefix {
				banned = append(banned, fsm.Cat(anyBytes, fsm.Lit(m), anyBytes))
			}
		}
		if len(banned) > 0 {
			inner = fsm.And(inner, fsm.Not(fsm.Alt(banned...)))
		}
	}
	var parts []*fsm.Node
	if think {
		if !opened {
			parts = append(parts, fsm.Lit(lay.open))
		}
		text := fsm.Star(fsm.AnyRune())
		if lay.close[0] != fsm.SpecialPrefix {
			// A special close cannot appear in UTF-8 text.
			text = fsm.And(text, fsm.Not(fsm.Cat(anyBytes, fsm.Lit(lay.close), anyBytes)))
		}
		parts = append(parts, text)
	}
	parts = append(parts, fsm.Lit(lay.close), fsm.Repeat(fsm.Lit("\n"), 0, lay.sepMax), inner)
	res.Node = fsm.Cat(parts...)
	res.think = lay
	h := sha256.New()
	fmt.Fprintf(h, "%d:%s;%d:%s;%d:%s;%v;%v;%d", len(res.Key), res.Key, len(lay.open), lay.open, len(lay.close), lay.close, opened, think, lay.sepMax)
	res.Key = "turn:" + hex.EncodeToString(h.Sum(nil))
	return nil
}

// withReasoning gives p, a parser of t, the reasoning layer of t's block
// when it has one, and the cleaning of the reasoning format's special
// markers from content (the detokenizer keeps them for the block; in a
// turn without one, where nothing constrains the text, they are markup).
func (t *Turn) withReasoning(p *Parser) *Parser {
	if t.res.think != nil {
		p.think = newThinkReader(t.res.think)
	}
	if len(t.res.thinkSpecials) > 0 {
		mk := p.sx.markerBytes
		p.sx.markerBytes = append(mk[:len(mk):len(mk)], t.res.thinkSpecials...)
	}
	return p
}

// kmpFailure is the Knuth–Morris–Pratt failure function of s: fail[i] is
// the length of the longest proper border of s[:i+1]. thinkScan steps
// through the close marker with it, so the match of a marker split over
// tokens is followed one byte at a time.
func kmpFailure(s string) []int {
	fail := make([]int, len(s))
	for i, k := 1, 0; i < len(s); i++ {
		for k > 0 && s[i] != s[k] {
			k = fail[k-1]
		}
		if s[i] == s[k] {
			k++
		}
		fail[i] = k
	}
	return fail
}

// kmpStep advances a match of k bytes of s by byte c.
func kmpStep(s string, fail []int, k int, c byte) int {
	for k > 0 && (k == len(s) || s[k] != c) {
		k = fail[k-1]
	}
	if s[k] == c {
		k++
	}
	return k
}

// thinkPhase is where a choice's text stands relative to its block.
type thinkPhase uint8

const (
	thinkOpening thinkPhase = iota // writing the open marker
	thinkInside                    // in the block, before its close
	thinkSep                       // after the close, in the separator
	thinkAfter                     // in INNER (or the text left the layout)
)

// thinkScan follows the bytes of a choice's text through the block: the
// phase, how much of the open marker is written, how much of the close
// marker ends the text (KMP), and how many UTF-8 continuation bytes the
// text still owes. The guide and the parser share it.
type thinkScan struct {
	phase thinkPhase
	got   int // thinkOpening: bytes of open written
	k     int // thinkInside: bytes of close at the end of the text
	need  int // thinkInside: continuation bytes owed
	sep   int // thinkSep: newlines seen
}

func newThinkScan(lay *thinkLayout) thinkScan {
	if lay.opened {
		return thinkScan{phase: thinkInside}
	}
	return thinkScan{phase: thinkOpening}
}

// step advances s over byte c; it reports whether c belongs to the
// block's text (reasoning), as opposed to markup or what follows.
func (s *thinkScan) step(lay *thinkLayout, c byte) (text bool) {
	switch s.phase {
	case thinkOpening:
		if c != lay.open[s.got] {
			s.phase = thinkAfter // off the layout: never under the constraint
			return false
		}
		if s.got++; s.got == len(lay.open) {
			s.phase = thinkInside
		}
	case thinkInside:
		s.k = kmpStep(lay.close, lay.fail, s.k, c)
		if s.k == len(lay.close) {
			s.phase, s.need = thinkSep, 0
			if lay.sepMax == 0 {
				s.phase = thinkAfter
			}
			return false
		}
		switch {
		case s.need > 0 && c&0xC0 == 0x80:
			s.need--
		case c >= 0xF0 && c < 0xF8:
			s.need = 3
		case c >= 0xE0 && c < 0xF0:
			s.need = 2
		case c >= 0xC0 && c < 0xE0:
			s.need = 1
		default:
			s.need = 0
		}
		return true
	case thinkSep:
		if c == '\n' && s.sep < lay.sepMax {
			if s.sep++; s.sep == lay.sepMax {
				s.phase = thinkAfter
			}
			return false
		}
		s.phase = thinkAfter
	}
	return false
}

// closed reports whether the block is behind the text.
func (s *thinkScan) closed() bool { return s.phase >= thinkSep }

// thinkReader is the parser's outer layer: it reads the block ahead of the
// format's parser, releasing its text as EventReasoning and dropping the
// markers and the separator, and hands everything after it on. Like the
// format's parser it releases only what is certain: a suffix of the text
// that could still start the close marker is held back.
type thinkReader struct {
	lay  *thinkLayout
	scan thinkScan
	held []byte // thinkInside: bytes that may be the start of close
}

func newThinkReader(lay *thinkLayout) *thinkReader {
	return &thinkReader{lay: lay, scan: newThinkScan(lay)}
}

// feed reads s (and the end of the text when eof) and returns the
// reasoning events it makes certain and the text that follows the block,
// for the format's parser. A nil reader passes s through.
func (r *thinkReader) feed(s string, eof bool) ([]Event, string) {
	if r == nil || r.scan.phase == thinkAfter && len(r.held) == 0 {
		return nil, s
	}
	var text []byte
	rest := ""
	for i := 0; i < len(s); i++ {
		c := s[i]
		before := r.scan.phase
		if before == thinkOpening && c != r.lay.open[r.scan.got] {
			// Off the layout (only without a constraint): what was
			// taken for the marker is given back as the answer's text.
			rest = r.lay.open[:r.scan.got] + s[i:]
			r.scan.phase = thinkAfter
			break
		}
		isText := r.scan.step(r.lay, c)
		switch {
		case isText:
			r.held = append(r.held, c)
			// Keep only the bytes that may still be close's start.
			if keep := r.scan.k; keep < len(r.held) {
				text = append(text, r.held[:len(r.held)-keep]...)
				r.held = append(r.held[:0], r.held[len(r.held)-keep:]...)
			}
		case before == thinkInside && r.scan.closed():
			// The close marker: its start was held, never text.
			if n := len(r.lay.close) - 1; len(r.held) >= n {
				text = append(text, r.held[:len(r.held)-n]...)
			}
			r.held = r.held[:0]
		case before == thinkSep && r.scan.phase == thinkAfter && c != '\n':
			rest = s[i:]
		}
		if r.scan.phase == thinkAfter {
			if rest == "" && i+1 < len(s) {
				rest = s[i+1:]
			}
			break
		}
	}
	if eof && r.scan.phase == thinkInside {
		text = append(text, r.held...) // a close never came: the text was the reasoning
		r.held = r.held[:0]
	}
	var ev []Event
	if len(text) > 0 {
		ev = []Event{{Kind: EventReasoning, Text: string(text)}}
	}
	return ev, rest
}

// DetokenizerWith is Detokenizer for a model with reasoning format r as
// well as tool-call format f: the special tokens among r's markers are
// kept too, so that the turn's parser sees the block's markers.
func (v *Vocab) DetokenizerWith(f Format, r ReasoningFormat) func(TokenID) []byte {
	return v.detokenizer(append(f.Markers(), r.Markers()...))
}
