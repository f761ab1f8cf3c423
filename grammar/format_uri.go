package grammar

import "conform/fsm"

// The URI family (RFC 3986 and 3987), URI templates (RFC 6570) and JSON
// Pointers (RFC 6901, draft-handrews-relative-json-pointer-01).
//
// The URI languages must be subsets of two things: the RFC syntax, and what
// the reference validators accept. santhosh-tekuri/jsonschema checks uri,
// iri, uri-reference, iri-reference and uri-template with Go's url.Parse,
// which rejects some RFC-valid references (percent-encoded ASCII in a host,
// a colon in a host other than the port's, "//" authorities it cannot
// parse). So hosts are the conservative uriHost (letters, digits, '-' and
// '.'; for IRIs also the RFC 3987 ucschar), there is no userinfo and no
// IP-literal, and a relative reference either starts with "//" and an
// authority, starts with "/" and a non-empty segment, or has no colon in
// its first segment (RFC 3986 §4.2 path-noscheme; Go enforces the same).
// An empty host is allowed before an absolute path ("file:///x").
// Under-approximated: userinfo, IP-literals ([v6]), percent-encoded or
// sub-delim characters in hosts, rootless URIs such as "mailto:a@b" and
// "urn:x:y" (uri, iri), and "scheme:/path" without an authority.

const (
	uriScheme = `[a-zA-Z][a-zA-Z0-9+.\-]*`
	uriPort   = `(?::[0-9]{1,5})?`
	pctEnc    = `%[0-9a-fA-F]{2}`
	// ucschar and iprivate are RFC 3987's non-ASCII additions to
	// unreserved characters (everywhere) and to queries (only).
	ucschar = `\x{A0}-\x{D7FF}\x{F900}-\x{FDCF}\x{FDF0}-\x{FFEF}\x{10000}-\x{1FFFD}\x{20000}-\x{2FFFD}\x{30000}-\x{3FFFD}` +
		`\x{40000}-\x{4FFFD}\x{50000}-\x{5FFFD}\x{60000}-\x{6FFFD}\x{70000}-\x{7FFFD}\x{80000}-\x{8FFFD}\x{90000}-\x{9FFFD}` +
		`\x{A0000}-\x{AFFFD}\x{B0000}-\x{BFFFD}\x{C0000}-\x{CFFFD}\x{D0000}-\x{DFFFD}\x{E1000}-\x{EFFFD}`
	iprivate = `\x{E000}-\x{F8FF}\x{F0000}-\x{FFFFD}\x{100000}-\x{10FFFD}`
)

// uriSyntax holds the character sets one member of the URI family is built
// from (the URI and IRI members differ only in these).
type uriSyntax struct {
	pchar  string // a path character: unreserved, sub-delims, ':' '@', or pct-encoded
	pcharN string // pchar without ':' (the first segment of a relative path)
	host   string // a host (reg-name subset)
	query  string // a query or fragment character, '/' and '?' included
}

func newURISyntax(extra, queryExtra string) uriSyntax {
	un := `a-zA-Z0-9\-._~!$&'()*+,;=@` + extra
	return uriSyntax{
		pchar:  `(?:[` + un + `:]|` + pctEnc + `)`,
		pcharN: `(?:[` + un + `]|` + pctEnc + `)`,
		host:   `[a-zA-Z0-9` + extra + `](?:[a-zA-Z0-9\-.` + extra + `]*[a-zA-Z0-9` + extra + `])?`,
		query:  `(?:[` + un + `:/?` + queryExtra + `]|` + pctEnc + `)`,
	}
}

var (
	uriChars = newURISyntax("", "")
	iriChars = newURISyntax(ucschar, iprivate)
)

// absolute is scheme "://" host [":" port] path-abempty [? query] [#
// fragment], or scheme ":///" and an absolute path (an empty host, as in
// "file:///etc/hosts").
func (u uriSyntax) absolute() string {
	return uriScheme + `://(?:` + u.host + uriPort + u.pathAbempty() + `|` + u.emptyHostPath() + `)` + u.tail()
}

