//go:build !cgo

package llama

// buildCPU reports no kernels: without cgo llama.cpp is not linked in.
func buildCPU() (cgo bool, level string, built []string) { return false, "", nil }
