package grammar

import (
	"math/rand/v2"
	"testing"

	"conform/fsm"
)

// TestFormatEnvelopes checks each envelope: it compiles, it contains the
// format's own language (the subset we enforce), and it contains every
// string santhosh-tekuri/jsonschema accepts for the format among the
// examples below and random mutations of them (the envelope's
// soundness: excluding it never excludes a string of the format).
func TestFormatEnvelopes(t *testing.T) {
	examples := map[string][]string{
		"date":                  {"2024-02-29", "0000-01-01", "1999-12-31"},
		"date-time":             {"2024-01-02T03:04:05Z", "2024-01-02t03:04:05.123+01:00", "1990-12-31T23:59:60Z"},
		"time":                  {"03:04:05Z", "23:59:60+01:00", "+1:+2:+3Z", "12:00:00.5-05:00"},
		"uuid":                  {"123e4567-e89b-12d3-a456-426614174000", "ABCDEF01-2345-6789-ABCD-EF0123456789"},
		"ipv4":                  {"1.2.3.4", "255.255.255.255", "+1.2.3.4", "-0.0.0.0", "0.0.0.0"},
		"ipv6":                  {"::", "::1", "fe80::1", "1:2:3:4:5:6:7:8", "::ffff:1.2.3.4", "1::"},
		"hostname":              {"a", "a.b", "a-b.c.", "xn--bcher-kva.example", "1.2.3.4", "A9"},
		"email":                 {"a@b", "a.b@c.d", `"x y"@z`, "a@[1.2.3.4]", "a@[IPv6:::1]", "a+b@c-d.e"},
		"uri":                   {"a:b", "http://x", "urn:isbn:0451450523", "h+t.t-p://[::1]:80/p?q#f", "x:", "mailto:a@b"},
		"iri":                   {"a:b", "http://ü.example/π", "x:"},
		"json-pointer":          {"", "/", "/a~0b/c~1d", "//"},
		"relative-json-pointer": {"0", "1#", "0/a", "12/b~0"},
	}
	for name := range formatEnvelopes {
		t.Run(name, func(t *testing.T) {
			env := formatEnvelope(name)
			if env == nil {
				t.Fatalf("envelope of %s does not compile: %s", name, formatEnvelopes[name])
			}
			d, err := fsm.Compile(env, fsm.Options{})
			if err != nil {
				t.Fatal(err)
			}
			fn, err := formatNode(name)
			if err != nil || fn == nil {
				t.Fatalf("formatNode(%s) = %v, %v", name, fn, err)
			}
			if empty, err := fsm.IsEmpty(fsm.And(fn, fsm.Not(env)), fsm.Options{}); err != nil || !empty {
				t.Errorf("the enforced language of %s is not inside its envelope (empty %v, err %v)", name, empty, err)
			}
			ex := examples[name]
			if len(ex) == 0 {
				t.Fatalf("no examples for %s", name)
			}
			rng := rand.New(rand.NewPCG(uint64(len(name)), 16))
			const alphabet = "aZ09.:-+/@[]%_~#?tT \x7fü"
			valid := 0
			for i := 0; i < 4000; i++ {
				s := []rune(ex[i%len(ex)])
				if i >= len(ex) {
					for m := rng.IntN(3); m >= 0; m-- {
						a := []rune(alphabet)
						switch p := rng.IntN(len(s) + 1); rng.IntN(3) {
						case 0:
							s = append(s[:p], append([]rune{a[rng.IntN(len(a))]}, s[p:]...)...)
						case 1:
							if p < len(s) {
								s = append(s[:p], s[p+1:]...)
							}
						default:
							if p < len(s) {
								s[p] = a[rng.IntN(len(a))]
							}
						}
					}
				}
				if validateFormat(name, string(s)) != nil {
					continue
				}
				valid++
				if !fsm.Matches(d, []byte(string(s))) {
					t.Errorf("%s accepts %q, which is outside its envelope %s", name, string(s), formatEnvelopes[name])
				}
			}
			if valid < len(ex) {
				t.Errorf("only %d valid strings checked for %s", valid, name)
			}
		})
	}
}
