package grammar

import (
	"fmt"
	"regexp/syntax"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"conform/fsm"
)

// Formats are written as Go regexes over decoded characters (whole-string
// matches) and converted to the AST once. Each accepts a subset of its RFC
// syntax that every common validator accepts too (santhosh-tekuri/jsonschema
// is the reference in the tests); where the RFC allows more (leap seconds,
// lowercase t/z, quoted local parts, IPv6 with embedded IPv4, long
// hostnames) the subset says no, which keeps the output valid. The formats
// built from AST parts (email, idn-*, uri-template, regex) are in
// formatNode; the OpenAPI ones are in format_openapi.go, the URI family in
// format_uri.go, regex in format_regex.go, each with what it leaves out.
var formatRegexes = map[string]string{
	"date":      `(?:` + dateRe + `)`,
	"time":      timeRe,
	"date-time": `(?:` + dateRe + `)T` + timeRe,
	"duration":  `P(?:(?:[0-9]+D|[0-9]+M(?:[0-9]+D)?|[0-9]+Y(?:[0-9]+M(?:[0-9]+D)?)?)(?:` + durTime + `)?|` + durTime + `|[0-9]+W)`,
	"uuid":      `[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`,
	"ipv4":      ipv4Re,
	"ipv6":      ipv6Re,
	// hostname: at most 4 labels of at most 62 characters (≤ 251 in all,
	// under the 253 limit).
	"hostname": label62 + `(?:\.` + label62 + `){0,3}`,
	// email: built in formatNode: a dot-atom local part of at most 63
	// characters, then a hostname of at most 3 labels of at most 62
	// characters (≤ 254 in all).
	"email-local":  atext + `+(?:\.` + atext + `+)*`,
	"email-domain": label62 + `(?:\.` + label62 + `){0,2}`,
	// uri: scheme "://" host [":" port] path [? query] [# fragment], with
	// unreserved, sub-delim and percent-encoded characters only.
	"uri":                   uriChars.absolute(),
	"uri-reference":         uriChars.reference(),
	"iri":                   iriChars.absolute(),
	"iri-reference":         iriChars.reference(),
	"json-pointer":          jsonPointerRe,
	"relative-json-pointer": relJSONPointerRe,
	"byte":                  base64Re,
}

const (
	dateRe = `[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))` +
		`|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29`
	timeRe  = `(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?(?:Z|[+\-](?:[01][0-9]|2[0-3]):[0-5][0-9])`
	durTime = `T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S)`
	octet   = `(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])`
	ipv4Re  = octet + `(?:\.` + octet + `){3}`
	h16     = `[0-9a-fA-F]{1,4}`
	label62 = `[a-zA-Z0-9](?:[a-zA-Z0-9\-]{0,60}[a-zA-Z0-9])?`
	atext   = "[a-zA-Z0-9!#$%&'*+/=?^_`{|}~\\-]"
	ipv6Re  = `(?:` + h16 + `:){7}` + h16 +
		`|::(?:` + h16 + `:){0,5}` + h16 + `|::` +
		`|` + h16 + `::(?:` + h16 + `:){0,4}` + h16 + `|` + h16 + `::` +
		`|(?:` + h16 + `:){1}` + h16 + `::(?:` + h16 + `:){0,3}` + h16 + `|(?:` + h16 + `:){1}` + h16 + `::` +
		`|(?:` + h16 + `:){2}` + h16 + `::(?:` + h16 + `:){0,2}` + h16 + `|(?:` + h16 + `:){2}` + h16 + `::` +
		`|(?:` + h16 + `:){3}` + h16 + `::(?:` + h16 + `:){0,1}` + h16 + `|(?:` + h16 + `:){3}` + h16 + `::` +
		`|(?:` + h16 + `:){4}` + h16 + `::` + h16 + `|(?:` + h16 + `:){4}` + h16 + `::` +
		`|(?:` + h16 + `:){5}` + h16 + `::`
)

var (
	formatOnce  sync.Once
	formatNodes map[string]*fsm.Node
	formatErr   error
)

// formatNode returns the code-point language of a known format that
// constrains strings, or nil (unknown formats, and the formats of
// formatsWithoutStringConstraint).
func formatNode(name string) (*fsm.Node, error) {
	formatOnce.Do(func() { formatNodes, formatErr = buildFormats() })
	if formatErr != nil {
		return nil, formatErr
	}
	return formatNodes[name], nil
}

