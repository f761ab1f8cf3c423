package archtest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The documented commands. A README line that runs make or go must work as
// written on a fresh clone: make names targets the Makefile defines and
// variables it reads; `go run` names a main package of the module; and a go
// command that compiles a package needing cgo (internal/llama or anything
// importing it, tests included) must get the Makefile's cgo environment,
// because the module proxy strips llama.cpp's vendored headers and the
// Makefile alone knows where build/include is and which -march to use. So
// such a command is either a make target, or runs after
// `eval "$(make -s env)"` (on its line, or earlier in its code block), or
// sets CGO_ENABLED=0. Checked: shell code blocks (```sh, bash, shell) and
// inline code spans that start with make or go.

// envLine is how the docs bring the Makefile's exports into a shell.
const envLine = `eval "$(make -s env)"`

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root: %v", err)
	}
	return root
}

// docCommand is one shell command found in a document.
type docCommand struct {
	where string   // file:line
	words []string // shell words, quotes removed
	env   bool     // runs after eval "$(make -s env)"
}

// docCommands extracts the make and go commands of a markdown text.
func docCommands(name, md string) []docCommand {
	var out []docCommand
	inFence, shell, blockEnv := false, false, false
	var pending strings.Builder
	pendingLine := 0
	sc := bufio.NewScanner(strings.NewReader(md))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "```") {
			if !inFence {
				info := strings.Fields(strings.TrimPrefix(trim, "```"))
				shell = len(info) > 0 && slices.Contains([]string{"sh", "bash", "shell"}, info[0])
				blockEnv = false
			}
			inFence = !inFence
			continue
		}
		if inFence {
			if !shell {
				continue
			}
			if pending.Len() == 0 {
				pendingLine = n
			}
			if strings.HasSuffix(line, `\`) {
				pending.WriteString(strings.TrimSuffix(line, `\`) + " ")
				continue
			}
			pending.WriteString(line)
			for _, c := range splitCommands(pending.String()) {
				if isEnvCommand(c) {
					blockEnv = true
					continue
				}
				if len(c) > 0 && (c[firstWord(c)] == "make" || c[firstWord(c)] == "go") {
					out = append(out, docCommand{where: fmt.Sprintf("%s:%d", name, pendingLine), words: c, env: blockEnv})
				}
			}
			pending.Reset()
			continue
		}
		for _, m := range inlineCode.FindAllStringSubmatch(line, -1) {
			env := false
			for _, c := range splitCommands(m[1]) {
				if isEnvCommand(c) {
					env = true
					continue
				}
				if len(c) >= 2 && (c[firstWord(c)] == "make" || c[firstWord(c)] == "go") && firstWord(c) < len(c)-1 {
					out = append(out, docCommand{where: fmt.Sprintf("%s:%d", name, n), words: c, env: env})
				}
			}
		}
	}
	return out
}

var inlineCode = regexp.MustCompile("`([^`]+)`")

var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// firstWord is the index of the command word after VAR=value prefixes
// (len(c) when there is none).
func firstWord(c []string) int {
	i := 0
	for i < len(c) && assignment.MatchString(c[i]) {
		i++
	}
	if i == len(c) {
		return len(c) - 1
	}
	return i
}

func isEnvCommand(c []string) bool {
	return len(c) == 2 && c[0] == "eval" && c[1] == "$(make -s env)"
}

// splitCommands splits a shell line into commands (at unquoted ;, &&, ||
// and |) of words, dropping a trailing comment. Quotes are removed; $(...)
// inside double quotes is kept as written.
func splitCommands(s string) [][]string {
	var cmds [][]string
	var words []string
	var w strings.Builder
	inWord := false
	flushWord := func() {
		if inWord {
			words = append(words, w.String())
		}
		w.Reset()
		inWord = false
	}
	flushCmd := func() {
		flushWord()
		if len(words) > 0 {
			cmds = append(cmds, words)
		}
		words = nil
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			w.WriteString(s[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case ch == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' && j+1 < len(s) {
					j++
				}
				j++
			}
			w.WriteString(s[i+1 : min(j, len(s))])
			inWord = true
			i = j
		case ch == '#' && !inWord:
			flushCmd()
			return cmds
		case ch == ';' || ch == '|' || ch == '&':
			flushCmd()
			if i+1 < len(s) && (s[i+1] == '|' || s[i+1] == '&') {
				i++
			}
		case ch == ' ' || ch == '\t':
			flushWord()
		default:
			w.WriteByte(ch)
			inWord = true
		}
	}
	flushCmd()
	return cmds
}

// makefile is what the Makefile defines.
type makefile struct {
	targets, vars map[string]bool
}

var (
	makeRule = regexp.MustCompile(`^([A-Za-z0-9_./$()-][A-Za-z0-9_./$() -]*?)\s*:([^=]|$)`)
	makeVar  = regexp.MustCompile(`^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*(?:[?:+]?=)`)
	makeRef  = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
)

func readMakefile(t *testing.T, root string) makefile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	mf := makefile{targets: map[string]bool{}, vars: map[string]bool{}}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "#") {
			continue
		}
		if m := makeVar.FindStringSubmatch(line); m != nil {
			mf.vars[m[1]] = true
		} else if m := makeRule.FindStringSubmatch(line); m != nil {
			for _, name := range strings.Fields(m[1]) {
				mf.targets[name] = true
			}
		}
	}
	// Variables the Makefile reads from the command line or environment
	// without defining them (ARGS ?= defines it; CGO_CPPFLAGS is tested).
	for _, m := range makeRef.FindAllStringSubmatch(string(b), -1) {
		mf.vars[m[1]] = true
	}
	return mf
}

