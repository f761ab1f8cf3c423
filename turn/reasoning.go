package turn

// The reasoning block: an outer layer around the turn that Build makes of
// the request's output and tools (INNER below). A reasoning model writes
//
//	[open] R close after sep [answer] INNER
//
// where open and close are the format's markers ("<think>", "</think>"),
// R is free text that cannot contain close, after is a fixed string the
// format writes after every block (none for think; harmony's
// "<|start|>assistant", the header of the answer's message), sep is at
// most sepMax newlines (models write "</think>\n\n"), and answer opens the
// answer of a turn without tools (harmony's final channel; with tools the
// tool-call format writes its own). The parser drops all but R. open is
// left out when the rendered prompt already opened the block (the
// generation prompt of DeepSeek-R1-Distill and of Qwen3.5 with thinking
// ends with "<think>\n"); the whole block is left out when thinking is off,
// except that a prompt which opened it must still see it closed: then the
// turn is close sep INNER. A prompt that holds a closed block already
// (Qwen3's enable_thinking: false renders "<think>\n\n</think>\n\n") gets
// INNER alone (after the answer's opening, for harmony): the model must
// not think again. A format without an off
// switch (harmony: gpt-oss always writes its analysis channel) keeps the
// block when thinking is off, empty: [open] close after [answer] INNER,
// the smallest budget there is. A turn without a constraint
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
	// ReasoningHarmony: gpt-oss's analysis channel,
	// <|channel|>analysis<|message|>R<|end|>, then the answer as a
	// message of its own: <|start|>assistant and the final channel (or the
	// tool-call format's commentary channel). It has no off switch.
	ReasoningHarmony ReasoningFormat = "harmony"
)

// thinkSyntax is a reasoning format as data: its markers and what follows
// the block (see the file comment). Every string is text, in which each of
// Specials is written as its 0xFF-prefixed bytes when the vocabulary has
// it as a special token (markerBytes).
type thinkSyntax struct {
	Open, Close string
	// After is written after Close, always; the parser drops it.
	After string
	// SepMax is the most newlines allowed after After, before the
	// answer; the parser drops them.
	SepMax int
	// Answer opens the answer of a turn without tools, after the
	// separator; the parser drops it.
	Answer string
	// Always says the format has no off switch: thinking off (Enabled
	// false, Budget 0) writes the block empty rather than leaving it out.
	Always bool
	// Specials are the marker texts the strings above are made of that
	// may be special tokens (what a detokenizer must keep).
	Specials []string
}

// reasoningFormats is the registry of reasoning formats: the one place a
// name maps to its markers. ReasoningNone has no entry. The strings are
// what the models' templates render for an assistant turn with its
// reasoning (../shared/templates/golden: Qwen3's "<think>\nR\n</think>\n\n",
// gpt-oss's "<|channel|>analysis<|message|>R<|end|><|start|>assistant
// <|channel|>final<|message|>TEXT").
var reasoningFormats = map[ReasoningFormat]thinkSyntax{
	ReasoningThink: {Open: "<think>", Close: "</think>", SepMax: 2, Specials: []string{"<think>", "</think>"}},
	ReasoningHarmony: {Open: "<|channel|>analysis<|message|>", Close: "<|end|>", After: "<|start|>assistant",
		Answer: "<|channel|>final<|message|>", Always: true,
		Specials: []string{"<|channel|>", "<|message|>", "<|end|>", "<|start|>"}},
}

// resolve writes the special markers of sx in s as generated text has
// them (0xFF-prefixed when special).
func (sx thinkSyntax) resolve(s string, isSpecial func(string) bool) string {
	for _, m := range sx.Specials {
		if strings.Contains(s, m) {
			s = strings.ReplaceAll(s, m, markerBytes(m, isSpecial))
		}
	}
	return s
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
	return "", &Error{Code: CodeUnknownFormat, Param: "reasoning-format", Msg: fmt.Sprintf("unknown reasoning format %q (want none, think or harmony)", name)}
}

