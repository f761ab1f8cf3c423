package tokenizer

import (
	"slices"
	"strings"
	"testing"

	"conform/gguf"
)

// FuzzEncode: Encode never panics, and decoding its ids gives the text back
// (byte for byte on the byte-level tokenizer, with the per-segment "▁"
// prefix on the SentencePiece-style one).
func FuzzEncode(f *testing.F) {
	for _, tt := range tinyEncodeTests {
		f.Add(tt.text)
	}
	f.Add("a<|eot_id|></s>\xff<tool>  \n")
	bl := mustEncoder(f, tinyPath("bytelevel"))
	blv := mustLoadHF(f, tinyPath("bytelevel"))
	spf := mustReadHF(f, tinyPath("sentencepiece"))
	spe, err := spf.Encoder()
	if err != nil {
		f.Fatal(err)
	}
	spv, err := spf.Vocabulary()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got := string(blv.Decode(bl.Encode(s))); got != s {
			t.Errorf("bytelevel: Decode(Encode(%q)) = %q", s, got)
		}
		if got, want := string(spv.Decode(spe.Encode(s))), prependedText(spf, s); got != want {
			t.Errorf("sentencepiece: Decode(Encode(%q)) = %q, want %q", s, got, want)
		}
	})
}

// FuzzParseHF: parsing any tokenizer.json and building its Vocabulary and
// Encoder never panics; when all succeed, encoding a short text works.
func FuzzParseHF(f *testing.F) {
	// Small seeds (the tiny testdata files are 6 kB, which makes the
	// fuzzer's minimization crawl), one per BPE kind.
	f.Add([]byte(`{"added_tokens":[{"id":5,"content":"<|e|>","special":true}],` +
		`"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"\\p{L}+|\\s+(?!\\S)|\\s+|\\p{N}{1,3}"},"behavior":"Isolated"},{"type":"ByteLevel","add_prefix_space":false,"use_regex":false}]},` +
		`"model":{"type":"BPE","ignore_merges":true,"vocab":{"a":0,"b":1,"Ġ":2,"ab":3,"Ġab":4},"merges":["a b","Ġ ab"]}}`))
	f.Add([]byte(`{"added_tokens":[{"id":0,"content":"<unk>","special":true}],` +
		`"normalizer":{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},{"type":"Replace","pattern":{"String":" "},"content":"▁"}]},` +
		`"model":{"type":"BPE","unk_token":"<unk>","fuse_unk":true,"byte_fallback":true,"vocab":{"<unk>":0,"<0x41>":1,"▁":2,"a":3,"▁a":4},"merges":[["▁","a"]]}}`))
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":[["a","b"]]},"added_tokens":[{"id":3,"content":"<x>","special":true}]}`))
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":0},"merges":[]},"normalizer":{"type":"Sequence","normalizers":[{"type":"Replace","pattern":{"Regex":"a*"},"content":"b"}]},"pre_tokenizer":{"type":"Metaspace"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		hf, err := parseHFFile(data, "fuzz.json")
		if err != nil {
			return
		}
		_ = hf.Tokens()
		_ = hf.TokenTypes()
		v, verr := hf.Vocabulary()
		enc, eerr := hf.Encoder()
		if verr != nil || eerr != nil {
			return
		}
		for _, id := range enc.Encode("hello world <x> ab\xff") {
			if id < 0 {
				t.Fatalf("Encode gave a negative id %d", id)
			}
		}
		_ = v.Fingerprint()
	})
}

// fakeGGUF is a map-backed ggufMeta for fuzzing the GGUF vocabulary reader
// without writing files.
type fakeGGUF struct {
	strs    map[string]string
	lists   map[string][]string
	ints    map[string][]int32
	u32     map[string]uint32
	tensors map[string]gguf.TensorInfo
}

func (g fakeGGUF) String(k string) (string, bool)          { s, ok := g.strs[k]; return s, ok }
func (g fakeGGUF) Strings(k string) ([]string, bool)       { s, ok := g.lists[k]; return s, ok }
func (g fakeGGUF) Int32s(k string) ([]int32, bool)         { s, ok := g.ints[k]; return s, ok }
func (g fakeGGUF) Uint32(k string) (uint32, bool)          { s, ok := g.u32[k]; return s, ok }
func (g fakeGGUF) Tensor(k string) (gguf.TensorInfo, bool) { s, ok := g.tensors[k]; return s, ok }

