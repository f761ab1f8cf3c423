package grammar

import (
	"errors"
	"strings"
	"testing"

	"conform/fsm"
)

// formatTests pair a format with decoded strings its language must contain
// and strings it must not (invalid for the format, or left out of the
// subset on purpose; the comment says which). They are checked through the
// compiled automaton of {"type":"string","format":F}, each string in its
// canonical JSON encoding.
var formatTests = []struct {
	format string
	valid  []string
	reject []string
}{
	{"uri",
		[]string{"http://example.com/a?b#c", "file:///etc/hosts", "file:///path/to/file1.js", "x://h", "file:///"},
		[]string{"file://", "/relative", "http//x", "file:// /x", "a b"}},
	{"uri-reference",
		[]string{"", "http://example.com/a?b#c", "//example.com:8080/x", "/a/b:c", "a/b", "a%20b", "?q=1", "#frag", "../up", "/", "a?x:y#z", "file:///etc/hosts"},
		[]string{"a:b", ":x", "http://ex ample.com", "a b", "%zz", `a\b`, "http://[::1]/", // IP-literal: left out
			"mailto:a@b"}}, // rootless URI: left out
	{"iri",
		[]string{"http://例え.jp/パス?q=ü#frag", "https://example.com", "http://h/\U0001F600"},
		[]string{"/relative", "http://h/a b", "http://h/\u0080", "ex:"}},
	{"iri-reference",
		[]string{"", "/パス", "例/x", "http://例え.jp/", "?\ue000"},
		[]string{"例:x", "a b", "/\ue000"}}, // iprivate outside a query
	{"uri-template",
		[]string{"", "http://example.com/~{username}/", "/search{.ext}{;p,q}", "/x{+path:6}/{var*}", "http://h:80/a?x={x}&y={&y}", "{a.b}", "a/b:c{d}", "*"},
		[]string{"x{+path:6}/", // a colon in the first segment: Go rejects it
			"{", "}", "{}", "{a", "{{a}}", "{a b}", "{a:0}", "{a:10000}", "http://{host}/", "//h/x", "{x}:y",
			"{?q}", "/p{/x}", "{#f}", // '?' '/' '#' operators: left out (santhosh-tekuri rejects them in paths)
			"{=x}", "a%7Bb", "a%7d", "a%zz", "a b", `a"b`}},
	{"json-pointer",
		[]string{"", "/", "/a/b", "/a~0b/c~1d", "//", "/ \n\x00é", "/~01"},
		[]string{"a", "/~", "/~2", "/a~", "#/a"}},
	{"relative-json-pointer",
		[]string{"0", "1#", "0/a", "12/a~1b", "3/"},
		[]string{"", "01", "-1", "#", "/a", "1##", "0+1/a"}}, // index manipulation: left out
	{"idn-hostname",
		[]string{"example.com", "EXAMPLE.com", "a", "a-b.c", "ab-c", "x1-a"},
		[]string{"", "-a", "a-", "ab--c", "x1--a", "xn--abc", "x1-", "a..b", "a_b", "例え.jp", // U-labels: left out
			strings.Repeat("a", 64)}},
	{"idn-email",
		[]string{"a@b", "a.b+c@example.com"},
		[]string{"a@ab--c.com", "a@", "@b", "a..b@c", "例@例.jp"}}, // non-ASCII: left out
	{"host-name", []string{"example.com", "a-b.c"}, []string{"", "-a", "a_b"}},
	{"ip-address", []string{"192.168.0.1", "0.0.0.0"}, []string{"256.1.1.1", "01.1.1.1", "::1"}},
	{"byte",
		[]string{"", "AA==", "AAA=", "AAAA", "aGVsbG8=", "aGVsbG8gd29ybGQ=", "+/+/", "QQ==", "QUE="},
		[]string{"A", "AA", "AAA", "AB==", "AAB=", "A===", "AA=A", "aGVsbG8", "aGVs bG8=", "aGVs-G8=", "AA==AAAA"}},
	{"regex",
		[]string{"", "abc", "^a+b*$", "a|b|", "(a)(?:b)", "[a-z0-9_]+", "[^\\]\\-]", `\d{3}-\d{2,4}`, `a{0,9}?`, `\bword\B`,
			`\x41\.\/\(`, "((a|b)*c)?", "^[a-zA-Z0-9_]{3,16}$", "a{10,10}", "a{19,20}", "a{0,99}", "b{99}", "c{9,10}", "d{42,}", "[.$(]", "a/b", "()", "(|)", `[\w\s]`},
		[]string{"(", ")", "[", "]", "{", "}", "a**", "*a", "a{2", "[]", "[^]", "[b-a]", "a{3,2}", `\`, `a\`, "(?=a)", `\1`, `\k<a>`,
			`\-`, `\a`, "^*", "a{1000}", "[[:alpha:]]",
			"a{100}", "a{1,100}", "a{05}", "a{20,19}", "a{21,19}", "a{11,10}", "(a){2}", "((((a))))", `\u0041`}}, // counts over 99, leading zeros, counted groups, depth 4, \u: left out
}

func TestFormatLanguages(t *testing.T) {
	for _, tt := range formatTests {
		t.Run(tt.format, func(t *testing.T) {
			d := compileFormat(t, tt.format, Options{})
			for _, s := range tt.valid {
				if !fsm.Matches(d, []byte(canonicalString(s))) {
					t.Errorf("format %s: Matches(%q) = false, want true", tt.format, s)
				}
			}
			for _, s := range tt.reject {
				if fsm.Matches(d, []byte(canonicalString(s))) {
					t.Errorf("format %s: Matches(%q) = true, want false", tt.format, s)
				}
			}
		})
	}
}

// compileFormat returns the DFA of {"type":"string","format":name}.
func compileFormat(t testing.TB, name string, opts Options) *fsm.DFA {
	t.Helper()
	schema := `{"type":"string","format":"` + name + `"}`
	res, err := CompileSchema([]byte(schema), opts)
	if err != nil {
		t.Fatalf("CompileSchema(%s) error: %v", schema, err)
	}
	d, err := fsm.Compile(res.Node, fsm.Options{})
	if err != nil {
		t.Fatalf("fsm.Compile(%s) error: %v", schema, err)
	}
	return d
}

// TestFormatTypes checks that each format constrains only its own instance
// type, and that the escaped encodings of a format string are accepted too.
func TestFormatTypes(t *testing.T) {
	tests := []struct {
		schema string
		match  []string
		reject []string
	}{
		{`{"type":"integer","format":"int32"}`, []string{`0`, `-2147483648`, `2147483647`}, []string{`2147483648`, `-2147483649`, `"1"`}},
		{`{"type":"integer","format":"int64"}`, []string{`-9223372036854775808`, `9223372036854775807`}, []string{`9223372036854775808`, `-9223372036854775809`}},
		{`{"type":"number","format":"int32"}`, []string{`1.5`, `-2147483648`, `2147483646.9`}, []string{`2147483648`, `2147483647.5`}},
		{`{"type":"integer","format":"int32","minimum":5,"exclusiveMinimum":true}`, []string{`6`, `2147483647`}, []string{`5`, `2147483648`}},
		{`{"type":"integer","format":"int32","maximum":1e12}`, []string{`2147483647`}, []string{`2147483648`}},
		{`{"type":["string","integer"],"format":"int64"}`, []string{`"x"`, `"99999999999999999999"`, `1`}, []string{`99999999999999999999`}},
		{`{"type":["number","string"],"format":"double"}`, []string{`1e300`, `-0.5`, `"any"`}, []string{`true`}},
		{`{"type":["number","string"],"format":"float"}`, []string{`1e300`, `""`}, []string{`null`}},
		{`{"type":["string","integer"],"format":"utc-millisec"}`, []string{`"x"`, `-5`}, []string{`1.5`}},
		{`{"type":"string","format":"binary"}`, []string{`""`, `"\u0000x"`, `"é"`}, []string{`1`}},
		{`{"type":"string","format":"password","minLength":2}`, []string{`"ab"`}, []string{`"a"`}},
		{`{"type":["string","null"],"not":{"type":"string","format":"binary"}}`, []string{`null`}, []string{`""`, `"a"`}},
		{`{"type":["string","integer"],"format":"byte"}`, []string{`"QQ=="`, `12345678901234567890`}, []string{`"QQ="`}},
		{`{"type":["string","integer"],"format":"uri-reference"}`, []string{`"/a"`, `7`}, []string{`"a b"`}},
		{`{"type":"string","format":"json-pointer","maxLength":3}`, []string{`"/ab"`, `"/\n"`, `"/\u000a"`}, []string{`"/abc"`}},
		{`{"type":"string","format":"regex"}`, []string{`"\\d+"`, `"a\/b"`, `"\u005cd"`}, []string{`"\d"`}},
	}
	for _, tt := range tests {
		res, err := CompileSchema([]byte(tt.schema), Options{Escapes: EscapesAll})
		if err != nil {
			t.Errorf("CompileSchema(%s) error: %v", tt.schema, err)
			continue
		}
		d, err := fsm.Compile(res.Node, fsm.Options{})
		if err != nil {
			t.Errorf("fsm.Compile(%s) error: %v", tt.schema, err)
			continue
		}
		for _, s := range tt.match {
			if !fsm.Matches(d, []byte(s)) {
				t.Errorf("schema %s: Matches(%s) = false, want true", tt.schema, s)
			}
		}
		for _, s := range tt.reject {
			if fsm.Matches(d, []byte(s)) {
				t.Errorf("schema %s: Matches(%s) = true, want false", tt.schema, s)
			}
		}
	}
}

// TestUnknownFormats: names outside KnownFormats stay errors in strict mode
// and warnings in lenient mode.
func TestUnknownFormats(t *testing.T) {
	for _, name := range []string{"url", "path", "semver-ish", "Int32", "uri_reference"} {
		schema := []byte(`{"type":"string","format":"` + name + `"}`)
		_, err := CompileSchema(schema, Options{})
		var ge *Error
		if !errors.As(err, &ge) || ge.Code != CodeUnknownFormat || ge.Pointer != "/format" {
			t.Errorf("CompileSchema(%s) error = %v, want unknown-format at #/format", schema, err)
		}
		res, err := CompileSchema(schema, Options{Strictness: Lenient})
		if err != nil || len(res.Warnings) != 1 {
			t.Errorf("CompileSchema(%s, lenient) = %v, %v; want one warning", schema, res, err)
		}
	}
	known := KnownFormats()
	for _, name := range []string{"uri-reference", "iri", "iri-reference", "uri-template", "json-pointer", "relative-json-pointer",
		"idn-email", "idn-hostname", "regex", "host-name", "ip-address", "utc-millisec", "int32", "int64", "float", "double", "byte", "binary", "password", "date-time", "uri"} {
		found := false
		for _, k := range known {
			found = found || k == name
		}
		if !found {
			t.Errorf("KnownFormats() = %v, want it to hold %q", known, name)
		}
		if _, err := CompileSchema([]byte(`{"type":"string","format":"`+name+`"}`), Options{}); err != nil {
			t.Errorf("CompileSchema(format %s) error: %v", name, err)
		}
	}
}

func BenchmarkCompileFormat(b *testing.B) {
	for _, name := range []string{"uri-reference", "iri", "uri-template", "regex", "idn-email", "byte"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				compileFormat(b, name, Options{})
			}
		})
	}
}