// goList runs go list in the module with cgo on (as a fresh clone's
// default) and caches the answers: one line per package (test variants
// included with test), "importpath TAB name TAB ok|error TAB deps".
type goLister struct {
	root  string
	mu    sync.Mutex
	cache map[string][]string
}

func (g *goLister) list(test bool, pattern string) ([]string, error) {
	key := fmt.Sprint(test, pattern)
	g.mu.Lock()
	defer g.mu.Unlock()
	if r, ok := g.cache[key]; ok {
		return r, nil
	}
	args := []string{"list", "-e", "-deps=false", "-f", "{{.ImportPath}}\t{{.Name}}\t{{if .Error}}error{{else}}ok{{end}}\t{{join .Deps \" \"}}"}
	if test {
		args = append(args, "-test")
	}
	cmd := exec.Command("go", append(args, pattern)...)
	cmd.Dir = g.root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %v", pattern, err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	g.cache[key] = lines
	return lines, nil
}

// goValueFlags are the go command flags (build and test) documented
// commands use that take a value.
var goValueFlags = map[string]bool{"-o": true, "-tags": true, "-ldflags": true, "-gcflags": true, "-run": true, "-bench": true,
	"-fuzz": true, "-fuzztime": true, "-count": true, "-timeout": true, "-benchtime": true, "-cpuprofile": true, "-memprofile": true, "-p": true}

// check returns what is wrong with c, or "".
func (c docCommand) check(mf makefile, gl *goLister) string {
	i := firstWord(c.words)
	prefix, cmd, args := c.words[:i], c.words[i], c.words[i+1:]
	if cmd == "make" {
		for _, a := range args {
			switch {
			case assignment.MatchString(a):
				if name := a[:strings.IndexByte(a, '=')]; !mf.vars[name] {
					return fmt.Sprintf("make variable %s is not used by the Makefile", name)
				}
			case a == "-s" || a == "-n" || strings.HasPrefix(a, "-j"):
			case strings.HasPrefix(a, "-"):
				return fmt.Sprintf("make flag %s not understood by this check", a)
			case !mf.targets[a]:
				return fmt.Sprintf("make target %q is not in the Makefile", a)
			}
		}
		return ""
	}
	if len(args) == 0 {
		return ""
	}
	sub := args[0]
	var pkgs []string
	for j := 1; j < len(args); j++ {
		a := args[j]
		if strings.HasPrefix(a, "-") {
			if goValueFlags[a] {
				j++
			}
			continue
		}
		if strings.HasPrefix(a, "./") || a == "." || strings.HasPrefix(a, "conform/") || strings.HasSuffix(a, ".go") {
			pkgs = append(pkgs, a)
		}
		if sub == "run" {
			break // the rest are the program's arguments
		}
	}
	switch sub {
	case "run", "build", "test", "install", "vet":
	default:
		return ""
	}
	if sub == "run" && len(pkgs) == 0 {
		return "go run names no package"
	}
	cgoOff := slices.Contains(prefix, "CGO_ENABLED=0")
	for _, p := range pkgs {
		lines, err := gl.list(sub == "test", p)
		if err != nil {
			return err.Error()
		}
		for _, l := range lines {
			f := strings.Split(l, "\t")
			if len(f) != 4 {
				return fmt.Sprintf("go list %s: %q", p, l)
			}
			if f[2] != "ok" {
				return fmt.Sprintf("%s: no such package (go list: %s)", p, f[0])
			}
			if sub == "run" && f[1] != "main" {
				return fmt.Sprintf("go run %s: package %s is not a command", p, f[1])
			}
			needsCgo := strings.HasPrefix(f[0], "conform/internal/llama") || slices.Contains(strings.Fields(f[3]), "conform/internal/llama")
			if needsCgo && !c.env && !cgoOff {
				return fmt.Sprintf("go %s %s builds %s, which needs llama.cpp's cgo environment: use a make target, or %s first, or CGO_ENABLED=0",
					sub, p, strings.Fields(f[0])[0], envLine)
			}
		}
	}
	return ""
}

