// Command mkmodel writes a synthetic GGUF model: llama architecture, random
// weights of a preset shape, and a real tokenizer, for tests and benchmarks
// that need llama.cpp without downloading weights.
//
//	go run ./cmd/mkmodel -preset tiny -tokenizer cl100k -out build/tiny.gguf
//	go run ./cmd/mkmodel -preset qwen2.5-0.5b -tokenizer ../shared/vocab/qwen3/tokenizer.json \
//	    -chat-template ../shared/templates/qwen3.jinja -seed 7 -out build/qwen.gguf
//	go run ./cmd/mkmodel -family deepseek-v3.1 -shared ../shared -out build/deepseek.gguf
//
// -tokenizer is cl100k, o200k (tiktoken, offline) or the path of a
// HuggingFace tokenizer.json (its tokenizer_config.json beside it supplies
// the BOS/EOS names and the chat template). Without -chat-template the
// tokenizer's own template is used, else a minimal ChatML one.
//
// -family makes a model of a reasoning/tool-call family: qwen3, qwen3.5,
// deepseek-v3.1, deepseek-r1, kimi-k2 or gpt-oss. It adds the marker tokens
// the family's template writes (think tags, tool-call sections, role
// markers) to the vocabulary, with the token type the real model's GGUF
// gives them (control for its special tokens, so that conform/tokenizer and
// llama.cpp keep them whole and apart from text; user-defined for Qwen's
// <think> and <tool_call>, which are added but not special in the real
// vocabulary, and which the Qwen3 vocabulary already holds), at the real
// model's id where the vocabulary has a hole there (gpt-oss's harmony ids
// with -tokenizer o200k), else appended; and it sets BOS/EOS to the
// family's. -shared DIR (the shared checkout, e.g. ../shared) supplies the
// defaults: -tokenizer DIR/vocab/qwen3/tokenizer.json and -chat-template
// DIR/templates/<the family's template>. Templates are read at build time;
// without -shared a family needs -tokenizer and -chat-template.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"conform/internal/mkmodel"
)

// config is the command line.
type config struct {
	preset    string
	tokenizer string // cl100k, o200k or an HF tokenizer.json
	template  string // chat template file, "" for the default
	family    string // "" for none
	shared    string // the shared directory supplying family defaults, or ""
	seed      uint64
	typ       string // a mkmodel.WeightTypes name
	out       string
}

func main() {
	var c config
	flag.StringVar(&c.preset, "preset", "tiny", "model shape: "+strings.Join(mkmodel.PresetNames(), ", "))
	flag.StringVar(&c.tokenizer, "tokenizer", "", "cl100k, o200k, or PATH/tokenizer.json (required unless -family with -shared)")
	flag.StringVar(&c.template, "chat-template", "", "Jinja chat template file (default: the family's under -shared, else the tokenizer's, else ChatML)")
	flag.StringVar(&c.family, "family", "", "reasoning/tool family whose marker tokens, BOS/EOS and template to use: "+strings.Join(familyNames(), ", "))
	flag.StringVar(&c.shared, "shared", "", "shared directory (e.g. ../shared): -family defaults to its vocab/qwen3 tokenizer and its templates/ file")
	flag.Uint64Var(&c.seed, "seed", 1, "seed of the random weights")
	flag.StringVar(&c.typ, "type", "f16", "weight type of the matrices: "+strings.Join(weightTypeNames(), ", "))
	flag.StringVar(&c.out, "out", "", "output .gguf file (required)")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "mkmodel:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	var fam family
	if c.family != "" {
		var ok bool
		if fam, ok = families[c.family]; !ok {
			return fmt.Errorf("unknown family %q (want one of %s)", c.family, strings.Join(familyNames(), ", "))
		}
		if c.shared != "" {
			if c.tokenizer == "" {
				c.tokenizer = filepath.Join(c.shared, "vocab", "qwen3", "tokenizer.json")
			}
			if c.template == "" {
				c.template = fam.templatePath(c.shared)
			}
		}
		if c.template == "" {
			return fmt.Errorf("-family %s needs -chat-template FILE or -shared DIR", c.family)
		}
	}
	if c.tokenizer == "" || c.out == "" {
		flag.Usage()
		return fmt.Errorf("-tokenizer (or -family with -shared) and -out are required")
	}
	p, ok := mkmodel.Presets[c.preset]
	if !ok {
		return fmt.Errorf("unknown preset %q (want one of %s)", c.preset, strings.Join(mkmodel.PresetNames(), ", "))
	}
	if c.typ == "" {
		c.typ = "f16"
	}
	typ, ok := mkmodel.WeightTypes[c.typ]
	if !ok {
		return fmt.Errorf("unknown -type %q (want one of %s)", c.typ, strings.Join(weightTypeNames(), ", "))
	}
	start := time.Now()
	v, err := mkmodel.LoadVocab(c.tokenizer)
	if err != nil {
		return err
	}
	if c.family != "" {
		if err := fam.apply(v); err != nil {
			return fmt.Errorf("family %s: %w", c.family, err)
		}
	}
	var tmpl string
	if c.template != "" {
		if tmpl, err = mkmodel.ReadChatTemplate(c.template); err != nil {
			return err
		}
	}
	if err := mkmodel.Write(c.out, mkmodel.Options{Preset: p, Vocab: v, ChatTemplate: tmpl, Seed: c.seed, Type: typ}); err != nil {
		return err
	}
	st, err := os.Stat(c.out)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "mkmodel: wrote %s (%s %s, %d tokens, %.1f MB) in %v\n", c.out, p.Name, c.typ, len(v.Tokens), float64(st.Size())/1e6, time.Since(start).Round(time.Millisecond))
	return nil
}

func weightTypeNames() []string {
	names := make([]string, 0, len(mkmodel.WeightTypes))
	for n := range mkmodel.WeightTypes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