// DetectReasoningFormat guesses the reasoning format of a chat template
// from what it writes and reads: a template that writes harmony's opening
// of the analysis channel, "<|channel|>analysis<|message|>" (gpt-oss's
// renders an assistant message's thinking field so), is harmony; one
// that writes "<think>" or "</think>" (Qwen3, DeepSeek-R1, GLM-4.5,
// MiniMax-M2 all do, to open a generation or to strip or render earlier
// reasoning) or that reads reasoning_content is the think family. A
// template with harmony's channels but no analysis channel is none. It
// returns false when the template shows no reasoning.
func DetectReasoningFormat(template string) (ReasoningFormat, bool) {
	switch {
	case strings.Contains(template, reasoningFormats[ReasoningHarmony].Open):
		return ReasoningHarmony, true
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
	return append([]string(nil), sx.Specials...)
}

// AlwaysThinks reports whether format f has no off switch (harmony): a
// request that turns thinking off gets an empty block, and a template
// variable that turns it off (reasoning_effort none) means nothing to the
// model.
func (f ReasoningFormat) AlwaysThinks() bool { return reasoningFormats[f].Always }

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
// (and the format's After) PromptClosed. It is how a request learns, at
// request time and from the template's own output rather than its name,
// whether the template opened the block. Where After is not empty the
// close marker ends other messages too (harmony's <|end|> ends every
// message, and every generation prompt ends <|end|><|start|>assistant),
// so the tail is closed only when the last open marker has no close
// before that tail. With f "none" it is always PromptPlain.
func (f ReasoningFormat) PromptState(prompt string) PromptState {
	sx, ok := reasoningFormats[f]
	if !ok {
		return PromptPlain
	}
	tail := strings.TrimRight(prompt, " \t\r\n")
	switch {
	case strings.HasSuffix(tail, sx.Close+sx.After):
		if sx.After == "" {
			return PromptClosed
		}
		body := tail[:len(tail)-len(sx.Close+sx.After)]
		if i := strings.LastIndex(body, sx.Open); i >= 0 && !strings.Contains(body[i:], sx.Close) {
			return PromptClosed
		}
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
// "minimal" 0 (no thinking; for a format that always thinks, harmony, an
// empty block: the smallest budget), "low" 1024 tokens, "medium" 4096,
// "high" 16384. It returns false for any other value.
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
	after       string // as generated: after close, then the separator
	answer      string // as generated: after the separator (turns without tools)
	opened      bool   // the prompt opened the block: no open marker
	behind      bool   // the prompt closed the block: only the answer's opening
	text        bool   // the block may hold reasoning (else it is only closed)
	budget      int    // the text's token budget; negative: none
	sepMax      int
	fail        []int // the KMP failure function of close
}

// applyReasoning wraps res's node in the reasoning block of r under the
// model's reasoning format: the outer layer of Build (see the file
// comment); tools says whether the turn offers tools (then the tool-call
// format opens the answer). It leaves res as it is when the turn has no
// block.
func applyReasoning(r Reasoning, tools bool, opts Options, res *Result) error {
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
	for _, mk := range sx.Specials {
		if m := markerBytes(mk, opts.IsSpecial); m[0] == fsm.SpecialPrefix {
			res.thinkSpecials = append(res.thinkSpecials, m)
		}
	}
	think := r.Enabled && r.Budget != 0 && r.Prompt != PromptClosed
	opened := r.Prompt == PromptOpened
	// Always: thinking off is an empty block (a closed prompt still
	// means the block is behind).
	block := think || opened || sx.Always && r.Prompt != PromptClosed
	// A prompt that closed the block leaves the answer's opening to the
	// turn (harmony's final channel, after <|start|>assistant).
	behind := !block && r.Prompt == PromptClosed && !tools && sx.Answer != ""
	if !block && !behind {
		return nil
	}
	lay := &thinkLayout{open: sx.resolve(sx.Open, opts.IsSpecial), close: sx.resolve(sx.Close, opts.IsSpecial),
		after: sx.resolve(sx.After, opts.IsSpecial), opened: opened, behind: behind, text: think, budget: r.Budget, sepMax: sx.SepMax}
	if !tools {
		lay.answer = sx.resolve(sx.Answer, opts.IsSpecial)
	}
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
			if strings.IndexByte(m, fsm.SpecialPrefix) < 0 {
				banned = append(banned, fsm.Cat(anyBytes, fsm.Lit(m), anyBytes))
			}
		}
		if len(banned) > 0 {
			inner = fsm.And(inner, fsm.Not(fsm.Alt(banned...)))
		}
	}
	var parts []*fsm.Node
	if !opened && !behind {
		parts = append(parts, fsm.Lit(lay.open))
	}
	if think {
		text := fsm.Star(fsm.AnyRune())
		if lay.close[0] != fsm.SpecialPrefix {
			// A special close cannot appear in UTF-8 text.
			text = fsm.And(text, fsm.Not(fsm.Cat(anyBytes, fsm.Lit(lay.close), anyBytes)))
		}
		parts = append(parts, text)
	}
	if !behind {
		parts = append(parts, fsm.Lit(lay.close+lay.after), fsm.Repeat(fsm.Lit("\n"), 0, lay.sepMax))
	}
	parts = append(parts, fsm.Lit(lay.answer), inner)
	res.Node = fsm.Cat(parts...)
	res.think = lay
	h := sha256.New()
	fmt.Fprintf(h, "%d:%s;%d:%s;%d:%s;%d:%s;%d:%s;%v;%v;%v;%d", len(res.Key), res.Key, len(lay.open), lay.open, len(lay.close), lay.close,
		len(lay.after), lay.after, len(lay.answer), lay.answer, opened, behind, think, lay.sepMax)
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
	thinkTrail                     // after the close, writing After
	thinkSep                       // in the separator's newlines
	thinkAnswer                    // writing the answer's opening
	thinkAfter                     // in INNER (or the text left the layout)
)

