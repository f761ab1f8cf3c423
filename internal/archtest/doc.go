// Package archtest holds the import-direction test that enforces the
// project's layering (STYLE rule 2): each stage imports only the stages
// before it, only cmd/serve knows HTTP, and only internal/llama knows cgo.
// TestDocCommands checks that the make and go commands the READMEs show
// work as written on a fresh clone (docs_test.go).
package archtest
