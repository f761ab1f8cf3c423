package tokenizer

import (
	"slices"

	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// tiktokenSpecials are the special tokens of each encoding, from
// OpenAI's tiktoken_ext/openai_public.py. The ids are facts about the
// encodings; tests check them against github.com/pkoukk/tiktoken-go.
// (This package reads the ranks with tiktoken-go-loader alone: tiktoken-go
// itself imports net/http, which package tokenizer must not depend on.)
var tiktokenSpecials = map[string]map[string]TokenID{
	"cl100k_base": {
		"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
		"<|fim_suffix|>": 100260, "<|endofprompt|>": 100276,
	},
	"o200k_base": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
	"p50k_base":  {"<|endoftext|>": 50256},
	"r50k_base":  {"<|endoftext|>": 50256},
}

// tiktokenRanks loads an encoding's ranks (token bytes → rank) and its
// special tokens (text → id) from the rank files embedded in
// github.com/pkoukk/tiktoken-go-loader, without network access.
func tiktokenRanks(name string) (map[string]int, map[string]TokenID, error) {
	specials, ok := tiktokenSpecials[name]
	if !ok {
		return nil, nil, errorf(CodeUnknownEncoding, name, nil, "want cl100k_base, o200k_base, p50k_base or r50k_base")
	}
	ranks, err := tiktoken_loader.NewOfflineLoader().LoadTiktokenBpe(name + ".tiktoken")
	if err != nil {
		return nil, nil, errorf(CodeIO, name, err, "load tiktoken ranks")
	}
	return ranks, specials, nil
}

// LoadTiktoken returns the Vocabulary of a tiktoken encoding
// ("cl100k_base", "o200k_base"; "p50k_base" and "r50k_base" also work),
// read offline from the rank files embedded in
// github.com/pkoukk/tiktoken-go-loader (the offline loader that
// tiktoken-go users install with tiktoken.SetBpeLoader). Token ids are the ranks; the
// special tokens (<|endoftext|> and the others the encoding defines) are
// stored with SpecialPrefix, <|endoftext|> is the EOS, and there is no BOS.
// Ids between the last rank and the special tokens are holes (nil).
func LoadTiktoken(name string) (*Vocabulary, error) {
	ranks, specials, err := tiktokenRanks(name)
	if err != nil {
		return nil, err
	}
	n := len(ranks)
	for _, id := range specials {
		n = max(n, int(id)+1)
	}
	v := &Vocabulary{
		Tokens:  make([][]byte, n),
		Special: make([]bool, n),
		BOS:     NoToken,
		Width:   n,
		Name:    name,
	}
	for tok, rank := range ranks {
		if rank < 0 || rank >= n || v.Tokens[rank] != nil {
			return nil, errorf(CodeInvalid, name, nil, "rank %d of %q is out of range or used twice", rank, tok)
		}
		v.Tokens[rank] = []byte(tok)
	}
	for s, id := range specials {
		v.Tokens[id] = specialBytes(s)
		v.Special[id] = true
	}
	v.finish(NoToken, specials)
	return v, nil
}

// TiktokenMerges recovers BPE merges from a tiktoken encoding's ranks, so
// that the encoding can be written as a byte-level BPE vocabulary (GGUF
// tokenizer.ggml.tokens and .merges). Tokens are the encoding's tokens in
// rank order, written with the GPT-2 byte map; merges are "left right" in
// the rank order of the token they make.
//
// The recovery is the standard one: for each token of two or more bytes,
// run byte-pair merging on its bytes using only the tokens of lower rank;
// tiktoken's BPE stops with exactly two parts, and those parts are the
// merge that makes the token. Special tokens are not included.
func TiktokenMerges(name string) (tokens, merges []string, err error) {
	ranks, _, err := tiktokenRanks(name)
	if err != nil {
		return nil, nil, err
	}
	byRank := make([]string, len(ranks))
	for tok, r := range ranks {
		if r < 0 || r >= len(byRank) || byRank[r] != "" {
			return nil, nil, errorf(CodeInvalid, name, nil, "ranks are not 0..%d", len(ranks)-1)
		}
		byRank[r] = tok
	}
	tokens = make([]string, len(byRank))
	for r, tok := range byRank {
		tokens[r] = GPT2Encode([]byte(tok))
		if len(tok) < 2 {
			continue
		}
		parts := rankMerge(tok, ranks, r)
		if len(parts) != 2 {
			return nil, nil, errorf(CodeInvalid, name, nil, "token %d %q splits into %d parts, want 2", r, tok, len(parts))
		}
		merges = append(merges, GPT2Encode([]byte(parts[0]))+" "+GPT2Encode([]byte(parts[1])))
	}
	return tokens, merges, nil
}

// rankMerge runs tiktoken's byte-pair merge on tok with the ranks below
// limit: repeatedly join the adjacent pair whose join has the lowest rank.
// Tokens are short, so the quadratic scan is fine here.
func rankMerge(tok string, ranks map[string]int, limit int) []string {
	parts := make([]string, len(tok))
	for i := 0; i < len(tok); i++ {
		parts[i] = tok[i : i+1]
	}
	for len(parts) > 1 {
		best, at := limit, -1
		for i := 0; i+1 < len(parts); i++ {
			if r, ok := ranks[parts[i]+parts[i+1]]; ok && r < best {
				best, at = r, i
			}
		}
		if at < 0 {
			break
		}
		parts[at] += parts[at+1]
		parts = slices.Delete(parts, at+1, at+2)
	}
	return parts
}
