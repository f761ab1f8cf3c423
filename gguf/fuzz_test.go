package gguf

import (
	"bytes"
	"testing"
)

// reencode writes f's metadata (no tensors) with a Writer.
func reencode(t *testing.T, f *File) []byte {
	t.Helper()
	w := NewWriter()
	for _, kv := range f.KVs {
		if kv.Key == KeyAlignment {
			continue // the writer adds its own
		}
		w.Add(kv.Key, kv.Value)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatalf("re-encoding parsed metadata: %v", err)
	}
	return buf.Bytes()
}

// FuzzParse checks that Parse never panics, that every tensor it accepts
// lies inside the file, and that the metadata it returns re-encodes to a
// file that parses to the same bytes again.
func FuzzParse(f *testing.F) {
	f.Add(sample(f))
	f.Add([]byte("GGUF"))
	f.Add(header(3, 0, 0))
	f.Add(cat(header(3, 0, 1), kvBytes("k", TypeArray, cat(u32b(uint32(TypeArray)), u64b(1), u32b(uint32(TypeString)), u64b(1), u64b(1), []byte("x"))...)))
	f.Add(cat(header(3, 1, 0), u64b(1), []byte("t"), u32b(1), u64b(8), u32b(0), u64b(0), make([]byte, 64)))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Parse: error of type %T, want *Error: %v", err, err)
			}
			return
		}
		for _, ti := range file.Tensors {
			if n, ok := ti.Size(); ok && file.DataOffset+int64(ti.Offset)+n > int64(len(data)) {
				t.Fatalf("tensor %q [%d,+%d) accepted past the end of %d bytes", ti.Name, file.DataOffset+int64(ti.Offset), n, len(data))
			}
		}
		once := reencode(t, file)
		again, err := Parse(bytes.NewReader(once), int64(len(once)))
		if err != nil {
			t.Fatalf("Parse(re-encoded): %v", err)
		}
		if twice := reencode(t, again); !bytes.Equal(once, twice) {
			t.Fatalf("re-encoding is not stable:\n%x\n%x", once, twice)
		}
	})
}
