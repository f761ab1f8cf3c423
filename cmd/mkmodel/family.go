package main

import (
	"fmt"
	"path/filepath"
	"sort"

	"conform/internal/mkmodel"
	"conform/tokenizer"
)

// A family is a reasoning/tool-call model family: the chat template its
// models ship with and the marker tokens that template writes, so that a
// synthetic model of the family renders and tokenizes its prompts (and its
// think blocks and tool calls) as the real model does, on any vocabulary
// (../shared/vocab/qwen3 serves them all).
type family struct {
	// template is the file name of the family's chat template in
	// shared/templates (used with -shared only; the template is read at
	// build time and never copied into this repository).
	template string
	// markers are the tokens the template writes, with the GGUF token type
	// the real model's file gives them.
	markers []marker
	// bos and eos name the real model's BOS and EOS tokens ("" keeps the
	// vocabulary's). The template writes bos_token itself where it wants
	// one, so add_bos_token stays the vocabulary's.
	bos, eos string
}

// A marker is one token of a family. typ is tokenizer.TokenTypeControl for
// the real model's special tokens (kept whole, never produced from text by
// a text-only tokenizer, written with the special-token marker by
// conform/tokenizer) and tokenizer.TokenTypeUserDefined for its added
// non-special tokens (kept whole, but plain text): Qwen's <think> and
// <tool_call> are added with "special": false in the real tokenizer.json,
// and llama.cpp's converter keeps them user-defined, while it makes every
// <|…|> and <｜…｜> token control. id is the real model's id, used when the
// vocabulary has an unused placeholder there (gpt-oss's harmony tokens in
// the o200k vocabulary), else -1.
type marker struct {
	text string
	typ  int32
	id   int
}

func control(texts ...string) []marker {
	return markers(tokenizer.TokenTypeControl, texts...)
}

func userDefined(texts ...string) []marker {
	return markers(tokenizer.TokenTypeUserDefined, texts...)
}

func markers(typ int32, texts ...string) []marker {
	out := make([]marker, len(texts))
	for i, t := range texts {
		out[i] = marker{text: t, typ: typ, id: -1}
	}
	return out
}

func concat(lists ...[]marker) []marker {
	var out []marker
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// qwenMarkers are Qwen3's chat and tool tokens (all in the Qwen3
// vocabulary already, with these types).
var qwenMarkers = concat(
	control("<|im_start|>", "<|im_end|>"),
	userDefined("<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"),
)

// deepseekMarkers are DeepSeek's chat and tool tokens (V3.1 and the R1
// distills share them; <think> is added but not special there, as in Qwen).
var deepseekMarkers = concat(
	control("<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>",
		"<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>",
		"<｜tool▁outputs▁begin｜>", "<｜tool▁outputs▁end｜>", "<｜tool▁output▁begin｜>", "<｜tool▁output▁end｜>"),
	userDefined("<think>", "</think>"),
)

// families are the families -family offers.
var families = map[string]family{
	"qwen3": {template: "qwen3.jinja", markers: qwenMarkers, eos: "<|im_end|>"},
	"qwen3.5": {template: "Qwen3.5-4B.jinja", eos: "<|im_end|>", markers: concat(qwenMarkers,
		control("<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"))},
	"deepseek-v3.1": {template: "deepseek-ai-DeepSeek-V3.1.jinja", markers: deepseekMarkers,
		bos: "<｜begin▁of▁sentence｜>", eos: "<｜end▁of▁sentence｜>"},
	"deepseek-r1": {template: "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", markers: deepseekMarkers,
		bos: "<｜begin▁of▁sentence｜>", eos: "<｜end▁of▁sentence｜>"},
	"kimi-k2": {template: "moonshotai-Kimi-K2.jinja", eos: "<|im_end|>", markers: control(
		"<|im_system|>", "<|im_user|>", "<|im_assistant|>", "<|im_middle|>", "<|im_end|>",
		"<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>",
		"<|tool_call_argument_begin|>", "<|tool_call_end|>",
		"<|media_start|>", "<|media_content|>", "<|media_end|>", "<|media_pad|>")},
	// gpt-oss: the harmony tokens at their o200k_harmony ids (tiktoken's
	// openai_public.py), which are holes of o200k_base.
	"gpt-oss": {template: "openai-gpt-oss-120b.jinja", eos: "<|return|>", markers: []marker{
		{"<|return|>", tokenizer.TokenTypeControl, 200002},
		{"<|constrain|>", tokenizer.TokenTypeControl, 200003},
		{"<|channel|>", tokenizer.TokenTypeControl, 200005},
		{"<|start|>", tokenizer.TokenTypeControl, 200006},
		{"<|end|>", tokenizer.TokenTypeControl, 200007},
		{"<|message|>", tokenizer.TokenTypeControl, 200008},
		{"<|call|>", tokenizer.TokenTypeControl, 200012},
	}},
}

// familyNames returns the family names, sorted.
func familyNames() []string {
	names := make([]string, 0, len(families))
	for n := range families {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// templatePath is the family's chat template under the shared directory.
func (f family) templatePath(shared string) string {
	return filepath.Join(shared, "templates", f.template)
}

// apply gives v the family's markers and BOS/EOS. A marker the vocabulary
// has as an added token (control, user-defined or unused) takes the
// family's type; one it lacks goes at the real model's id when that id is
// an unused placeholder, else at the end. A marker that is an ordinary
// token of the vocabulary is an error: making it special would take it
// away from text.
func (f family) apply(v *mkmodel.Vocab) error {
	ids := make(map[string]int, len(v.Tokens))
	for id, t := range v.Tokens {
		if _, dup := ids[t]; !dup {
			ids[t] = id
		}
	}
	for _, m := range f.markers {
		id, ok := ids[m.text]
		switch {
		case ok && v.Types[id] == tokenizer.TokenTypeNormal:
			return fmt.Errorf("marker %q is an ordinary token (id %d) of %s", m.text, id, v.Source)
		case ok:
		case m.id >= 0 && m.id < len(v.Tokens) && v.Types[m.id] == tokenizer.TokenTypeUnused:
			id = m.id
			delete(ids, v.Tokens[id])
			v.Tokens[id] = m.text
		default:
			id = len(v.Tokens)
			v.Tokens = append(v.Tokens, m.text)
			v.Types = append(v.Types, 0)
			if v.Scores != nil {
				v.Scores = append(v.Scores, 0)
			}
		}
		v.Types[id] = m.typ
		ids[m.text] = id
	}
	for _, s := range []struct {
		name string
		id   *int
	}{{f.bos, &v.BOS}, {f.eos, &v.EOS}} {
		if s.name == "" {
			continue
		}
		id, ok := ids[s.name]
		if !ok {
			return fmt.Errorf("%q is not a token of %s", s.name, v.Source)
		}
		*s.id = id
	}
	return nil
}
