package runner

import (
	"context"
	"fmt"

	"conform/sampler"
)

// A request under a constraint that forces "hi" then lets the model choose
// one of two tokens; the forced tokens go out without sampling.
func Example() {
	eng := newFakeEngine(40) // any Engine: the llama.cpp adapter in production
	r, err := New(eng, Config{Slots: 2, ContextSize: 64, EOS: []TokenID{39}, Detokenize: letters})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.Run(ctx)

	c := newScript(39, true, []TokenID{7}, []TokenID{8}, []TokenID{0, 4}) // "h" "i" then "a" or "e"
	events, err := r.Submit(ctx, Request{
		Prompt: []TokenID{1, 2, 3},
		Params: sampler.Params{Temperature: sampler.Temp(0)},
		Guide:  c,
	})
	if err != nil {
		panic(err)
	}
	for ev := range events {
		if ev.Finish != "" {
			fmt.Printf("finish %s (%s), %d of %d tokens forced\n", ev.Finish, ev.Finish.OpenAI(), ev.Usage.ForcedTokens, ev.Usage.CompletionTokens)
			break
		}
		fmt.Printf("token %d %q forced=%v\n", ev.Token, ev.Text, ev.Forced)
	}
	// Output:
	// token 7 "h" forced=true
	// token 8 "i" forced=true
	// token 0 "a" forced=false
	// finish constraint (stop), 2 of 3 tokens forced
}