func buildFormats() (map[string]*fsm.Node, error) {
	nodes := map[string]*fsm.Node{}
	for k, src := range formatRegexes {
		n, err := regexNode(src)
		if err != nil {
			return nil, fmt.Errorf("format %s: %v", k, err)
		}
		nodes[k] = n
	}
	local := fsm.And(nodes["email-local"], fsm.Repeat(fsm.AnyRune(), 1, 63))
	nodes["email"] = fsm.Cat(local, fsm.Lit("@"), nodes["email-domain"])
	delete(nodes, "email-domain")
	idnHost, err := idnHostNode(4)
	if err != nil {
		return nil, fmt.Errorf("format idn-hostname: %v", err)
	}
	nodes["idn-hostname"] = idnHost
	idnDomain, err := idnHostNode(3)
	if err != nil {
		return nil, fmt.Errorf("format idn-email: %v", err)
	}
	nodes["idn-email"] = fsm.Cat(local, fsm.Lit("@"), idnDomain)
	delete(nodes, "email-local")
	if nodes["uri-template"], err = uriTemplateNode(); err != nil {
		return nil, fmt.Errorf("format uri-template: %v", err)
	}
	nodes["regex"] = regexFormatNode()
	// Draft-03 names for the same formats.
	nodes["host-name"] = nodes["hostname"]
	nodes["ip-address"] = nodes["ipv4"]
	return nodes, nil
}

// KnownFormats returns the sorted names of the formats CompileSchema
// enforces (or knows to place no constraint on strings); any other format
// name is an unknown-format error in strict mode.
func KnownFormats() []string {
	var names []string
	formatNode("") // builds formatNodes
	for k := range formatNodes {
		names = append(names, k)
	}
	for k := range formatsWithoutStringConstraint {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// regexNode converts a Go regex (whole-string match) to a code-point AST.
func regexNode(src string) (*fsm.Node, error) {
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return nil, err
	}
	return fromSyntax(re.Simplify())
}

// fromSyntax converts a parsed Go regex (the small subset our format
// regexes use) to a code-point-level AST that matches whole strings.
func fromSyntax(re *syntax.Regexp) (*fsm.Node, error) {
	subs := func() ([]*fsm.Node, error) {
		out := make([]*fsm.Node, len(re.Sub))
		for i, s := range re.Sub {
			n, err := fromSyntax(s)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	}
	switch re.Op {
	case syntax.OpEmptyMatch:
		return fsm.Empty(), nil
	case syntax.OpNoMatch:
		return fsm.NoMatch(), nil
	case syntax.OpLiteral:
		b := make([]byte, 0, len(re.Rune))
		for _, r := range re.Rune {
			b = utf8.AppendRune(b, r)
		}
		return fsm.LitBytes(b), nil
	case syntax.OpCharClass:
		var rs []fsm.RuneRange
		for i := 0; i+1 < len(re.Rune); i += 2 {
			rs = append(rs, fsm.RuneRange{Lo: re.Rune[i], Hi: re.Rune[i+1]})
		}
		return fsm.RuneClass(rs...), nil
	case syntax.OpAnyChar:
		return fsm.AnyRune(), nil
	case syntax.OpCapture:
		return fromSyntax(re.Sub[0])
	case syntax.OpConcat, syntax.OpAlternate:
		s, err := subs()
		if err != nil {
			return nil, err
		}
		if re.Op == syntax.OpConcat {
			return fsm.Cat(s...), nil
		}
		return fsm.Alt(s...), nil
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		s, err := fromSyntax(re.Sub[0])
		if err != nil {
			return nil, err
		}
		switch re.Op {
		case syntax.OpStar:
			return fsm.Star(s), nil
		case syntax.OpPlus:
			return fsm.Plus(s), nil
		case syntax.OpQuest:
			return fsm.Opt(s), nil
		}
		return fsm.Repeat(s, re.Min, re.Max), nil
	}
	return nil, fmt.Errorf("unsupported regex operator %v", re.Op)
}

// format returns the code-point language of a format keyword, nil when it
// places no constraint on strings (int32, binary, ...) or is ignored
// (lenient mode, unknown format).
func (c *compiler) format(f kw) (*fsm.Node, error) {
	if !formatConstrainsStrings(f.s) {
		return nil, nil
	}
	n, err := formatNode(f.s)
	if err != nil {
		return nil, errorf(CodeBadPattern, f.ptr, "format", "%v", err)
	}
	if n == nil {
		msg := fmt.Sprintf("unknown format %q; known: %s", f.s, strings.Join(KnownFormats(), ", "))
		if c.opts.Strictness == Lenient {
			c.warn(Warning{Keyword: "format", Pointer: f.ptr, Message: msg})
			return nil, nil
		}
		return nil, errorf(CodeUnknownFormat, f.ptr, "format", "%s", msg)
	}
	return n, nil
}
