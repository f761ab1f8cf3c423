package grammar

import (
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
		if c.opts.Strictness == Lenient {
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
