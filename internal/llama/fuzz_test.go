//go:build cgo

package llama

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"conform/gguf"
	"conform/internal/mkmodel"
)

// nKinds is the number of value kinds FuzzLoadMetadata writes.
const nKinds = 9

// FuzzLoadMetadata replaces one metadata value of a small valid model by a
// fuzzed value of a fuzzed kind (uint32, int32, string, a string array, a
// short int32 array, a float32, a float32 array, a nested array, a bool)
// and loads the result: Load must return a model or an *Error, never abort
// the process.
// The seeds (every key × every kind) run with the tests; a live run,
// go test -run '^$' -fuzz FuzzLoadMetadata ./internal/llama, first rebuilds
// llama.cpp with fuzz instrumentation (minutes).
func FuzzLoadMetadata(f *testing.F) {
	var buf bytes.Buffer
	if _, err := mkmodel.WriteTo(&buf, mkmodel.Options{Vocab: smallVocab(), Seed: 3}); err != nil {
		f.Fatal(err)
	}
	data := buf.Bytes()
	src, err := gguf.Parse(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		f.Fatal(err)
	}
	for i := range src.KVs {
		for kind := range uint8(nKinds) {
			f.Add(uint8(i), kind, uint32(0))
		}
		f.Add(uint8(i), uint8(0), uint32(1))
	}
	f.Add(uint8(0), uint8(0), uint32(1<<31))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, idx, kind uint8, val uint32) {
		kvs := src.KVs
		target := kvs[int(idx)%len(kvs)].Key
		if target == gguf.KeyAlignment {
			return
		}
		w := gguf.NewWriter()
		for _, kv := range kvs {
			switch kv.Key {
			case gguf.KeyAlignment:
			case target:
				switch kind % nKinds {
				case 0:
					w.AddUint32(kv.Key, val)
				case 1:
					w.AddInt32(kv.Key, int32(val))
				case 2:
					w.AddString(kv.Key, strconv.Itoa(int(val)))
				case 3:
					w.AddStrings(kv.Key, []string{"a", strconv.Itoa(int(val))})
				case 4:
					w.AddInt32s(kv.Key, []int32{int32(val)})
				case 5:
					w.AddFloat32(kv.Key, float32(val))
				case 6:
					w.AddFloat32s(kv.Key, []float32{float32(val)})
				case 7:
					w.Add(kv.Key, gguf.Value{Type: gguf.TypeArray, Data: gguf.Array{Elem: gguf.TypeArray, Data: []gguf.Array{{Elem: gguf.TypeUint32, Data: []uint32{val}}}}})
				case 8:
					w.AddBool(kv.Key, val&1 == 1)
				}
			default:
				w.Add(kv.Key, kv.Value)
			}
		}
		for _, ti := range src.Tensors {
			b, err := src.TensorData(bytes.NewReader(data), ti)
			if err != nil {
				t.Fatal(err)
			}
			w.AddTensor(ti.Name, ti.Type, ti.Dims, b)
		}
		p := filepath.Join(dir, "fuzz.gguf")
		if err := w.WriteFile(p); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(p)
		m, err := Load(p, Params{ContextSize: 256, Threads: 1})
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Load(%s = %d): error of type %T: %v", target, val, err, err)
			}
			return
		}
		defer m.Close()
		if err := m.Decode(Batch{{Token: 1, Logits: true}}); err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Decode after Load(%s = %d): error of type %T: %v", target, val, err, err)
			}
		}
	})
}
