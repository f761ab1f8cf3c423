package grammar

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/net/idna"

	"conform/fsm"
)

// formatCheckers are independent checks for formats, applied to decoded
// strings on top of santhosh-tekuri/jsonschema (which ignores byte, the
// idn formats and the draft-03 names, and checks regex with Go's regexp
// only).
var formatCheckers = map[string]func(string) error{
	"byte": func(s string) error {
		b, err := base64.StdEncoding.Strict().DecodeString(s)
		if err == nil && base64.StdEncoding.EncodeToString(b) != s {
			err = fmt.Errorf("not the canonical encoding")
		}
		return err
	},
	"idn-hostname": checkIDNHost,
	"idn-email": func(s string) error {
		at := strings.LastIndexByte(s, '@')
		if at < 0 {
			return fmt.Errorf("no @")
		}
		if err := validateFormat("email", s); err != nil {
			return err
		}
		return checkIDNHost(s[at+1:])
	},
	"host-name":  func(s string) error { return validateFormat("hostname", s) },
	"ip-address": func(s string) error { return validateFormat("ipv4", s) },
	"regex": func(s string) error {
		_, err := regexp2.Compile(s, regexp2.ECMAScript)
		return err
	},
}

// checkIDNHost applies IDNA2008 registration rules to each label (after
// lowercasing, which NR-LDH labels allow).
func checkIDNHost(s string) error {
	a, err := idna.Registration.ToASCII(strings.ToLower(s))
	if err != nil {
		return err
	}
	if a != strings.ToLower(s) {
		return fmt.Errorf("ToASCII(%q) = %q", s, a)
	}
	return nil
}

var validators = map[string]*jsonschema.Schema{}

// validateFormat validates the decoded string s against
// {"format": name} with format assertions on.
func validateFormat(name, s string) error {
	sch, ok := validators[name]
	if !ok {
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		if err := c.AddResource("f.json", map[string]any{"format": name}); err != nil {
			return err
		}
		var err error
		if sch, err = c.Compile("f.json"); err != nil {
			return err
		}
		validators[name] = sch
	}
	return sch.Validate(s)
}

// TestFormatRandomWalksValidate is the soundness property per format: the
// shortest string and random walks of {"type":"string","format":F}'s
// automaton decode to strings that santhosh-tekuri/jsonschema accepts with
// format assertions on, and that the independent checker (if any) accepts.
// For names the validator does not know (byte, idn-*), only the checker
// decides.
func TestFormatRandomWalksValidate(t *testing.T) {
	walks := 300
	if testing.Short() {
		walks = 60
	}
	for i, name := range KnownFormats() {
		t.Run(name, func(t *testing.T) {
			// The printable-ASCII variant makes walks rich in syntax
			// (groups, classes, expressions) instead of letters.
			for v, pattern := range []string{"", `^[ -~]*$`, `^[()|*+?{}0-9,:\\^$.\[\]a-c/%#-]*$`} {
				sch := map[string]any{"type": "string", "format": name}
				if pattern != "" {
					sch["pattern"] = pattern
				}
				schema, err := json.Marshal(sch)
				if err != nil {
					t.Fatal(err)
				}
				res, err := CompileSchema(schema, Options{Escapes: Escapes(v % 2)})
				if err != nil {
					t.Fatalf("CompileSchema(%s) error: %v", schema, err)
				}
				d, err := fsm.Compile(res.Node, fsm.Options{})
				if err != nil {
					t.Fatalf("fsm.Compile(%s) error: %v", schema, err)
				}
				rng := rand.New(rand.NewPCG(uint64(i), uint64(v)))
				s, ok := fsm.ShortestMatch(d)
				if !ok {
					if pattern != "" {
						continue // e.g. no byte string is made of those characters
					}
					t.Fatalf("format %s: empty language", name)
				}
				checkFormatInstance(t, name, s)
				for range walks {
					w := fsm.RandomWalk(d, rng, 1+rng.IntN(160))
					if w != nil && fsm.Matches(d, w) {
						checkFormatInstance(t, name, w)
					}
				}
			}
		})
	}
}

func checkFormatInstance(t *testing.T, name string, text []byte) {
	t.Helper()
	var s string
	if err := json.Unmarshal(text, &s); err != nil {
		t.Errorf("format %s: accepted %s, which is not a JSON string: %v", name, text, err)
		return
	}
	if err := validateFormat(name, s); err != nil {
		t.Errorf("format %s: accepted %s, which does not validate: %v", name, text, err)
	}
	if chk := formatCheckers[name]; chk != nil {
		if err := chk(s); err != nil {
			t.Errorf("format %s: accepted %s, which the independent check rejects: %v", name, text, err)
		}
	}
}

// TestIntFormatWalks: every integer and number a random walk of int32/int64
// produces lies in the format's range.
func TestIntFormatWalks(t *testing.T) {
	for _, tt := range []struct {
		format, typ string
		bits        uint
	}{{"int32", "integer", 31}, {"int64", "integer", 63}, {"int32", "number", 31}, {"int64", "number", 63}} {
		schema := `{"type":"` + tt.typ + `","format":"` + tt.format + `"}`
		res, err := CompileSchema([]byte(schema), Options{})
		if err != nil {
			t.Fatalf("CompileSchema(%s) error: %v", schema, err)
		}
		d, err := fsm.Compile(res.Node, fsm.Options{})
		if err != nil {
			t.Fatalf("fsm.Compile(%s) error: %v", schema, err)
		}
		p := new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), tt.bits))
		lo, hi := new(big.Rat).Neg(p), new(big.Rat).Sub(p, big.NewRat(1, 1))
		rng := rand.New(rand.NewPCG(uint64(tt.bits), 1))
		for range 300 {
			w := fsm.RandomWalk(d, rng, 1+rng.IntN(30))
			if w == nil || !fsm.Matches(d, w) {
				continue
			}
			dec := json.NewDecoder(bytes.NewReader(w))
			dec.UseNumber()
			var n json.Number
			if err := dec.Decode(&n); err != nil {
				t.Errorf("schema %s: accepted %s, not a number: %v", schema, w, err)
				continue
			}
			q, ok := new(big.Rat).SetString(n.String())
			if !ok || q.Cmp(lo) < 0 || q.Cmp(hi) > 0 || (tt.typ == "integer" && !q.IsInt()) {
				t.Errorf("schema %s: accepted %s, outside [%s, %s]", schema, w, lo.RatString(), hi.RatString())
			}
		}
	}
}

// TestFormatOraclesReject makes sure the checks above can fail: each
// rejects a string that is invalid for its format.
func TestFormatOraclesReject(t *testing.T) {
	for _, tt := range []struct{ format, s string }{
		{"uri-reference", ":x"}, {"iri", "/relative"}, {"iri-reference", "1:x"}, {"uri-template", "{x}:y"},
		{"uri-template", "/a{?q}"}, {"json-pointer", "a"}, {"relative-json-pointer", "01"}, {"regex", "("},
		{"byte", "A"}, {"byte", "AB=="}, {"host-name", "-a"}, {"ip-address", "1.2.3"}, {"idn-hostname", "ab--c"}, {"idn-email", "a@ab--c"}, {"idn-email", "a..b@c"},
	} {
		err := validateFormat(tt.format, tt.s)
		if chk := formatCheckers[tt.format]; err == nil && chk != nil {
			err = chk(tt.s)
		}
		if err == nil {
			t.Errorf("format %s: checks accept %q, want a rejection", tt.format, tt.s)
		}
	}
}
