package fsm

import (
	"fmt"
	"strings"
	"testing"
)

// Realistic constraint regexes, in the shapes grammar/ emits.
const (
	jsonString  = `"(?:[^"\\\x{0}-\x{1F}]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"`
	jsonInt     = `-?(?:0|[1-9][0-9]*)`
	jsonNumber  = `-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?`
	jsonBool    = `true|false`
	ws          = `[ \t\n\r]{0,4}`
	dateTimeRe  = `[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])[Tt](?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])`
	blowupRe    = `[ab]*a[ab]{12}`
	boundedRe   = `"(?:[^"\\\x{0}-\x{1F}]|\\["\\/bfnrt]){0,256}"`
	emailLikeRe = `[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}`
)

// objectRe is a JSON object with n properties of mixed types, every third
// one optional, as a regex string (the textual form grammar/ would print).
func objectNode(tb testing.TB, n int) *Node {
	values := []string{jsonString, jsonInt, jsonNumber, jsonBool, dateTimeRe}
	W := mustParse(tb, ws)
	first, after := Empty(), Empty()
	for i := n - 1; i >= 0; i-- {
		v := mustParse(tb, values[i%len(values)])
		if i%len(values) == 4 {
			v = Cat(Lit(`"`), v, Lit(`"`))
		}
		kv := Cat(Lit(fmt.Sprintf(`"property_%d"`, i)), W, Lit(":"), W, v)
		comma := Cat(W, Lit(","), W, kv)
		if i%3 == 2 { // optional
			first, after = Alt(Cat(kv, after), first), Cat(Opt(comma), after)
		} else {
			first, after = Cat(kv, after), Cat(comma, after)
		}
	}
	return Cat(Lit("{"), W, first, W, Lit("}"))
}

func enumNode(tb testing.TB, n int) *Node {
	var alts []string
	for i := range n {
		alts = append(alts, fmt.Sprintf(`"value_%d_%s"`, i, strings.Repeat("x", i%7)))
	}
	return mustParse(tb, strings.Join(alts, "|"))
}

func BenchmarkCompile(b *testing.B) {
	cases := []struct {
		name string
		n    *Node
	}{
		{"object10", objectNode(b, 10)},
		{"object50", objectNode(b, 50)},
		{"datetime", mustParse(b, dateTimeRe)},
		{"enum1000", enumNode(b, 1000)},
		{"string256", mustParse(b, boundedRe)},
		{"email", mustParse(b, emailLikeRe)},
		{"blowup12", mustParse(b, blowupRe)},
		{"optional200", optionalObject(200)},
		{"pattern-and-length", And(mustParse(b, `"[a-z0-9_]*"`), mustParse(b, `"[^"]{3,40}"`))},
	}
	for _, c := range cases {
		d, err := Compile(c.n, Options{})
		if err != nil {
			b.Fatalf("Compile(%s) error: %v", c.name, err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Compile(c.n, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(d.NumStates()), "states")
			b.ReportMetric(float64(d.NumClasses), "classes")
		})
	}
}

func BenchmarkParse(b *testing.B) {
	for _, c := range []struct{ name, re string }{
		{"datetime", dateTimeRe},
		{"string", jsonString},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Parse(c.re); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
