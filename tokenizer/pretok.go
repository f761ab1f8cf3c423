package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"golang.org/x/text/unicode/norm"
)

// normalizer rewrites one text segment before pre-tokenization.
type normalizer func(string) string

// preTokenizer splits one piece into pieces, appending them to out.
// atStart says the piece begins the whole input (Metaspace "first").
type preTokenizer func(piece string, atStart bool, out []string) []string

// gpt2Regex is the GPT-2 pre-tokenizer pattern that a ByteLevel
// pre-tokenizer with use_regex applies.
const gpt2Regex = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

func firstRune(s string) (rune, int) { return utf8.DecodeRuneInString(s) }
func lastRune(s string) (rune, int)  { return utf8.DecodeLastRuneInString(s) }
func unsupported(place, what string) error {
	return errorf(CodeUnsupported, place, nil, "%s", what)
}

// buildNormalizers flattens a normalizer section into a list.
func buildNormalizers(c *component, place string) ([]normalizer, error) {
	if c == nil {
		return nil, nil
	}
	switch c.Type {
	case "Sequence":
		var out []normalizer
		for i := range c.Normalizers {
			ns, err := buildNormalizers(&c.Normalizers[i], fmt.Sprintf("%s.normalizers[%d]", place, i))
			if err != nil {
				return nil, err
			}
			out = append(out, ns...)
		}
		return out, nil
	case "Prepend":
		p := c.Prepend
		return []normalizer{func(s string) string {
			if s == "" {
				return s
			}
			return p + s
		}}, nil
	case "Replace":
		m, err := buildPattern(c.Pattern, place+".pattern")
		if err != nil {
			return nil, err
		}
		content := c.Content
		return []normalizer{func(s string) string {
			var sb strings.Builder
			last := 0
			m.findAll(s, func(start, end int) {
				sb.WriteString(s[last:start])
				sb.WriteString(content)
				last = end
			})
			if last == 0 {
				return s
			}
			sb.WriteString(s[last:])
			return sb.String()
		}}, nil
	case "NFC":
		return []normalizer{norm.NFC.String}, nil
	case "NFD":
		return []normalizer{norm.NFD.String}, nil
	case "NFKC":
		return []normalizer{norm.NFKC.String}, nil
	case "NFKD":
		return []normalizer{norm.NFKD.String}, nil
	case "Lowercase":
		return []normalizer{strings.ToLower}, nil
	}
	return nil, unsupported(place, "normalizer type "+c.Type)
}

// matcher finds the non-empty, non-overlapping matches of a Split or
// Replace pattern, left to right, as byte offsets.
type matcher interface {
	findAll(s string, f func(start, end int))
}

type literalMatcher string

func (l literalMatcher) findAll(s string, f func(start, end int)) {
	if l == "" {
		return
	}
	for off := 0; ; {
		i := strings.Index(s[off:], string(l))
		if i < 0 {
			return
		}
		f(off+i, off+i+len(l))
		off += i + len(l)
	}
}

// regexTimeout bounds one regex search. The pre-tokenizer patterns of real
// tokenizers run in linear time (microseconds per match); the bound only
// stops a pathological pattern from hanging Encode. When it fires, the
// rest of the piece is left unsplit.
const regexTimeout = 2 * time.Second

// regexMatcher runs a regexp2 pattern (.NET/Oniguruma-like syntax with
// look-around, as tokenizer.json patterns need). regexp2 works on runes;
// matches are mapped back to byte offsets, with each invalid UTF-8 byte
// standing as one U+FFFD rune so that no input byte is lost.
type regexMatcher struct{ re *regexp2.Regexp }

func (r regexMatcher) findAll(s string, f func(start, end int)) {
	runes := make([]rune, 0, len(s))
	offs := make([]int, 0, len(s)+1)
	for i, c := range s {
		runes = append(runes, c)
		offs = append(offs, i)
	}
	offs = append(offs, len(s))
	m, err := r.re.FindRunesMatch(runes)
	for m != nil && err == nil {
		if m.Length > 0 {
			f(offs[m.Index], offs[m.Index+m.Length])
		}
		m, err = r.re.FindNextMatch(m)
	}
}

func compileRegex(expr, place string) (matcher, error) {
	re, err := regexp2.Compile(expr, regexp2.None)
	if err != nil {
		return nil, errorf(CodeUnsupported, place, err, "regex %q", expr)
	}
	re.MatchTimeout = regexTimeout
	return regexMatcher{re}, nil
}

func buildPattern(raw json.RawMessage, place string) (matcher, error) {
	var p pattern
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, errorf(CodeSyntax, place, err, "pattern")
	}
	switch {
	case p.String != nil:
		return literalMatcher(*p.String), nil
	case p.Regex != nil && *p.Regex == llama3Regex:
		return llamaSplit{maxDigits: 3}, nil
	case p.Regex != nil && *p.Regex == qwen2Regex:
		return llamaSplit{maxDigits: 1}, nil
	case p.Regex != nil:
		return compileRegex(*p.Regex, place)
	}
	return nil, errorf(CodeSyntax, place, nil, "pattern is neither String nor Regex")
}

