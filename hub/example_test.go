package hub_test

import (
	"context"
	"errors"
	"fmt"
	"os"

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

// ExampleResolve shows how a command wires --hf, --models-dir,
// --hf-endpoint, HF_ENDPOINT and HF_TOKEN into Resolve. (It needs the
// network, so it is compiled but not run.)
func ExampleResolve() {
	ref, err := hub.ParseRef("bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M") // --hf
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	endpoint := os.Getenv("HF_ENDPOINT") // --hf-endpoint wins over it
	path, err := hub.Resolve(context.Background(), ref, hub.Options{
		Endpoint: endpoint,
		Token:    os.Getenv("HF_TOKEN"),
		CacheDir: "", // --models-dir; empty means hub.DefaultCacheDir()
		Progress: os.Stderr,
	})
	var he *hub.Error
	switch {
	case errors.As(err, &he) && he.Code == hub.CodeNetwork:
		fmt.Fprintln(os.Stderr, err) // "… could not reach …: pass a local file with --model PATH, or try --demo"
		os.Exit(1)
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("loading", path)
}
