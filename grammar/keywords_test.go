package grammar

import (
	"errors"
	"reflect"
	"testing"
)

func TestKeywords(t *testing.T) {
	type kw = KeywordRef
	for _, tt := range []struct {
		name   string
		schema string
		want   []KeywordRef
		code   ErrorCode // 0: no error
	}{
		{name: "bool", schema: `true`},
		{name: "nested", schema: `{"type":"object","properties":{"a":{"items":[{"const":{"type":1}}],"title":"t"}},"$defs":{"d":{"minimum":1}}}`,
			want: []KeywordRef{kw{"", "type", false}, kw{"", "properties", false}, kw{"", "$defs", true},
				kw{"/properties/a", "items", false}, kw{"/properties/a", "title", true},
				kw{"/properties/a/items/0", "const", false}, kw{"/$defs/d", "minimum", false}}},
		{name: "unknown-and-unsupported", schema: `{"x-y":1,"uniqueItems":true,"if":{},"then":{"not":{"type":"null"}}}`,
			want: []KeywordRef{kw{"", "x-y", true}, kw{"", "uniqueItems", false}, kw{"", "if", false}, kw{"", "then", false},
				kw{"/then", "not", false}, kw{"/then/not", "type", false}}},
		{name: "escapes", schema: `{"patternProperties":{"^a/~":{"format":"date"}}}`,
			want: []KeywordRef{kw{"", "patternProperties", false}, kw{"/patternProperties/^a~1~0", "format", false}}},
		{name: "not-json", schema: `{"type":`, code: CodeInvalidJSON},
		{name: "too-deep", schema: `{"not":{"not":{"not":{"not":{"not":{"not":{"not":{}}}}}}}}`, code: CodeTooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Keywords([]byte(tt.schema), Options{MaxSchemaDepth: 6})
			var ge *Error
			switch {
			case tt.code != 0:
				if !errors.As(err, &ge) || ge.Code != tt.code {
					t.Fatalf("err = %v, want code %v", err, tt.code)
				}
			case err != nil:
				t.Fatal(err)
			case !reflect.DeepEqual(got, tt.want):
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
}

func FuzzKeywords(f *testing.F) {
	for _, s := range []string{`{"properties":{"a":{"type":"string"}}}`, `{"items":[true,{"not":{}}]}`, `[`, `{"$defs":{"x":{"if":{}}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		kws, err := Keywords(b, Options{})
		var ge *Error
		if err != nil && !errors.As(err, &ge) {
			t.Fatalf("untyped error %v", err)
		}
		for _, k := range kws {
			if k.Pointer != "" && k.Pointer[0] != '/' {
				t.Fatalf("keyword %+v from %q: a pointer that is not a JSON Pointer", k, b)
			}
		}
	})
}