// thinkScan follows the bytes of a choice's text through the block: the
// phase, how much of the open marker (or After, or the answer's opening)
// is written, how much of the close marker ends the text (KMP), and how
// many UTF-8 continuation bytes the text still owes. The guide and the
// parser share it.
type thinkScan struct {
	phase thinkPhase
	got   int // thinkOpening, thinkTrail, thinkAnswer: bytes of the literal written
	k     int // thinkInside: bytes of close at the end of the text
	need  int // thinkInside: continuation bytes owed
	sep   int // thinkSep: newlines seen
}

func newThinkScan(lay *thinkLayout) thinkScan {
	if lay.behind {
		var s thinkScan
		s.enter(lay, thinkAnswer)
		return s
	}
	if lay.opened {
		return thinkScan{phase: thinkInside}
	}
	return thinkScan{phase: thinkOpening}
}

// literal is the string phase ph matches, "" for the others.
func (lay *thinkLayout) literal(ph thinkPhase) string {
	switch ph {
	case thinkOpening:
		return lay.open
	case thinkTrail:
		return lay.after
	case thinkAnswer:
		return lay.answer
	}
	return ""
}

// enter moves s to phase ph, or past it when lay leaves it empty.
func (s *thinkScan) enter(lay *thinkLayout, ph thinkPhase) {
	s.got, s.sep = 0, 0
	for ph == thinkTrail && lay.after == "" || ph == thinkSep && lay.sepMax == 0 || ph == thinkAnswer && lay.answer == "" {
		ph++
	}
	s.phase = ph
}

// byteKind says what a byte of a choice's text is to the block.
type byteKind uint8

const (
	byteMarkup byteKind = iota // a marker, After, the separator or the answer's opening
	byteText                   // the block's text: reasoning
	byteInner                  // INNER's, or off the layout (possible only without a constraint)
)

// step advances s over byte c and says what c is. On byteInner from a
// literal phase, the literal's first got bytes (returned) were taken for
// markup and are INNER's too.
func (s *thinkScan) step(lay *thinkLayout, c byte) (byteKind, string) {
	switch s.phase {
	case thinkOpening, thinkTrail, thinkAnswer:
		lit := lay.literal(s.phase)
		if c != lit[s.got] {
			back := lit[:s.got]
			s.phase = thinkAfter
			return byteInner, back
		}
		if s.got++; s.got == len(lit) {
			switch s.phase {
			case thinkOpening:
				s.enter(lay, thinkInside)
			case thinkTrail:
				s.enter(lay, thinkSep)
			default:
				s.phase = thinkAfter
			}
		}
		return byteMarkup, ""
	case thinkInside:
		s.k = kmpStep(lay.close, lay.fail, s.k, c)
		if s.k == len(lay.close) {
			s.need = 0
			s.enter(lay, thinkTrail)
			return byteMarkup, ""
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
		return byteText, ""
	case thinkSep:
		if c == '\n' && s.sep < lay.sepMax {
			if s.sep++; s.sep == lay.sepMax {
				s.enter(lay, thinkAnswer)
			}
			return byteMarkup, ""
		}
		s.enter(lay, thinkAnswer)
		if s.phase == thinkAnswer {
			return s.step(lay, c)
		}
	}
	return byteInner, ""
}

// closed reports whether the block is behind the text.
func (s *thinkScan) closed() bool { return s.phase >= thinkTrail }

// thinkReader is the parser's outer layer: it reads the block ahead of the
// format's parser, releasing its text as EventReasoning and dropping the
// markers, After, the separator and the answer's opening, and hands
// everything after them on. Like the format's parser it releases only
// what is certain: a suffix of the text that could still start the close
// marker is held back.
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
		kind, back := r.scan.step(r.lay, c)
		switch {
		case kind == byteInner:
			// INNER from here; what was taken for markup of a literal
			// that did not follow is given back (only without a
			// constraint).
			rest = back + s[i:]
		case kind == byteText:
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
		}
		if r.scan.phase == thinkAfter {
			if kind != byteInner && i+1 < len(s) {
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
