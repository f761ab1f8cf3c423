// Package token defines the one token id type of the whole pipeline. It is
// a leaf: every stage that names tokens (fsm, tokenizer, sampler, runner,
// turn, internal/llama) declares its TokenID as an alias of ID, so an id
// read by the tokenizer, masked by fsm, sampled by sampler, decoded by
// llama.cpp and streamed by runner is the same Go type at every boundary,
// with no conversion to write or to get wrong. It imports nothing, so that
// no stage has to import another stage just for a number.
package token

// ID names a token of a model's vocabulary: an index into the vocabulary's
// byte strings (tokenizer.Vocabulary.Tokens, fsm.NewTokenIndex's list), a
// column of a logits row, a bit of a mask (sampler, fsm), and llama.cpp's
// llama_token, which is an int32 too. Negative values are never tokens;
// packages use -1 for "none" (tokenizer.NoToken, runner.Event.Token in a
// final event).
type ID int32
