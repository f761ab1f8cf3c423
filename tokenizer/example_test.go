package tokenizer_test

import (
	"fmt"

	"conform/tokenizer"
)

// Load a vocabulary and an encoder from one tokenizer.json, encode text
// with an added special token in it, and decode the ids back to bytes.
func Example() {
	f, err := tokenizer.ReadHFFile("testdata/bytelevel/tiny-tokenizer.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	v, err := f.Vocabulary()
	if err != nil {
		fmt.Println(err)
		return
	}
	enc, err := f.Encoder()
	if err != nil {
		fmt.Println(err)
		return
	}
	ids := enc.Encode("hello then<|eot_id|>")
	fmt.Println(f.Kind, ids)
	fmt.Printf("%q\n", v.Decode(ids))
	fmt.Printf("%q special=%v eos=%v\n", v.Tokens[301], v.Special[301], v.IsEOS(301))
	// Output:
	// byte-level [262 258 110 301]
	// "hello then<|eot_id|>"
	// "\xff<|eot_id|>" special=true eos=true
}

// Special tokens of tiktoken encodings are stored with the 0xFF prefix.
func ExampleLoadTiktoken() {
	v, err := tokenizer.LoadTiktoken("cl100k_base")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(v.Width, v.EOS, v.BOS)
	fmt.Printf("%q %q\n", v.Tokens[100257], v.Decode([]tokenizer.TokenID{15339, 1917}))
	// Output:
	// 100277 [100257] -1
	// "\xff<|endoftext|>" "hello world"
}

// GPT2Encode and GPT2Decode convert between raw bytes and the text form
// byte-level vocabularies are written in.
func ExampleGPT2Encode() {
	s := tokenizer.GPT2Encode([]byte(" hello\n"))
	b, ok := tokenizer.GPT2Decode(s)
	fmt.Printf("%s %q %v\n", s, b, ok)
	// Output:
	// ĠhelloĊ " hello\n" true
}
