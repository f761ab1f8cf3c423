package templates

// The lexer follows jinja2 3.1's Lexer.tokeniter with the options
// transformers uses (trim_blocks, lstrip_blocks, keep_trailing_newline off):
//
//   - newlines (\r\n, \r) are normalised to \n and one trailing newline of
//     the source is dropped;
//   - data runs until the earliest "{{", "{%" or "{#";
//   - a "-" after the opening delimiter strips all whitespace before it; else,
//     unless "+" follows or the tag is "{{", lstrip_blocks removes the spaces
//     and tabs between the start of the line and the tag;
//   - "-%}", "-}}", "-#}" strip all whitespace after; "%}" and "#}" eat one
//     following newline (trim_blocks) unless written "+%}";
//   - inside a tag the end delimiter is recognised only while no bracket is
//     open (so "{{ {'a': {}} }}" lexes), exactly as jinja2's balancing stack.

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

type tokKind uint8

const (
	tokEOF tokKind = iota
	tokData
	tokVarBegin
	tokVarEnd
	tokBlockBegin
	tokBlockEnd
	tokName
	tokString
	tokInt
	tokFloat
	tokOp
)

type token struct {
	kind tokKind
	val  string // data text, name, decoded string, operator, number text
	line int
}

type lexer struct {
	src          string
	pos          int
	line         int
	toks         []token
	lineStarting bool
}

// maxTemplateSize bounds the template source length (real chat templates are
// under 20 KiB; GGUF files of hostile origin could hold anything).
const maxTemplateSize = 1 << 20

func lex(src string) ([]token, error) {
	if len(src) > maxTemplateSize {
		return nil, errorf(CodeSyntax, 0, "template is %d bytes, over the %d-byte limit", len(src), maxTemplateSize)
	}
	src = strings.ReplaceAll(src, "\r\n", "\n")
	src = strings.ReplaceAll(src, "\r", "\n")
	src = strings.TrimSuffix(src, "\n")
	lx := &lexer{src: src, line: 1, lineStarting: true}
	if err := lx.run(); err != nil {
		return nil, err
	}
	lx.toks = append(lx.toks, token{kind: tokEOF, line: lx.line})
	return lx.toks, nil
}

func (lx *lexer) emitData(s string, line int) {
	if s != "" {
		lx.toks = append(lx.toks, token{kind: tokData, val: s, line: line})
	}
}

// advance moves pos to p, counting lines.
func (lx *lexer) advance(p int) {
	lx.line += strings.Count(lx.src[lx.pos:p], "\n")
	lx.pos = p
}

