package grammar

import (
	"github.com/dlclark/regexp2"

	"conform/fsm"
)

// pattern returns the code-point language of a pattern keyword: the decoded
// strings in which the ECMA-262 regex finds a match (JSON Schema's search
// semantics; fsm.ParsePattern adds the .* wrappers where ^/$ do not anchor).
func (c *compiler) pattern(p kw) (*fsm.Node, error) {
	if n, ok := c.patterns[p.s]; ok {
		return n, nil
	}
	n, err := parsePattern(p.s)
	if err != nil {
		// Lenient mode drops only what it cannot enforce: a construct
		// fsm refuses in a pattern that is valid ECMA-262. A pattern
		// that is not a regex at all ("(") is an invalid schema in
		// every mode, as any validator would say.
		if c.opts.Strictness == Lenient && validECMAPattern(p.s) {
			c.warn(Warning{Keyword: "pattern", Pointer: p.ptr, Message: err.Error()})
			return nil, nil
		}
		return nil, errorf(CodeBadPattern, p.ptr, "pattern", "pattern %q: %v", p.s, err)
	}
	if c.patterns == nil {
		c.patterns = map[string]*fsm.Node{}
	}
	c.patterns[p.s] = n
	return n, nil
}

// patternMatches reports whether the pattern finds a match in s.
func (c *compiler) patternMatches(p kw, s string) (bool, error) {
	n, err := c.pattern(p)
	if err != nil || n == nil {
		return false, err
	}
	d, ok := c.patternDFAs[p.s]
	if !ok {
		d, err = fsm.Compile(n, fsm.Options{MaxDFAStates: 20_000})
		if err != nil {
			return false, errorf(CodeTooLarge, p.ptr, "patternProperties", "pattern %q: %v", p.s, err)
		}
		if c.patternDFAs == nil {
			c.patternDFAs = map[string]*fsm.DFA{}
		}
		c.patternDFAs[p.s] = d
	}
	return fsm.Matches(d, []byte(s)), nil
}

// parsePattern reads a JSON Schema pattern (ECMA-262, search semantics).
func parsePattern(s string) (*fsm.Node, error) { return fsm.ParsePattern(s) }

// parseRegex reads a user-supplied regex constraint (Python re / RE2
// syntax, full match): fsm.ParseRegex, not the project dialect of
// fsm.Parse, so that '&' and '~' stay literal characters.
func parseRegex(s string) (*fsm.Node, error) { return fsm.ParseRegex(s) }

// validECMAPattern reports whether s is a valid ECMA-262 regular expression,
// as JSON Schema's pattern requires, by asking regexp2 in its ECMAScript
// mode (it parses the lookaround and backreferences that fsm refuses).
// Only parsing is asked of it, never matching, so its backtracking costs
// nothing here.
func validECMAPattern(s string) bool {
	_, err := regexp2.Compile(s, regexp2.ECMAScript)
	return err == nil
}
