package tokenizer

// A hand-written matcher for the pre-tokenizer pattern of Llama-3 and
// cl100k_base, and its Qwen2 variant:
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// (Qwen2 has \p{N} where Llama-3 has \p{N}{1,3}.) regexp2 runs it at about
// 1 µs per byte, which made it 85% of Encode's time; this matcher gives the
// same matches in a single forward scan. It is used only when a
// tokenizer.json's Split regex is exactly one of these strings, and a
// differential fuzz test (FuzzLlamaSplit) holds it to regexp2's results.
//
// The alternatives are tried in order at each position, as a backtracking
// engine does, and each one's backtracking is worked out by hand:
//
//   - [^\r\n\p{L}\p{N}]?\p{L}+ matches a letter run, optionally preceded
//     by one character that is neither CR, LF, letter nor number.
//   - ` ?[^\s\p{L}\p{N}]+[\r\n]*` needs at least one "other" character;
//     when the space is present but no "other" follows, dropping the space
//     cannot help (the space is not "other").
//   - \s*[\r\n]+ matches the whitespace run up to and including its last
//     CR or LF (the \s* backs off until [\r\n]+ can match).
//   - \s+(?!\S) matches the whole whitespace run at the end of the text,
//     and otherwise the run minus its last character (which then starts
//     the next piece, usually " word"); \s+ takes a lone space before a
//     non-space.
//
// Character classes are those of regexp2: \s is unicode.IsSpace, \p{L} is
// unicode.IsLetter, \p{N} is unicode.IsNumber, and (?i) compares
// unicode.ToLower of the input. An invalid UTF-8 byte is one U+FFFD, an
// "other" character.

import (
	"unicode"
	"unicode/utf8"
)

// llamaSplit is the matcher; maxDigits is 3 for Llama-3 and 1 for Qwen2.
type llamaSplit struct{ maxDigits int }

func (m llamaSplit) findAll(s string, f func(start, end int)) {
	for i := 0; i < len(s); {
		end := m.matchAt(s, i)
		if end <= i {
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w // unreachable with this pattern: every character starts a match
			continue
		}
		f(i, end)
		i = end
	}
}

func isCRLF(r rune) bool { return r == '\r' || r == '\n' }

// isOther reports whether r is in [^\s\p{L}\p{N}].
func isOther(r rune) bool { return !unicode.IsSpace(r) && !unicode.IsLetter(r) && !unicode.IsNumber(r) }

// matchAt returns the end of the match starting at s[i], or -1.
func (m llamaSplit) matchAt(s string, i int) int {
	r0, w0 := utf8.DecodeRuneInString(s[i:])
	// (?i:'s|'t|'re|'ve|'m|'ll|'d)
	if r0 == '\'' && i+w0 < len(s) {
		r1, w1 := utf8.DecodeRuneInString(s[i+w0:])
		switch unicode.ToLower(r1) {
		case 's', 't', 'm', 'd':
			return i + w0 + w1
		case 'r', 'v', 'l':
			if j := i + w0 + w1; j < len(s) {
				r2, w2 := utf8.DecodeRuneInString(s[j:])
				l1, l2 := unicode.ToLower(r1), unicode.ToLower(r2)
				if l2 == 'e' && (l1 == 'r' || l1 == 'v') || l1 == 'l' && l2 == 'l' {
					return j + w2
				}
			}
		}
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if unicode.IsLetter(r0) {
		return scanLetters(s, i)
	}
	if !isCRLF(r0) && !unicode.IsNumber(r0) && i+w0 < len(s) {
		if r1, _ := utf8.DecodeRuneInString(s[i+w0:]); unicode.IsLetter(r1) {
			return scanLetters(s, i+w0)
		}
	}
	// \p{N}{1,n}
	if unicode.IsNumber(r0) {
		j := i
		for k := 0; k < m.maxDigits && j < len(s); k++ {
			r, w := utf8.DecodeRuneInString(s[j:])
			if !unicode.IsNumber(r) {
				break
			}
			j += w
		}
		return j
	}
	// ` ?[^\s\p{L}\p{N}]+[\r\n]*`
	j := i
	if r0 == ' ' {
		j++
	}
	k := j
	for k < len(s) {
		r, w := utf8.DecodeRuneInString(s[k:])
		if !isOther(r) {
			break
		}
		k += w
	}
	if k > j {
		for k < len(s) && isCRLF(rune(s[k])) {
			k++
		}
		return k
	}
	if !unicode.IsSpace(r0) {
		return -1
	}
	// \s*[\r\n]+ | \s+(?!\S) | \s+ over the whitespace run s[i:end].
	end, lastNL := i, -1
	for end < len(s) {
		r, w := utf8.DecodeRuneInString(s[end:])
		if !unicode.IsSpace(r) {
			break
		}
		if isCRLF(r) {
			lastNL = end
		}
		end += w
	}
	if lastNL >= 0 {
		return lastNL + 1
	}
	if end == len(s) {
		return end
	}
	if _, wl := utf8.DecodeLastRuneInString(s[i:end]); end-wl > i {
		return end - wl
	}
	return end
}

// scanLetters returns the end of the letter run starting at s[j].
func scanLetters(s string, j int) int {
	for j < len(s) {
		if c := s[j]; c < utf8.RuneSelf {
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
				break
			}
			j++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[j:])
		if !unicode.IsLetter(r) {
			break
		}
		j += w
	}
	return j
}
