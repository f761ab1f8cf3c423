package grammar

import (
	"sync"

	"conform/fsm"
)

// Format envelopes. A format is enforced as a subset of its syntax (see
// formatRegexes), which is sound where the format must hold and unsound
// where it must not: the complement of a subset takes in strings of the
// format. Where a format has to be excluded (not, a oneOf's other
// branches) or proven disjoint from another language, its envelope is
// used instead: a superset of every string a validator accepts for it,
// read off what the RFC grammar cannot do without (a URI has a scheme and
// a colon, an email an @, a hostname only letters, digits, hyphens and
// dots). Excluding an envelope is then a sound under-approximation of
// excluding the format, and two envelopes that share no string prove two
// formats disjoint.
//
// Each envelope is wider than the RFC where common validators are: ipv4
// and time admit signs (santhosh-tekuri/jsonschema reads the numbers with
// strconv.Atoi, which takes "+1"), hostname admits underscores and a
// trailing dot, date-time any separator and lowercase letters, uuid
// braces and a urn: prefix. Like the rest of this package they assume
// that formats are asserted. Only formats that validators assert have an
// envelope: the draft-03 names (host-name, ip-address) and the OpenAPI
// ones (byte) are ignored by validators of later drafts, so a string
// outside their syntax still satisfies them. A format without an envelope
// (those, uri-reference, regex, duration, the idn forms) cannot be
// excluded.
var formatEnvelopes = map[string]string{
	"date":                  `[0-9]{4}-[0-9]{2}-[0-9]{2}`,
	"date-time":             `[0-9]{4}-[0-9]{2}-[0-9]{2}[\s\S]+`,
	"time":                  `[0-9+\-]{2}:[0-9+\-]{2}:[0-9+\-]{2}[\s\S]*`,
	"uuid":                  `[0-9A-Za-z{}:\-]+`,
	"ipv4":                  `[0-9.+\-]+`,
	"ipv6":                  `[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*`,
	"hostname":              `[A-Za-z0-9._\-]+`,
	"email":                 `[^@]*@[\s\S]*`,
	"uri":                   `[A-Za-z][A-Za-z0-9+.\-]*:[\s\S]*`,
	"iri":                   `[A-Za-z][A-Za-z0-9+.\-]*:[\s\S]*`,
	"json-pointer":          `(?:/[\s\S]*)?`,
	"relative-json-pointer": `[0-9][\s\S]*`,
}

var (
	envelopeOnce  sync.Once
	envelopeNodes map[string]*fsm.Node
)

// formatEnvelope returns the code-point language of the envelope of
// format name, or nil when it has none.
func formatEnvelope(name string) *fsm.Node {
	envelopeOnce.Do(func() {
		envelopeNodes = map[string]*fsm.Node{}
		for k, src := range formatEnvelopes {
			// TestFormatEnvelopes checks that each one compiles; one
			// that did not would have no envelope.
			if n, err := regexNode(src); err == nil {
				envelopeNodes[k] = fsm.Pin(n)
			}
		}
	})
	return envelopeNodes[name]
}
