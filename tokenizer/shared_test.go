package tokenizer

import (
	"sync"
	"testing"

	"conform/internal/sharedtest"
)

// sharedFiles caches the parsed ../shared vocabularies across tests: the
// big ones take seconds to read.
var sharedFiles sync.Map // name → *sharedEntry

type sharedEntry struct {
	once sync.Once
	f    *HFFile
	enc  *Encoder
	v    *Vocabulary
	err  error
}

// sharedHF returns the HFFile, Encoder and Vocabulary of a ../shared
// vocabulary, skipping t when ../shared is absent.
func sharedHF(t testing.TB, name string) (*HFFile, *Encoder, *Vocabulary) {
	t.Helper()
	path := sharedtest.Path(t, "vocab", name, "tokenizer.json")
	e, _ := sharedFiles.LoadOrStore(name, &sharedEntry{})
	ent := e.(*sharedEntry)
	ent.once.Do(func() {
		if ent.f, ent.err = ReadHFFile(path); ent.err != nil {
			return
		}
		if ent.enc, ent.err = ent.f.Encoder(); ent.err != nil {
			return
		}
		ent.v, ent.err = ent.f.Vocabulary()
	})
	if ent.err != nil {
		t.Fatalf("loading %s: %v", name, ent.err)
	}
	return ent.f, ent.enc, ent.v
}