// TestDocCommands checks every make and go command in the READMEs.
func TestDocCommands(t *testing.T) {
	root := repoRoot(t)
	mf := readMakefile(t, root)
	gl := &goLister{root: root, cache: map[string][]string{}}
	var docs []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "build" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "README.md" {
			docs = append(docs, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, path := range docs {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		for _, c := range docCommands(rel, string(b)) {
			checked++
			if msg := c.check(mf, gl); msg != "" {
				t.Errorf("%s: `%s`: %s", c.where, strings.Join(c.words, " "), msg)
			}
		}
	}
	if checked < 10 {
		t.Errorf("checked %d commands in %v; the extraction is broken", checked, docs)
	}
}

// TestDocCommandsCatches: the check refuses what fails on a fresh clone.
func TestDocCommandsCatches(t *testing.T) {
	root := repoRoot(t)
	mf := readMakefile(t, root)
	gl := &goLister{root: root, cache: map[string][]string{}}
	for _, tc := range []struct {
		md   string
		want []string // one entry per command: "" or a substring of its problem
	}{
		{"```sh\ngo run ./cmd/serve --demo   # comment\n```\n", []string{"needs llama.cpp's cgo environment"}},
		{"```sh\neval \"$(make -s env)\"\ngo run ./cmd/serve \\\n    --demo\n```\n", []string{""}},
		{"Run `eval \"$(make -s env)\"; go test ./internal/llama` or `go test ./internal/llama`.\n", []string{"", "cgo environment"}},
		{"```sh\nCGO_ENABLED=0 go test ./...\n```\n", []string{""}},
		{"```sh\ngo test ./cmd/serve/\n```\n", []string{"cgo environment"}},
		{"```sh\ngo run ./cmd/mkmodel -preset tiny -out build/tiny.gguf\n```\n", []string{""}},
		{"```sh\ngo run ./cmd/nosuch\n```\n", []string{"no such package"}},
		{"```sh\ngo run ./internal/llama\n```\n", []string{"not a command"}},
		{"`make run ARGS=\"--port 9000\"` and `make build CPU_TARGET=x86-64-v3` && `make nosuch`\n", []string{"", "", "not in the Makefile"}},
		{"```sh\nmake e2e CPU_TARGT=native\n```\n", []string{"CPU_TARGT is not used"}},
		{"```go\ngo run ./cmd/serve\n```\n", nil},
	} {
		cmds := docCommands("t.md", tc.md)
		if len(cmds) != len(tc.want) {
			t.Errorf("%q: %d commands %v, want %d", tc.md, len(cmds), cmds, len(tc.want))
			continue
		}
		for i, c := range cmds {
			got := c.check(mf, gl)
			if (tc.want[i] == "") != (got == "") || !strings.Contains(got, tc.want[i]) {
				t.Errorf("%q: command %v: check = %q, want %q", tc.md, c.words, got, tc.want[i])
			}
		}
	}
}
