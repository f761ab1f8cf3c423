package templates

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"conform/internal/sharedtest"
)

// goldenFixture is one file of ../shared/templates/golden (format in that
// folder's README.md).
type goldenFixture struct {
	Template         string          `json:"template"`
	TemplateSHA256   string          `json:"template_sha256"`
	BosToken         string          `json:"bos_token"`
	EosToken         string          `json:"eos_token"`
	ExtraVars        json.RawMessage `json:"extra_vars"`
	StrftimeNowFixed string          `json:"strftime_now_fixed"`
	Cases            []goldenCase    `json:"cases"`
}

type goldenCase struct {
	Name                string          `json:"name"`
	Messages            json.RawMessage `json:"messages"`
	Tools               json.RawMessage `json:"tools"`
	AddGenerationPrompt bool            `json:"add_generation_prompt"`
	ExtraVars           json.RawMessage `json:"extra_vars"`
	Expected            *string         `json:"expected"`
	Error               *string         `json:"error"`
	ErrorKind           string          `json:"error_kind"`
}

// decodeExtra decodes an extra_vars object into a map (order is irrelevant
// for variable binding).
func decodeExtra(t *testing.T, raw json.RawMessage, into map[string]Value) {
	t.Helper()
	if len(raw) == 0 || string(raw) == "null" {
		return
	}
	v, err := DecodeJSON(raw)
	if err != nil {
		t.Fatalf("DecodeJSON(extra_vars): %v", err)
	}
	d, ok := v.(*Dict)
	if !ok {
		t.Fatalf("extra_vars is %s, want an object", v.pyType())
	}
	for i, k := range d.Keys() {
		into[toStr(k)] = d.Values()[i]
	}
}

// firstDiff describes where got and want first differ.
func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	line := strings.Count(want[:i], "\n") + 1
	col := i - strings.LastIndex(want[:i], "\n")
	lo := max(0, i-60)
	return fmt.Sprintf("first difference at byte %d (line %d, col %d)\n got: %q\nwant: %q\n%s",
		i, line, col, got[lo:min(len(got), i+60)], want[lo:min(len(want), i+60)], lineDiff(got, want))
}

// lineDiff is a small unified-style diff of two texts by lines (prefix and
// suffix trimmed; enough to read a rendering mismatch).
func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	p := 0
	for p < len(g) && p < len(w) && g[p] == w[p] {
		p++
	}
	s := 0
	for s < len(g)-p && s < len(w)-p && g[len(g)-1-s] == w[len(w)-1-s] {
		s++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "@@ line %d @@\n", p+1)
	for _, l := range w[p : len(w)-s] {
		fmt.Fprintf(&b, "-%q\n", l)
	}
	for _, l := range g[p : len(g)-s] {
		fmt.Fprintf(&b, "+%q\n", l)
	}
	return b.String()
}

// TestGolden renders every case of every fixture in
// ../shared/templates/golden and compares byte for byte.
func TestGolden(t *testing.T) {
	dir := sharedtest.Path(t, "templates", "golden")
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in %s (%v)", dir, err)
	}
	sort.Strings(files)
	type tally struct{ pass, total int }
	rates := map[string]*tally{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var fx goldenFixture
		if err := json.Unmarshal(data, &fx); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		src, err := os.ReadFile(filepath.Join(filepath.Dir(dir), fx.Template))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(src)
		if got := hex.EncodeToString(sum[:]); got != fx.TemplateSHA256 {
			t.Errorf("%s: sha256 = %s, want %s (the template file was edited)", fx.Template, got, fx.TemplateSHA256)
			continue
		}
		tmpl, err := Parse(string(src))
		if err != nil {
			t.Errorf("Parse(%s): %v", fx.Template, err)
			continue
		}
		now := time.Date(2024, 7, 26, 0, 0, 0, 0, time.UTC)
		if fx.StrftimeNowFixed != "" {
			if now, err = time.Parse("2006-01-02T15:04:05", fx.StrftimeNowFixed); err != nil {
				t.Fatalf("strftime_now_fixed: %v", err)
			}
		}
		tl := &tally{}
		rates[fx.Template] = tl
		for _, c := range fx.Cases {
			tl.total++
			ok := t.Run(fx.Template+"/"+c.Name, func(t *testing.T) {
				msgs, err := DecodeJSON(c.Messages)
				if err != nil {
					t.Fatalf("DecodeJSON(messages): %v", err)
				}
				vars := Vars{Messages: msgs, AddGenerationPrompt: c.AddGenerationPrompt,
					BosToken: fx.BosToken, EosToken: fx.EosToken, Extra: map[string]Value{},
					Now: func() time.Time { return now }}
				if len(c.Tools) > 0 && string(c.Tools) != "null" {
					if vars.Tools, err = DecodeJSON(c.Tools); err != nil {
						t.Fatalf("DecodeJSON(tools): %v", err)
					}
				}
				decodeExtra(t, fx.ExtraVars, vars.Extra)
				decodeExtra(t, c.ExtraVars, vars.Extra)
				got, err := tmpl.Render(vars)
				switch {
				case c.Expected != nil:
					if err != nil {
						t.Fatalf("Render: %v", err)
					}
					if got != *c.Expected {
						t.Fatalf("Render mismatch\n%s", firstDiff(got, *c.Expected))
					}
				case c.Error != nil:
					if err == nil {
						t.Fatalf("Render = %q, want error %q", got, *c.Error)
					}
					var te *Error
					if !errors.As(err, &te) {
						t.Fatalf("Render error %T %v, want *Error", err, err)
					}
					if c.ErrorKind == "raise_exception" && (te.Code != CodeRaised || te.Msg != *c.Error) {
						t.Fatalf("Render error = %v (code %v), want raise_exception %q", err, te.Code, *c.Error)
					}
				default:
					t.Fatalf("case has neither expected nor error")
				}
			})
			if ok {
				tl.pass++
			}
		}
	}
	names := make([]string, 0, len(rates))
	for n := range rates {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Logf("%-45s %d/%d", n, rates[n].pass, rates[n].total)
	}
}