// emptyHostPath is an empty authority followed by a non-empty absolute
// path: "/" and segments.
func (u uriSyntax) emptyHostPath() string { return `(?:/` + u.pchar + `*)+` }

// reference is an absolute URI or a relative reference (RFC 3986 §4.1):
// [[scheme ":"] "//" authority] path-abempty, path-absolute ("/" alone or
// "/" and a non-empty segment), path-noscheme or path-empty, then the
// query and fragment. The alternatives share one path and one tail, which
// keeps the automaton about as small as uri's.
func (u uriSyntax) reference() string {
	return `(?:(?:(?:` + uriScheme + `:)?//` + u.host + uriPort + `|/` + u.pchar + `+|` + u.pcharN + `+)` + u.pathAbempty() + `|` + uriScheme + `://` + u.emptyHostPath() + `|/)?` + u.tail()
}

func (u uriSyntax) pathAbempty() string { return `(?:/` + u.pchar + `*)*` }

func (u uriSyntax) tail() string {
	return `(?:\?` + u.query + `*)?(?:#` + u.query + `*)?`
}

// JSON Pointer: exact. Any character but '/' and '~' stands for itself;
// '~' only as ~0 or ~1. A relative JSON pointer is a non-negative integer
// (no leading zeros) followed by '#' or a JSON pointer; the index
// manipulation of the 2020-12 draft ("0+1") is not produced, since
// santhosh-tekuri/jsonschema follows draft-01 and rejects it.
const (
	jsonPointerRe    = `(?:/(?:[^/~]|~[01])*)*`
	relJSONPointerRe = `(?:0|[1-9][0-9]*)(?:#|` + jsonPointerRe + `)`
)

// uriTemplateNode is RFC 6570's URI-Template, restricted to what Go's
// url.Parse and santhosh-tekuri/jsonschema's brace check accept:
//   - the template is either scheme "://" host [":" port] followed by
//     nothing or by '/', '?' or '#' (Go parses the authority, so no
//     expression may appear in it), or it does not start with "//" and has
//     no ':' before its first '/', '?' or '#' (else Go sees a scheme or
//     rejects a colon in the first segment);
//   - the operators '/', '?' and '#' are not produced: Go cuts the string at
//     the first '?' and '#' and the validator requires the braces of each
//     path segment to balance, so "{?q}" and "{/p}" fail there;
//   - the reserved operators = , ! @ | are not produced (RFC 6570 §2.2 says
//     processors should reject them);
//   - %7B and %7D are not produced (the validator decodes them to braces).
//
// Under-approximated: everything listed above, templates with a userinfo
// or an IP-literal authority.
func uriTemplateNode() (*fsm.Node, error) {
	pct := `%(?:[0-689a-fA-F][0-9a-fA-F]|7[0-9aceACEF])`
	literal := `(?:[\x21\x23\x24\x26\x28-\x3B\x3D\x3F-\x5B\x5D\x5F\x61-\x7A\x7E` + ucschar + iprivate + `]|` + pct + `)`
	varchar := `(?:[A-Za-z0-9_]|` + pct + `)`
	varname := varchar + `(?:\.?` + varchar + `)*`
	varspec := varname + `(?::[1-9][0-9]{0,3}|\*)?`
	expr := `\{[+.;&]?` + varspec + `(?:,` + varspec + `)*\}`
	tmpl, err := regexNode(`(?:` + literal + `|` + expr + `)*`)
	if err != nil {
		return nil, err
	}
	withAuthority := uriScheme + `://` + uriChars.host + uriPort + `(?:[/?#](?s:.*))?`
	relative := `[^:/?#]+(?:[/?#](?s:.*))?|[?#](?s:.*)|/(?:[^/](?s:.*))?|`
	ok, err := regexNode(withAuthority + `|` + relative)
	if err != nil {
		return nil, err
	}
	return fsm.And(tmpl, ok), nil
}
