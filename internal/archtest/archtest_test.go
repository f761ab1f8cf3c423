package archtest

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// forbidden maps a package path prefix (inside module conform) to import
// path prefixes it must not import, directly or indirectly.
var forbidden = map[string][]string{
	"conform/fsm":       {"conform/runner", "conform/hub", "conform/grammar", "conform/tokenizer", "conform/sampler", "conform/templates", "conform/cmd", "conform/internal/llama", "github.com/gin-gonic", "net/http"},
	"conform/grammar":   {"conform/runner", "conform/hub", "conform/tokenizer", "conform/sampler", "conform/templates", "conform/cmd", "conform/internal/llama", "github.com/gin-gonic", "net/http"},
	"conform/tokenizer": {"conform/runner", "conform/hub", "conform/fsm", "conform/grammar", "conform/sampler", "conform/templates", "conform/cmd", "conform/internal/llama", "github.com/gin-gonic", "net/http"},
	"conform/sampler":   {"conform/runner", "conform/fsm", "conform/grammar", "conform/tokenizer", "conform/templates", "conform/cmd", "conform/internal/llama", "github.com/gin-gonic", "net/http"},
	"conform/templates": {"conform/runner", "conform/hub", "conform/tokenizer", "conform/sampler", "conform/cmd", "conform/internal/llama", "github.com/gin-gonic", "net/http"},
	"conform/hub":       {"conform/fsm", "conform/grammar", "conform/tokenizer", "conform/sampler", "conform/templates", "conform/runner", "conform/cmd", "conform/internal/llama", "github.com/gin-gonic"},
	"conform/runner":    {"conform/grammar", "conform/tokenizer", "conform/templates", "conform/turn", "conform/hub", "conform/cmd", "conform/internal/llama", "github.com/gin-gonic", "net/http"},
	// turn owns the assistant turn above the runner, in no API's shape:
	// it builds on grammar, fsm, sampler and runner, reads vocabularies as
	// plain bytes (not through tokenizer), and knows no HTTP.
	"conform/turn": {"conform/hub", "conform/tokenizer", "conform/cmd", "conform/internal/llama", "github.com/gin-gonic", "net/http"},
	// token is the leaf every stage takes its TokenID from: it may import
	// nothing of the module nor any third party.
	"conform/token": {"conform", "github.com", "golang.org"},
	"conform/gguf":  {"conform/runner", "conform/hub", "conform/fsm", "conform/grammar", "conform/tokenizer", "conform/sampler", "conform/templates", "conform/cmd", "conform/internal/llama", "github.com/gin-gonic", "net/http"},
}

// onlyIn maps an import path prefix to the package prefixes allowed to import it.
var onlyIn = map[string][]string{
	"github.com/gin-gonic/gin":          {"conform/cmd/serve"},
	"github.com/ollama/ollama/llama":    {"conform/internal/llama"},
	"github.com/ollama/ollama/ml":       {"conform/internal/llama"},
	"github.com/ollama/ollama/llama/ll": {"conform/internal/llama"},
}

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

func TestImportDirection(t *testing.T) {
	cmd := exec.Command("go", "list", "-json", "-deps=false", "conform/...")
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	n := 0
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		n++
		for prefix, bad := range forbidden {
			if !under(p.ImportPath, prefix) {
				continue
			}
			for _, d := range p.Deps {
				for _, b := range bad {
					if under(d, b) {
						t.Errorf("%s depends on %s (forbidden for %s)", p.ImportPath, d, prefix)
					}
				}
			}
		}
		for imp, allowed := range onlyIn {
			for _, d := range p.Imports {
				if !under(d, imp) {
					continue
				}
				ok := false
				for _, a := range allowed {
					ok = ok || under(p.ImportPath, a)
				}
				if !ok {
					t.Errorf("%s imports %s; only %v may", p.ImportPath, d, allowed)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("go list returned no packages")
	}
}

func under(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}
