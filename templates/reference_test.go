package templates

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"conform/internal/sharedtest"
)

// TestJinjaReference compares Render with cases produced by real jinja2
// (testdata/jinja_reference/gen.py, run with Python and jinja2 3.1) on
// random conversations over the shared templates. It is off unless
// CONFORM_JINJA_CASES names the generated file, so the normal run needs no
// Python:
//
//	python3 testdata/jinja_reference/gen.py SEED N /tmp/cases.json
//	CONFORM_JINJA_CASES=/tmp/cases.json go test ./templates -run JinjaReference
func TestJinjaReference(t *testing.T) {
	path := os.Getenv("CONFORM_JINJA_CASES")
	if path == "" {
		t.Skip("CONFORM_JINJA_CASES is not set: skipping the jinja2 reference comparison")
	}
	dir := sharedtest.Path(t, "templates")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var fixtures []goldenFixture
	if err := json.Unmarshal(data, &fixtures); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2024, 7, 26, 0, 0, 0, 0, time.UTC)
	for _, fx := range fixtures {
		src, err := os.ReadFile(filepath.Join(dir, fx.Template))
		if err != nil {
			t.Fatal(err)
		}
		tmpl, err := Parse(string(src))
		if err != nil {
			t.Fatalf("Parse(%s): %v", fx.Template, err)
		}
		for _, c := range fx.Cases {
			t.Run(fx.Template+"/"+c.Name, func(t *testing.T) {
				msgs, err := DecodeJSON(c.Messages)
				if err != nil {
					t.Fatal(err)
				}
				vars := Vars{Messages: msgs, AddGenerationPrompt: c.AddGenerationPrompt, BosToken: fx.BosToken,
					EosToken: fx.EosToken, Extra: map[string]Value{}, Now: func() time.Time { return now }}
				if len(c.Tools) > 0 && string(c.Tools) != "null" {
					if vars.Tools, err = DecodeJSON(c.Tools); err != nil {
						t.Fatal(err)
					}
				}
				decodeExtra(t, c.ExtraVars, vars.Extra)
				got, err := tmpl.Render(vars)
				switch {
				case c.Expected != nil:
					if err != nil {
						t.Fatalf("Render: %v\nmessages: %s", err, c.Messages)
					}
					if got != *c.Expected {
						t.Fatalf("Render mismatch\nmessages: %s\n%s", c.Messages, firstDiff(got, *c.Expected))
					}
				default:
					var te *Error
					if err == nil || !errors.As(err, &te) {
						t.Fatalf("Render = %q, %v; want error %q\nmessages: %s", got, err, *c.Error, c.Messages)
					}
					if c.ErrorKind == "raise_exception" && (te.Code != CodeRaised || te.Msg != *c.Error) {
						t.Fatalf("Render error = %v, want raise_exception %q", err, *c.Error)
					}
				}
			})
		}
	}
}

// TestJinjaRandom compares Parse+Render with jinja2 on random small
// templates (testdata/jinja_reference/random_templates.py). Off unless
// CONFORM_JINJA_RANDOM names the generated file.
func TestJinjaRandom(t *testing.T) {
	path := os.Getenv("CONFORM_JINJA_RANDOM")
	if path == "" {
		t.Skip("CONFORM_JINJA_RANDOM is not set: skipping the jinja2 random-template comparison")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Vars  json.RawMessage `json:"vars"`
		Cases []struct {
			Name      string  `json:"name"`
			Template  string  `json:"template"`
			Expected  *string `json:"expected"`
			Error     string  `json:"error"`
			ErrorKind string  `json:"error_kind"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	extra := map[string]Value{}
	decodeExtra(t, file.Vars, extra)
	now := time.Date(2024, 7, 26, 0, 0, 0, 0, time.UTC)
	for _, c := range file.Cases {
		t.Run(c.Name, func(t *testing.T) {
			if c.Expected != nil && strings.Contains(*c.Expected, " at 0x") || strings.Contains(c.Error, " at 0x") {
				t.Skip("the output prints a Python object address")
			}
			tmpl, err := Parse(c.Template)
			var got string
			if err == nil {
				got, err = tmpl.Render(Vars{Extra: extra, Now: func() time.Time { return now }})
			}
			if c.Expected != nil {
				if err != nil {
					t.Fatalf("template %q: %v", c.Template, err)
				}
				if got != *c.Expected {
					t.Fatalf("template %q\n%s", c.Template, firstDiff(got, *c.Expected))
				}
				return
			}
			if err == nil {
				t.Fatalf("template %q = %q, want error %q", c.Template, got, c.Error)
			}
			var te *Error
			if errors.As(err, &te) && c.ErrorKind == "raise_exception" && (te.Code != CodeRaised || te.Msg != c.Error) {
				t.Fatalf("template %q: error %v, want raise_exception %q", c.Template, err, c.Error)
			}
			// An unknown filter or test fails at compile time or at run
			// time exactly where jinja2's does (check.go).
			if strings.Contains(c.Error, "No filter named") || strings.Contains(c.Error, "No test named") {
				if wantParse := c.ErrorKind == "syntax"; (tmpl == nil) != wantParse {
					t.Fatalf("template %q: error %v (from Parse: %v), want jinja2's %q", c.Template, err, tmpl == nil, c.Error)
				}
				if c.ErrorKind != "syntax" && (te == nil || te.Code != CodeUnknown) {
					t.Fatalf("template %q: error %v, want a CodeUnknown error like jinja2's %q", c.Template, err, c.Error)
				}
			}
		})
	}
}
