//go:build cgo && !unix

package llama

/*
#include "ollama/llama.h"
*/
import "C"

// decoder is the unix decode thread (decoder_unix.go); elsewhere there is
// none and Decode calls llama_decode in a cgo call.
type decoder struct{}

func newDecoder() *decoder { return nil }

func (d *decoder) decode(ctx *C.struct_llama_context, batch C.struct_llama_batch) int {
	return int(C.llama_decode(ctx, batch))
}

func (d *decoder) close() {}