// FuzzGGUFVocab: any token list, type list and EOS/BOS ids give a
// Vocabulary or an error, never a panic, and special tokens always carry
// the 0xFF prefix.
func FuzzGGUFVocab(f *testing.F) {
	f.Add("llama", "<unk>\x00<s>\x00</s>\x00<0x0A>\x00▁a", []byte{2, 3, 3, 6, 1}, uint32(2), uint32(1), uint64(10))
	f.Add("gpt2", "Ġ\x00a\x00<|eot_id|>\x00", []byte{1, 1, 1, 5}, uint32(9), uint32(0), uint64(0))
	f.Fuzz(func(t *testing.T, model, tokens string, types []byte, eos, bos uint32, width uint64) {
		toks := strings.Split(tokens, "\x00")
		ts := make([]int32, len(types))
		for i, b := range types {
			ts[i] = int32(b % 8)
		}
		g := fakeGGUF{
			strs:    map[string]string{ggufKeyModel: model, ggufKeyArch: "llama"},
			lists:   map[string][]string{ggufKeyTokens: toks},
			ints:    map[string][]int32{ggufKeyTypes: ts},
			u32:     map[string]uint32{ggufKeyEOS: eos, ggufKeyBOS: bos, "llama.vocab_size": uint32(width % (1 << 20))},
			tensors: map[string]gguf.TensorInfo{ggufOutputTensor: {Name: ggufOutputTensor, Dims: []uint64{1, width}}},
		}
		v, err := vocabularyFromGGUF(g, "fuzz.gguf")
		if err != nil {
			return
		}
		if v.Width < len(v.Tokens) {
			t.Errorf("Width %d < %d tokens", v.Width, len(v.Tokens))
		}
		for id, tok := range v.Tokens {
			if v.Special[id] && (len(tok) == 0 || tok[0] != SpecialPrefix) {
				t.Errorf("special token %d = %q lacks the 0xFF prefix", id, tok)
			}
		}
		for _, e := range v.EOS {
			if e < 0 || int(e) >= len(v.Tokens) {
				t.Errorf("EOS id %d outside the %d tokens", e, len(v.Tokens))
			}
		}
	})
}

// llamaSplitSeeds cover every alternative of the Llama-3 pattern.
var llamaSplitSeeds = []string{
	"", "don't I'M they'll we'Re you'VE", "'hello 'x", " hello\tworld", "12345 3.14", "١٢٣٤ ⅷ",
	"{\"a\": [1, 2]}\n\n", "  \n\n  x", "a  b", "a \t\n", "x   ", "\r\n\r\n", "\u00a0\u2003word",
	"\xff\xfeabc", "é'ſ 'K", "日本語 テキスト", "!!!\n\n...", " ?!\r\n", "emoji 🎉 x",
}

func splitAll(m matcher, s string) [][2]int {
	var out [][2]int
	m.findAll(s, func(a, b int) { out = append(out, [2]int{a, b}) })
	return out
}

// FuzzLlamaSplit holds the hand-written Llama-3/Qwen2 pre-tokenizer to
// regexp2's matches of the same patterns.
func FuzzLlamaSplit(f *testing.F) {
	for _, s := range llamaSplitSeeds {
		f.Add(s)
	}
	type pair struct {
		fast llamaSplit
		re   matcher
	}
	var pairs []pair
	for _, p := range []struct {
		expr   string
		digits int
	}{{llama3Regex, 3}, {qwen2Regex, 1}} {
		re, err := compileRegex(p.expr, "test")
		if err != nil {
			f.Fatal(err)
		}
		pairs = append(pairs, pair{llamaSplit{p.digits}, re})
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range pairs {
			got, want := splitAll(p.fast, s), splitAll(p.re, s)
			if !slices.Equal(got, want) {
				t.Errorf("llamaSplit{%d}.findAll(%q) = %v, regexp2 gives %v", p.fast.maxDigits, s, got, want)
			}
		}
	})
}
