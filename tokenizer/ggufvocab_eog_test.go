package tokenizer

import (
	"reflect"
	"testing"

	"conform/gguf"
)

// metaMap is a ggufMeta over plain maps, for tables of token lists.
type metaMap struct {
	strs   map[string]string
	lists  map[string][]string
	ints   map[string][]int32
	uint32 map[string]uint32
}

func (m metaMap) String(k string) (string, bool)    { s, ok := m.strs[k]; return s, ok }
func (m metaMap) Strings(k string) ([]string, bool) { s, ok := m.lists[k]; return s, ok }
func (m metaMap) Int32s(k string) ([]int32, bool)   { s, ok := m.ints[k]; return s, ok }
func (m metaMap) Uint32(k string) (uint32, bool)    { u, ok := m.uint32[k]; return u, ok }
func (m metaMap) Tensor(string) (gguf.TensorInfo, bool) {
	return gguf.TensorInfo{}, false
}

// TestGGUFEndOfGeneration checks the EOS ids against llama.cpp's
// end-of-generation set (llama-vocab.cpp, v0.24.0): harmony's <|return|>
// and <|call|> end a turn and <|end|> then does not (it closes gpt-oss's
// analysis channel); <|end|> alone (Phi-3) does; Qwen's FIM pad, repo and
// file separator tokens do not, unlike llama.cpp (see llamaCppEOGNames).
func TestGGUFEndOfGeneration(t *testing.T) {
	control := int32(TokenTypeControl)
	tests := []struct {
		name   string
		tokens []string
		ids    map[string]uint32 // GGUF keys naming ids
		eos    []TokenID
	}{
		{"harmony", []string{"a", "<|return|>", "<|constrain|>", "<|channel|>", "<|start|>", "<|end|>", "<|message|>", "<|call|>", "<|endoftext|>"},
			map[string]uint32{ggufKeyEOS: 1}, []TokenID{1, 7, 8}},
		{"harmony with eot <|end|>", []string{"a", "<|return|>", "<|end|>", "<|call|>"},
			map[string]uint32{ggufKeyEOS: 1, ggufKeyEOT: 2}, []TokenID{1, 3}},
		{"end without return and call", []string{"a", "<|end|>", "<|endoftext|>"}, nil, []TokenID{1, 2}},
		{"return without call keeps end", []string{"a", "<|return|>", "<|end|>"}, nil, []TokenID{1, 2}},
		{"qwen fim", []string{"a", "<|endoftext|>", "<|im_end|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>"},
			nil, []TokenID{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			types := make([]int32, len(tt.tokens))
			for i, s := range tt.tokens {
				if len(s) > 1 && s[0] == '<' {
					types[i] = control
				} else {
					types[i] = int32(TokenTypeNormal)
				}
			}
			m := metaMap{strs: map[string]string{ggufKeyModel: "gpt2"}, lists: map[string][]string{ggufKeyTokens: tt.tokens},
				ints: map[string][]int32{ggufKeyTypes: types}, uint32: tt.ids}
			v, err := vocabularyFromGGUF(m, tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(v.EOS, tt.eos) {
				t.Errorf("vocabularyFromGGUF(%q).EOS = %v, want %v", tt.tokens, v.EOS, tt.eos)
			}
			for id, s := range tt.tokens {
				if s == "<|end|>" && !v.Special[id] {
					t.Errorf("<|end|> is not special")
				}
			}
		})
	}
}
