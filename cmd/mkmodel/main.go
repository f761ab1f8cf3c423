// Command mkmodel writes a synthetic GGUF model: llama architecture, random
// weights of a preset shape, and a real tokenizer, for tests and benchmarks
// that need llama.cpp without downloading weights.
//
//	go run ./cmd/mkmodel -preset tiny -tokenizer cl100k -out build/tiny.gguf
//	go run ./cmd/mkmodel -preset qwen2.5-0.5b -tokenizer ../shared/vocab/qwen3/tokenizer.json \
//	    -chat-template ../shared/templates/qwen3.jinja -seed 7 -out build/qwen.gguf
//
// -tokenizer is cl100k, o200k (tiktoken, offline) or the path of a
// HuggingFace tokenizer.json (its tokenizer_config.json beside it supplies
// the BOS/EOS names and the chat template). Without -chat-template the
// tokenizer's own template is used, else a minimal ChatML one.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"conform/internal/mkmodel"
)

func main() {
	preset := flag.String("preset", "tiny", "model shape: "+strings.Join(mkmodel.PresetNames(), ", "))
	tok := flag.String("tokenizer", "", "cl100k, o200k, or PATH/tokenizer.json (required)")
	tmpl := flag.String("chat-template", "", "Jinja chat template file (default: the tokenizer's, else ChatML)")
	seed := flag.Uint64("seed", 1, "seed of the random weights")
	out := flag.String("out", "", "output .gguf file (required)")
	flag.Parse()
	if err := run(*preset, *tok, *tmpl, *seed, *out); err != nil {
		fmt.Fprintln(os.Stderr, "mkmodel:", err)
		os.Exit(1)
	}
}

func run(preset, tok, tmplPath string, seed uint64, out string) error {
	if tok == "" || out == "" {
		flag.Usage()
		return fmt.Errorf("-tokenizer and -out are required")
	}
	p, ok := mkmodel.Presets[preset]
	if !ok {
		return fmt.Errorf("unknown preset %q (want one of %s)", preset, strings.Join(mkmodel.PresetNames(), ", "))
	}
	start := time.Now()
	v, err := mkmodel.LoadVocab(tok)
	if err != nil {
		return err
	}
	var tmpl string
	if tmplPath != "" {
		if tmpl, err = mkmodel.ReadChatTemplate(tmplPath); err != nil {
			return err
		}
	}
	if err := mkmodel.Write(out, mkmodel.Options{Preset: p, Vocab: v, ChatTemplate: tmpl, Seed: seed}); err != nil {
		return err
	}
	st, err := os.Stat(out)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "mkmodel: wrote %s (%s, %d tokens, %.1f MB) in %v\n", out, p.Name, len(v.Tokens), float64(st.Size())/1e6, time.Since(start).Round(time.Millisecond))
	return nil
}
