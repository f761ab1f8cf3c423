//go:build !cgo

package main

import (
	"errors"
	"flag"
)

// withCgo reports a build with cgo.
const withCgo = false

// modelFlag is accepted without cgo so that the command line is the same;
// -engine llamacpp then fails.
var modelFlag = flag.String("model", "", "GGUF model whose vocabulary -engine llamacpp uses (needs cgo)")

func newLlamaEngine(config) (engine, error) {
	_ = *modelFlag
	return nil, errors.New("-engine llamacpp needs a build with cgo (llama.cpp)")
}
