package fsm

import (
	"testing"
	"time"
)

func fuzzSeeds(f *testing.F) {
	for _, tt := range parseTests {
		f.Add(tt.in)
	}
	for _, tt := range invalidTests {
		f.Add(tt.in)
	}
	for _, tt := range patternTests {
		f.Add(tt.pattern)
	}
	for _, tt := range printTests {
		f.Add(tt.str)
	}
	for _, tt := range dfaTests {
		f.Add(tt.re)
	}
	f.Add(`[ab]*a[ab]{20}`)
	f.Add(`(?:a|b)*~(.*ab.*)&[a-z]{3,}`)
	f.Add(`\{(?perm( ?, ?)([a-z]+:[0-9])(a:1)!(bb:[0-9]+)(c:(?:x|y)*))\}`)
	f.Add(`-?(?mod{7:0})&(?:0|[1-9][0-9]*)`)
	f.Add(`(?mod{12:1,5-7,11})x|~((?mod{3:0}))`)
	for _, tt := range assertPatterns {
		f.Add(tt.pattern)
	}
}

// fuzzOptions are the small budgets the compile fuzzers run under.
func fuzzOptions() Options {
	return Options{MaxNFAStates: 20000, MaxDFAStates: 2000, MaxWork: 200000, MaxRepeat: 200, Timeout: 5 * time.Second}
}

// fuzzCompile parses s in the project dialect and compiles it under
// fuzzOptions; ok is false when s does not parse.
func fuzzCompile(s string) (n *Node, d *DFA, ok bool, err error) {
	if n, err = Parse(s); err != nil {
		return nil, nil, false, nil
	}
	d, err = Compile(n, fuzzOptions())
	return n, d, true, err
}

// FuzzParse: no parser panics; every error is an *Error; every result
// prints in the project dialect and round-trips; ParsePattern results
// hold only literals of valid UTF-8, rune classes and structure.
func FuzzParse(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		for _, m := range []mode{modeProject, modePython, modeECMA} {
			n, err := parse(s, m)
			if err != nil {
				if _, ok := errCode(err); !ok {
					t.Fatalf("parse(%q, %d) error %v is not an *Error", s, m, err)
				}
				continue
			}
			if m == modeECMA {
				checkNoBytes(t, s, n)
			}
			str := n.String()
			if len(str) > maxPrintLen {
				continue
			}
			n2, err := Parse(str)
			if err != nil {
				t.Fatalf("Parse(%q) [printed from parse(%q, %d)] error: %v", str, s, m, err)
			}
			if got := n2.String(); got != str {
				t.Fatalf("Parse(%q).String() = %q, want the same [from parse(%q, %d)]", str, got, s, m)
			}
		}
	})
}

// FuzzCompile: compiling any parsable regex under small budgets never
// panics, fails only with *Error (limit errors carry size > limit), and a
// result satisfies the DFA invariants and accepts its own shortest match
// and random walks.
func FuzzCompile(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		n, d, ok, err := fuzzCompile(s)
		if !ok {
			return
		}
		opts := fuzzOptions()
		if err != nil {
			var e *Error
			code, ok := errCode(err)
			if !ok {
				t.Fatalf("Compile(%q) error %v is not an *Error", s, err)
			}
			e = err.(*Error)
			if code.IsLimit() && code != ErrTimeout && e.Size <= e.Limit {
				t.Fatalf("Compile(%q) limit error %v has size ≤ limit", s, err)
			}
			if !code.IsLimit() {
				t.Fatalf("Compile(%q) of a parsed regex failed with non-limit error %v", s, err)
			}
			return
		}
		if d.NumStates() > opts.MaxDFAStates {
			t.Fatalf("Compile(%q) has %d states, over the budget %d", s, d.NumStates(), opts.MaxDFAStates)
		}
		checkDFA(t, d)
		checkNFALive(t, n, opts)
		if w, ok := ShortestMatch(d); ok && !Matches(d, w) {
			t.Fatalf("ShortestMatch(%q) = %q, not accepted", s, w)
		}
	})
}
