package hub_test

import (
	"fmt"

	"conform/hub"
)

func ExampleParseRef() {
	for _, s := range []string{
		"bartowski/Llama-3.2-1B-Instruct-GGUF",
		"bartowski/Llama-3.2-1B-Instruct-GGUF:Q8_0",
		"bartowski/Llama-3.2-1B-Instruct-GGUF/Llama-3.2-1B-Instruct-Q6_K.gguf",
		"Llama-3.2-1B",
	} {
		ref, err := hub.ParseRef(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("repo=%s quant=%q file=%q\n", ref.Repo, ref.Quant, ref.File)
	}
	// Output:
	// repo=bartowski/Llama-3.2-1B-Instruct-GGUF quant="" file=""
	// repo=bartowski/Llama-3.2-1B-Instruct-GGUF quant="Q8_0" file=""
	// repo=bartowski/Llama-3.2-1B-Instruct-GGUF quant="" file="Llama-3.2-1B-Instruct-Q6_K.gguf"
	// hub: Llama-3.2-1B: bad model reference: missing '/' between organisation and repository (write it as org/repo, org/repo:QUANT or org/repo/file.gguf)
}
