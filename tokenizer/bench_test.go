package tokenizer

import (
	"strconv"
	"strings"
	"testing"

	"conform/internal/sharedtest"
)

// benchText is a mixed JSON/prose text of about 2 kB.
var benchText = strings.Repeat(`{"name": "get_weather", "arguments": {"city": "Oslo", "days": 3}} The quick brown fox jumps over the lazy dog. `, 18)

func BenchmarkEncode(b *testing.B) {
	b.Run("tiny-bytelevel", func(b *testing.B) {
		enc := mustEncoder(b, tinyPath("bytelevel"))
		b.SetBytes(int64(len(benchText)))
		for b.Loop() {
			enc.Encode(benchText)
		}
	})
	for _, name := range sharedVocabs {
		b.Run(name, func(b *testing.B) {
			_, enc, _ := sharedHF(b, name)
			b.SetBytes(int64(len(benchText)))
			for b.Loop() {
				enc.Encode(benchText)
			}
		})
	}
}

// BenchmarkEncodeMaskBench encodes the first 500 MaskBench schemas' test
// texts with Llama-3.1, the workload the MaskBench reference tokens come
// from.
func BenchmarkEncodeMaskBench(b *testing.B) {
	_, enc, _ := sharedHF(b, "llama3_1")
	var texts []string
	n := 0
	readJSONL(b, sharedtest.Path(b, "maskbench", "dev.jsonl"), maskBenchShort, func(_ int, s maskBenchSchema) {
		for _, tc := range s.Tests {
			texts = append(texts, tc.Text)
			n += len(tc.Text)
		}
	})
	b.SetBytes(int64(n))
	for b.Loop() {
		for _, t := range texts {
			enc.Encode(t)
		}
	}
}

// BenchmarkBPELongWord merges one long pre-token without the cache: the
// heap-based merge is O(n log n) in its length. SentencePiece-style
// tokenizers without a pre-tokenizer (Llama-2) see whole texts as one word.
func BenchmarkBPELongWord(b *testing.B) {
	for _, size := range []int{1 << 10, 1 << 14} {
		b.Run("llama2-"+strconv.Itoa(size), func(b *testing.B) {
			_, enc, _ := sharedHF(b, "llama2")
			w := "▁" + strings.ReplaceAll(benchText, " ", "▁")
			for len(w) < size {
				w += w
			}
			w = w[:size]
			b.SetBytes(int64(len(w)))
			for b.Loop() {
				enc.model.encodeWord(w, nil)
			}
		})
		b.Run("llama3_1-letters-"+strconv.Itoa(size), func(b *testing.B) {
			_, enc, _ := sharedHF(b, "llama3_1")
			w := strings.Repeat("abcdefghij", size/10+1)[:size]
			b.SetBytes(int64(len(w)))
			for b.Loop() {
				enc.model.encodeWord(w, nil)
			}
		})
	}
}

func BenchmarkLoadHF(b *testing.B) {
	path := sharedtest.Path(b, "vocab", "llama3_1", "tokenizer.json")
	for b.Loop() {
		if _, err := LoadHF(path); err != nil {
			b.Fatal(err)
		}
	}
}