func (lx *lexer) run() error {
	for lx.pos < len(lx.src) {
		rest := lx.src[lx.pos:]
		i := indexTagStart(rest)
		if i < 0 {
			lx.emitData(rest, lx.line)
			lx.advance(len(lx.src))
			return nil
		}
		text := rest[:i]
		kind := rest[i+1] // '{', '%' or '#'
		j := i + 2
		sign := byte(0)
		if j < len(rest) && (rest[j] == '-' || rest[j] == '+') {
			sign = rest[j]
		}
		// A raw block is recognised at a block start: {%[-+]? raw [-+]?%}.
		rawEnd := -1
		if kind == '%' {
			rawEnd = matchRawBegin(rest[i:])
		}
		switch {
		case sign == '-':
			text = strings.TrimRightFunc(text, pyIsSpace)
		case sign != '+' && kind != '{':
			lpos := strings.LastIndexByte(text, '\n') + 1
			if lpos > 0 || lx.lineStarting {
				tail := text[lpos:]
				if tail != "" && strings.TrimRightFunc(tail, pyIsSpace) == "" {
					text = text[:lpos]
				}
			}
		}
		line := lx.line
		lx.emitData(text, line)
		lx.advance(lx.pos + i)
		if rawEnd >= 0 {
			if err := lx.lexRaw(rawEnd); err != nil {
				return err
			}
			continue
		}
		p := lx.pos + 2
		if sign != 0 {
			p++
		}
		lx.advance(p)
		var err error
		switch kind {
		case '#':
			err = lx.lexComment()
		case '{':
			lx.toks = append(lx.toks, token{kind: tokVarBegin, line: lx.line})
			err = lx.lexTag(true)
		case '%':
			lx.toks = append(lx.toks, token{kind: tokBlockBegin, line: lx.line})
			err = lx.lexTag(false)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// indexTagStart finds the earliest "{{", "{%" or "{#".
func indexTagStart(s string) int {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '{' && (s[i+1] == '{' || s[i+1] == '%' || s[i+1] == '#') {
			return i
		}
	}
	return -1
}

// matchRawBegin matches "{%[-+]?\s*raw\s*[-+]?%}" at the start of s and
// returns its length, or -1.
func matchRawBegin(s string) int {
	p := 2
	if p < len(s) && (s[p] == '-' || s[p] == '+') {
		p++
	}
	p = skipSpace(s, p)
	if !strings.HasPrefix(s[p:], "raw") {
		return -1
	}
	p += 3
	p = skipSpace(s, p)
	if p < len(s) && (s[p] == '-' || s[p] == '+') {
		p++
	}
	if !strings.HasPrefix(s[p:], "%}") {
		return -1
	}
	return p + 2
}

func skipSpace(s string, p int) int {
	for p < len(s) {
		r, size := utf8.DecodeRuneInString(s[p:])
		if !pyIsSpace(r) {
			break
		}
		p += size
	}
	return p
}

// lexRaw handles {% raw %}…{% endraw %} starting at lx.pos; beginLen is
// the length of the opening tag.
func (lx *lexer) lexRaw(beginLen int) error {
	begin := lx.src[lx.pos : lx.pos+beginLen]
	startLine := lx.line
	body := lx.src[lx.pos+beginLen:]
	if strings.HasSuffix(begin, "-%}") {
		body = strings.TrimLeftFunc(body, pyIsSpace)
	} else if !strings.HasSuffix(begin, "+%}") {
		body = strings.TrimPrefix(body, "\n")
	}
	bodyStart := len(lx.src) - len(body)
	// Find {%[-+]?\s*endraw\s*[-+]?%}.
	for k := 0; k < len(body); k++ {
		if !strings.HasPrefix(body[k:], "{%") {
			continue
		}
		p := 2
		sign := byte(0)
		if p < len(body[k:]) && (body[k+p] == '-' || body[k+p] == '+') {
			sign = body[k+p]
			p++
		}
		p = skipSpace(body[k:], p)
		if !strings.HasPrefix(body[k+p:], "endraw") {
			continue
		}
		p = skipSpace(body[k:], p+6)
		endSign := byte(0)
		if p < len(body[k:]) && (body[k+p] == '-' || body[k+p] == '+') {
			endSign = body[k+p]
			p++
		}
		if !strings.HasPrefix(body[k+p:], "%}") {
			continue
		}
		p += 2
		text := body[:k]
		switch {
		case sign == '-':
			text = strings.TrimRightFunc(text, pyIsSpace)
		case sign != '+':
			lpos := strings.LastIndexByte(text, '\n') + 1
			tail := text[lpos:]
			if tail != "" && strings.TrimRightFunc(tail, pyIsSpace) == "" {
				text = text[:lpos]
			}
		}
		lx.emitData(text, startLine)
		end := bodyStart + k + p
		switch endSign {
		case '-':
			end = bodyStart + skipSpace(body, k+p)
		case '+':
		default:
			if end < len(lx.src) && lx.src[end] == '\n' {
				end++
			}
		}
		lx.advance(end)
		lx.lineStarting = lx.src[end-1] == '\n'
		return nil
	}
	return errorf(CodeSyntax, startLine, "Missing end of raw directive")
}

func (lx *lexer) lexComment() error {
	rest := lx.src[lx.pos:]
	k := strings.Index(rest, "#}")
	if k < 0 {
		return errorf(CodeSyntax, lx.line, "Missing end of comment tag")
	}
	end := k + 2
	switch {
	case k > 0 && rest[k-1] == '-':
		end = skipSpace(rest, end)
	case k > 0 && rest[k-1] == '+':
	default:
		if end < len(rest) && rest[end] == '\n' {
			end++
		}
	}
	lx.advance(lx.pos + end)
	lx.lineStarting = rest[end-1] == '\n'
	return nil
}

var operators = []string{
	"//", "**", "==", "!=", ">=", "<=",
	"+", "-", "/", "*", "%", "~", "[", "]", "(", ")", "{", "}", ">", "<", "=", ".", ":", "|", ",", ";",
}

// lexTag lexes the inside of a {{ }} (isVar) or {% %} tag including its end.
func (lx *lexer) lexTag(isVar bool) error {
	depth := 0
	startLine := lx.line
	for {
		lx.advance(skipSpace(lx.src, lx.pos))
		rest := lx.src[lx.pos:]
		if rest == "" {
			if isVar {
				return errorf(CodeSyntax, startLine, "unexpected end of template, expected end of print statement")
			}
			return errorf(CodeSyntax, startLine, "unexpected end of template, expected end of statement block")
		}
		if depth == 0 {
			if n, ok := lx.matchEnd(rest, isVar); ok {
				kind := tokBlockEnd
				if isVar {
					kind = tokVarEnd
				}
				lx.toks = append(lx.toks, token{kind: kind, line: lx.line})
				lx.advance(lx.pos + n)
				lx.lineStarting = rest[n-1] == '\n'
				return nil
			}
		}
		c := rest[0]
		switch {
		case c >= '0' && c <= '9':
			n, isFloat := scanNumber(rest)
			text := strings.ReplaceAll(rest[:n], "_", "")
			kind := tokInt
			if isFloat {
				kind = tokFloat
			}
			lx.toks = append(lx.toks, token{kind: kind, val: text, line: lx.line})
			lx.advance(lx.pos + n)
		case c == '_' || c >= 0x80 || unicode.IsLetter(rune(c)):
			n := 0
			for n < len(rest) {
				r, size := utf8.DecodeRuneInString(rest[n:])
				if r == '_' || unicode.IsLetter(r) || (n > 0 && unicode.IsDigit(r)) {
					n += size
					continue
				}
				break
			}
			if n == 0 {
				r, _ := utf8.DecodeRuneInString(rest)
				return errorf(CodeSyntax, lx.line, "unexpected char %q", r)
			}
			lx.toks = append(lx.toks, token{kind: tokName, val: rest[:n], line: lx.line})
			lx.advance(lx.pos + n)
		case c == '\'' || c == '"':
			n, s, err := scanString(rest)
			if err != nil {
				err.Line = lx.line
				return err
			}
			lx.toks = append(lx.toks, token{kind: tokString, val: s, line: lx.line})
			lx.advance(lx.pos + n)
		default:
			op := ""
			for _, o := range operators {
				if strings.HasPrefix(rest, o) {
					op = o
					break
				}
			}
			if op == "" {
				r, _ := utf8.DecodeRuneInString(rest)
				return errorf(CodeSyntax, lx.line, "unexpected char %q", r)
			}
			switch op {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				if depth == 0 {
					return errorf(CodeSyntax, lx.line, "unexpected '%s'", op)
				}
				depth--
			}
			lx.toks = append(lx.toks, token{kind: tokOp, val: op, line: lx.line})
			lx.advance(lx.pos + len(op))
		}
	}
}

// matchEnd matches the end delimiter of a tag at the start of rest and
// returns how many bytes it consumes (with the whitespace control applied).
func (lx *lexer) matchEnd(rest string, isVar bool) (int, bool) {
	closer := "%}"
	if isVar {
		closer = "}}"
	}
	switch {
	case strings.HasPrefix(rest, "-"+closer):
		return skipSpace(rest, 3), true
	case !isVar && strings.HasPrefix(rest, "+"+closer):
		return 3, true
	case strings.HasPrefix(rest, closer):
		if !isVar && len(rest) > 2 && rest[2] == '\n' {
			return 3, true
		}
		return 2, true
	}
	return 0, false
}

// scanNumber scans jinja2's integer or float literal at the start of s.
func scanNumber(s string) (n int, isFloat bool) {
	digits := func(p int) int {
		for p < len(s) && ((s[p] >= '0' && s[p] <= '9') || (s[p] == '_' && p+1 < len(s) && s[p+1] >= '0' && s[p+1] <= '9')) {
			p++
		}
		return p
	}
	n = digits(0)
	if n+1 < len(s) && s[n] == '.' && s[n+1] >= '0' && s[n+1] <= '9' {
		n = digits(n + 1)
		isFloat = true
	}
	if n < len(s) && (s[n] == 'e' || s[n] == 'E') {
		p := n + 1
		if p < len(s) && (s[p] == '+' || s[p] == '-') {
			p++
		}
		if p < len(s) && s[p] >= '0' && s[p] <= '9' {
			n = digits(p)
			isFloat = true
		}
	}
	return n, isFloat
}

// scanString scans a quoted literal and decodes it the way jinja2 does
// (Python's "unicode-escape" codec applied to the raw text).
func scanString(s string) (int, string, *Error) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); {
		c := s[i]
		if c == q {
			return i + 1, b.String(), nil
		}
		if c != '\\' {
			r, size := utf8.DecodeRuneInString(s[i:])
			b.WriteRune(r)
			i += size
			continue
		}
		if i+1 >= len(s) {
			break
		}
		e := s[i+1]
		i += 2
		switch e {
		case '\n':
		case '\\':
			b.WriteByte('\\')
		case '\'':
			b.WriteByte('\'')
		case '"':
			b.WriteByte('"')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i - 1
			for j < len(s) && j < i+2 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i-1:j], 8, 32)
			b.WriteRune(rune(v))
			i = j
		case 'x', 'u', 'U':
			width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if i+width > len(s) {
				return 0, "", errorf(CodeSyntax, 0, "truncated \\%cXX escape in string literal", e)
			}
			v, err := strconv.ParseUint(s[i:i+width], 16, 32)
			if err != nil || v > unicode.MaxRune {
				return 0, "", errorf(CodeSyntax, 0, "invalid \\%c escape in string literal", e)
			}
			b.WriteRune(rune(v))
			i += width
		default:
			b.WriteByte('\\')
			r, size := utf8.DecodeRuneInString(s[i-1:])
			b.WriteRune(r)
			i += size - 1
		}
	}
	return 0, "", errorf(CodeSyntax, 0, "unexpected end of string literal")
}