// buildPreTokenizers flattens a pre-tokenizer section into a list and
// reports whether it includes ByteLevel (the model then works on bytes).
func buildPreTokenizers(c *component, place string) (out []preTokenizer, byteLevel bool, err error) {
	if c == nil {
		return nil, false, nil
	}
	switch c.Type {
	case "Sequence":
		for i := range c.Pretokenizers {
			ps, bl, err := buildPreTokenizers(&c.Pretokenizers[i], fmt.Sprintf("%s.pretokenizers[%d]", place, i))
			if err != nil {
				return nil, false, err
			}
			out = append(out, ps...)
			byteLevel = byteLevel || bl
		}
		return out, byteLevel, nil
	case "Split":
		m, err := buildPattern(c.Pattern, place+".pattern")
		if err != nil {
			return nil, false, err
		}
		p, err := splitter(m, c.Behavior, c.Invert, place)
		if err != nil {
			return nil, false, err
		}
		return []preTokenizer{p}, false, nil
	case "ByteLevel":
		addPrefix := c.AddPrefixSpace == nil || *c.AddPrefixSpace
		useRegex := c.UseRegex == nil || *c.UseRegex
		var split preTokenizer
		if useRegex {
			m, err := compileRegex(gpt2Regex, place)
			if err != nil {
				return nil, false, err
			}
			split, _ = splitter(m, "Isolated", false, place)
		}
		return []preTokenizer{func(piece string, atStart bool, out []string) []string {
			if addPrefix && !strings.HasPrefix(piece, " ") {
				piece = " " + piece
			}
			if split == nil {
				return append(out, piece)
			}
			return split(piece, atStart, out)
		}}, true, nil
	case "Metaspace":
		repl := c.Replacement
		if repl == "" {
			repl = "▁"
		}
		scheme := c.PrependScheme
		if scheme == "" {
			scheme = "always"
			if c.AddPrefixSpace != nil && !*c.AddPrefixSpace {
				scheme = "never"
			}
		}
		if scheme != "always" && scheme != "first" && scheme != "never" {
			return nil, false, unsupported(place, "Metaspace prepend_scheme "+scheme)
		}
		var split preTokenizer
		if c.Split == nil || *c.Split {
			split, _ = splitter(literalMatcher(repl), "MergedWithNext", false, place)
		}
		return []preTokenizer{func(piece string, atStart bool, out []string) []string {
			piece = strings.ReplaceAll(piece, " ", repl)
			if (scheme == "always" || scheme == "first" && atStart) && !strings.HasPrefix(piece, repl) {
				piece = repl + piece
			}
			if split == nil {
				return append(out, piece)
			}
			return split(piece, atStart, out)
		}}, false, nil
	}
	return nil, false, unsupported(place, "pre-tokenizer type "+c.Type)
}

type span struct {
	start, end int
	match      bool
}

// splitter makes a pre-tokenizer that splits on m's matches with one of
// HuggingFace's SplitDelimiterBehavior values.
func splitter(m matcher, behavior string, invert bool, place string) (preTokenizer, error) {
	switch behavior {
	case "Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous":
	default:
		return nil, unsupported(place, "split behavior "+behavior)
	}
	return func(piece string, _ bool, out []string) []string {
		var spans []span
		last := 0
		m.findAll(piece, func(start, end int) {
			if start > last {
				spans = append(spans, span{last, start, invert})
			}
			spans = append(spans, span{start, end, !invert})
			last = end
		})
		if last < len(piece) {
			spans = append(spans, span{last, len(piece), invert})
		}
		var merged []span
		switch behavior {
		case "Isolated":
			merged = spans
		case "Removed":
			for _, s := range spans {
				if !s.match {
					merged = append(merged, s)
				}
			}
		case "MergedWithPrevious":
			prevMatch := false
			for _, s := range spans {
				if s.match && !prevMatch && len(merged) > 0 {
					merged[len(merged)-1].end = s.end
				} else {
					merged = append(merged, s)
				}
				prevMatch = s.match
			}
		case "MergedWithNext":
			prevMatch := false
			for i := len(spans) - 1; i >= 0; i-- {
				s := spans[i]
				if s.match && !prevMatch && len(merged) > 0 {
					merged[len(merged)-1].start = s.start
				} else {
					merged = append(merged, s)
				}
				prevMatch = s.match
			}
			for i, j := 0, len(merged)-1; i < j; i, j = i+1, j-1 {
				merged[i], merged[j] = merged[j], merged[i]
			}
		case "Contiguous":
			prevMatch := false
			for _, s := range spans {
				if s.match == prevMatch && len(merged) > 0 {
					merged[len(merged)-1].end = s.end
				} else {
					merged = append(merged, s)
				}
				prevMatch = s.match
			}
		}
		for _, s := range merged {
			if s.end > s.start {
				out = append(out, piece[s.start:s.end])
			}
		}
		return out
	}, nil
}
