//go:build cgo

package main

import (
	"fmt"
	"testing"
)

// TestCatalogE2E runs the bad-input catalog against the real server: the
// --demo model through llama.cpp, with the Hermes template when the shared
// corpus is there. This run is the catalog's acceptance.
func TestCatalogE2E(t *testing.T) {
	args := []string{"--api-key", catalogKey, "--max-body-bytes", fmt.Sprint(catalogBodyLimit)}
	if _, path := catalogTemplate(); path != "" {
		args = append(args, "--chat-template", path)
	}
	s := startE2E(t, args...)
	runCatalog(t, s.url)
}
