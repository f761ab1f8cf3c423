package grammar

import "conform/fsm"

// idn-hostname (RFC 5890) and idn-email (RFC 6531). santhosh-tekuri/jsonschema
// does not check these, so the rule is the RFCs alone. An ASCII host name
// is a valid IDNA2008 name when each label is an NR-LDH label: an LDH
// label without "--" in its third and fourth characters (such labels are
// reserved, and "xn--" ones must be valid Punycode, RFC 5890 §2.3.1). So
// idn-hostname is the hostname language with those labels left out, and
// idn-email is email whose domain is such a name.
//
// Under-approximated: every U-label (non-ASCII) and A-label ("xn--"), and,
// for idn-email, the UTF-8 local parts of RFC 6532 and everything email
// leaves out (quoted local parts, IP-literal domains).

// idnLabel is a hostname label of at most 62 characters (see hostname)
// without "--" in positions 3 and 4.
func idnLabel() (*fsm.Node, error) {
	l, err := regexNode(label62)
	if err != nil {
		return nil, err
	}
	a := fsm.AnyRune()
	reserved := fsm.Cat(a, a, fsm.Lit("--"), fsm.Star(a))
	return fsm.And(l, fsm.Not(reserved)), nil
}

// idnHostNode is at most labels labels joined by dots.
func idnHostNode(labels int) (*fsm.Node, error) {
	l, err := idnLabel()
	if err != nil {
		return nil, err
	}
	return fsm.Cat(l, fsm.Repeat(fsm.Cat(fsm.Lit("."), l), 0, labels-1)), nil
}
