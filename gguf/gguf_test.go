package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// allValues has one pair of every value type, arrays of every element type
// and a nested array.
var allValues = []KV{
	{"u8", Value{TypeUint8, uint8(200)}},
	{"i8", Value{TypeInt8, int8(-7)}},
	{"u16", Value{TypeUint16, uint16(65000)}},
	{"i16", Value{TypeInt16, int16(-30000)}},
	{"u32", Value{TypeUint32, uint32(4000000000)}},
	{"i32", Value{TypeInt32, int32(-2000000000)}},
	{"f32", Value{TypeFloat32, float32(1e-5)}},
	{"bool", Value{TypeBool, true}},
	{"str", Value{TypeString, "héllo <|im_start|>"}},
	{"empty", Value{TypeString, ""}},
	{"u64", Value{TypeUint64, uint64(math.MaxUint64)}},
	{"i64", Value{TypeInt64, int64(math.MinInt64)}},
	{"f64", Value{TypeFloat64, math.Pi}},
	{"a.u8", Value{TypeArray, Array{TypeUint8, []uint8{0, 1, 255}}}},
	{"a.i8", Value{TypeArray, Array{TypeInt8, []int8{-128, 127}}}},
	{"a.u16", Value{TypeArray, Array{TypeUint16, []uint16{1, 65535}}}},
	{"a.i16", Value{TypeArray, Array{TypeInt16, []int16{-1, 2}}}},
	{"a.u32", Value{TypeArray, Array{TypeUint32, []uint32{7, 8, 9}}}},
	{"a.i32", Value{TypeArray, Array{TypeInt32, []int32{1, 3, 4, -1}}}},
	{"a.f32", Value{TypeArray, Array{TypeFloat32, []float32{-1.5, 0, 2}}}},
	{"a.bool", Value{TypeArray, Array{TypeBool, []bool{true, false}}}},
	{"a.str", Value{TypeArray, Array{TypeString, []string{"Ġthe", "a b", ""}}}},
	{"a.u64", Value{TypeArray, Array{TypeUint64, []uint64{1 << 40}}}},
	{"a.i64", Value{TypeArray, Array{TypeInt64, []int64{-1 << 40}}}},
	{"a.f64", Value{TypeArray, Array{TypeFloat64, []float64{2.5}}}},
	{"a.empty", Value{TypeArray, Array{TypeInt32, []int32{}}}},
	{"a.nested", Value{TypeArray, Array{TypeArray, []Array{
		{TypeString, []string{"x", "y"}},
		{TypeArray, []Array{{TypeUint8, []uint8{5}}}},
	}}}},
}

func f16Ones(n int) []byte {
	b := make([]byte, 2*n)
	for i := range n {
		binary.LittleEndian.PutUint16(b[2*i:], 0x3c00)
	}
	return b
}

func f32Seq(n int) []byte {
	b := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(i)))
	}
	return b
}

// sample writes a file with allValues and three tensors.
func sample(t testing.TB) []byte {
	t.Helper()
	w := NewWriter()
	for _, kv := range allValues {
		w.Add(kv.Key, kv.Value)
	}
	w.AddTensor("a", TensorF32, []uint64{3}, f32Seq(3))
	w.AddTensor("b", TensorF16, []uint64{5, 3}, f16Ones(15))
	w.AddTensor("c", TensorQ8_0, []uint64{32, 2}, make([]byte, 68))
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatalf("WriteTo: %v", err)
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	data := sample(t)
	f, err := Parse(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want := append(append([]KV(nil), allValues...), KV{KeyAlignment, Value{TypeUint32, uint32(32)}})
	if !reflect.DeepEqual(f.KVs, want) {
		for i := range max(len(f.KVs), len(want)) {
			if i >= len(f.KVs) || i >= len(want) || !reflect.DeepEqual(f.KVs[i], want[i]) {
				t.Errorf("KV %d: got %#v, want %#v", i, f.KVs[min(i, len(f.KVs)-1)], want[min(i, len(want)-1)])
			}
		}
	}
	wantTensors := []TensorInfo{
		{Name: "a", Dims: []uint64{3}, Type: TensorF32, Offset: 0},
		{Name: "b", Dims: []uint64{5, 3}, Type: TensorF16, Offset: 32},
		{Name: "c", Dims: []uint64{32, 2}, Type: TensorQ8_0, Offset: 64},
	}
	if !reflect.DeepEqual(f.Tensors, wantTensors) {
		t.Errorf("Tensors: got %+v, want %+v", f.Tensors, wantTensors)
	}
	if f.Version != 3 || f.Alignment != 32 || f.DataOffset%32 != 0 || f.Size != int64(len(data)) {
		t.Errorf("header: got version %d alignment %d data offset %d size %d", f.Version, f.Alignment, f.DataOffset, f.Size)
	}
	if got, want := int64(len(data)), f.DataOffset+64+68+28; got != want {
		t.Errorf("file size: got %d, want %d (data, then padding to 32)", got, want)
	}
	for i, want := range [][]byte{f32Seq(3), f16Ones(15), make([]byte, 68)} {
		got, err := f.TensorData(bytes.NewReader(data), f.Tensors[i])
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("TensorData(%s): got %x, %v; want %x", f.Tensors[i].Name, got, err, want)
		}
	}
	if got, want := f.Keys()[0], "u8"; got != want {
		t.Errorf("Keys()[0]: got %q, want %q", got, want)
	}
}

func TestAccessors(t *testing.T) {
	data := sample(t)
	f, err := Parse(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	u32 := []struct {
		key  string
		want uint32
		ok   bool
	}{
		{"u8", 200, true}, {"u16", 65000, true}, {"u32", 4000000000, true},
		{"i8", 0, false}, {"i32", 0, false}, {"u64", 0, false}, {"f32", 0, false},
		{"str", 0, false}, {"missing", 0, false},
	}
	for _, tt := range u32 {
		if got, ok := f.Uint32(tt.key); got != tt.want || ok != tt.ok {
			t.Errorf("Uint32(%q): got %d, %v; want %d, %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
	if got, ok := f.Uint64("u64"); got != math.MaxUint64 || !ok {
		t.Errorf("Uint64(u64): got %d, %v", got, ok)
	}
	if got, ok := f.Int64("i64"); got != math.MinInt64 || !ok {
		t.Errorf("Int64(i64): got %d, %v", got, ok)
	}
	if _, ok := f.Int64("u64"); ok {
		t.Errorf("Int64(u64): got ok for MaxUint64")
	}
	if got, ok := f.String("str"); got != "héllo <|im_start|>" || !ok {
		t.Errorf("String(str): got %q, %v", got, ok)
	}
	if _, ok := f.String("u8"); ok {
		t.Errorf("String(u8): got ok")
	}
	if got, ok := f.Strings("a.str"); !ok || !reflect.DeepEqual(got, []string{"Ġthe", "a b", ""}) {
		t.Errorf("Strings(a.str): got %q, %v", got, ok)
	}
	if _, ok := f.Strings("a.i32"); ok {
		t.Errorf("Strings(a.i32): got ok")
	}
	i32 := []struct {
		key  string
		want []int32
		ok   bool
	}{
		{"a.i32", []int32{1, 3, 4, -1}, true},
		{"a.u32", []int32{7, 8, 9}, true},
		{"a.i8", []int32{-128, 127}, true},
		{"a.u64", nil, false}, // 1<<40 does not fit
		{"a.str", nil, false},
		{"u32", nil, false},
		{"a.empty", []int32{}, true},
	}
	for _, tt := range i32 {
		if got, ok := f.Int32s(tt.key); !reflect.DeepEqual(got, tt.want) || ok != tt.ok {
			t.Errorf("Int32s(%q): got %v, %v; want %v, %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
	if got, ok := f.Float32s("a.f32"); !ok || !reflect.DeepEqual(got, []float32{-1.5, 0, 2}) {
		t.Errorf("Float32s(a.f32): got %v, %v", got, ok)
	}
	if got, ok := f.Float32s("a.f64"); !ok || !reflect.DeepEqual(got, []float32{2.5}) {
		t.Errorf("Float32s(a.f64): got %v, %v", got, ok)
	}
	if got, ok := f.Float32("f32"); got != 1e-5 || !ok {
		t.Errorf("Float32(f32): got %v, %v", got, ok)
	}
	if got, ok := f.Float32("f64"); got != float32(math.Pi) || !ok {
		t.Errorf("Float32(f64): got %v, %v", got, ok)
	}
	if got, ok := f.Bool("bool"); !got || !ok {
		t.Errorf("Bool(bool): got %v, %v", got, ok)
	}
	if _, ok := f.Bool("u8"); ok {
		t.Errorf("Bool(u8): got ok")
	}
	if ti, ok := f.Tensor("b"); !ok || ti.Elements() != 15 {
		t.Errorf("Tensor(b): got %+v, %v", ti, ok)
	}
	if _, ok := f.Tensor("zz"); ok {
		t.Errorf("Tensor(zz): got ok")
	}
}

// TestTruncated cuts the sample file at every length short of the end of
// the last tensor's data: parsing must fail
// with a *Error (never panic), and with CodeTruncated past the magic.
func TestTruncated(t *testing.T) {
	data := sample(t)
	f, err := Parse(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	last := f.Tensors[len(f.Tensors)-1]
	size, _ := last.Size()
	end := f.DataOffset + int64(last.Offset) + size // only padding follows
	for n := range end {
		_, err := Parse(bytes.NewReader(data[:n]), int64(n))
		if err == nil {
			t.Fatalf("Parse(prefix of %d of %d bytes): got nil error", n, len(data))
		}
		if !errors.Is(err, ErrTruncated) {
			t.Fatalf("Parse(prefix of %d bytes): got %v, want a truncation error", n, err)
		}
	}
	// The size is a lie: the reader ends early.
	if _, err := Parse(bytes.NewReader(data[:100]), int64(len(data))); !errors.Is(err, ErrTruncated) {
		t.Errorf("Parse(short reader): got %v, want a truncation error", err)
	}
}

func header(version uint32, tensors, kvs uint64) []byte {
	b := []byte(Magic)
	b = binary.LittleEndian.AppendUint32(b, version)
	b = binary.LittleEndian.AppendUint64(b, tensors)
	return binary.LittleEndian.AppendUint64(b, kvs)
}

func kvBytes(key string, typ Type, payload ...byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(key)))
	b = append(b, key...)
	b = binary.LittleEndian.AppendUint32(b, uint32(typ))
	return append(b, payload...)
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func u32b(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func u64b(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func TestBadFiles(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want *Error
	}{
		{"empty", nil, ErrTruncated},
		{"text", []byte("hello world, not a model"), ErrBadMagic},
		{"short text", []byte("GX"), ErrBadMagic},
		{"magic only", []byte("GGUF"), ErrTruncated},
		{"version 1", header(1, 0, 0), ErrVersion},
		{"version 4", header(4, 0, 0), ErrVersion},
		{"big endian", cat([]byte(Magic), binary.BigEndian.AppendUint32(nil, 3), make([]byte, 16)), ErrVersion},
		{"huge kv count", header(3, 0, 1<<62), ErrLimit},
		{"huge tensor count", header(3, math.MaxUint64, 0), ErrLimit},
		{"counts fit alone but not together", cat(header(3, 1, 2), make([]byte, 40)), ErrTruncated},
		{"huge key", cat(header(3, 0, 1), u64b(1<<40), make([]byte, 20)), ErrTruncated},
		{"key over limit", cat(header(3, 0, 1), u64b(MaxKeyLen+1), make([]byte, MaxKeyLen+20)), ErrLimit},
		{"unknown value type", cat(header(3, 0, 1), kvBytes("k", 13, 0, 0, 0, 0)), ErrInvalid},
		{"huge string", cat(header(3, 0, 1), kvBytes("k", TypeString, u64b(1<<60)...)), ErrTruncated},
		{"huge array", cat(header(3, 0, 1), kvBytes("k", TypeArray, cat(u32b(uint32(TypeUint64)), u64b(1<<61))...)), ErrLimit},
		{"huge string array", cat(header(3, 0, 1), kvBytes("k", TypeArray, cat(u32b(uint32(TypeString)), u64b(1<<30), make([]byte, 64))...)), ErrLimit},
		{"bad element type", cat(header(3, 0, 1), kvBytes("k", TypeArray, cat(u32b(99), u64b(0))...)), ErrInvalid},
		{"bad bool", cat(header(3, 0, 1), kvBytes("k", TypeBool, 2)), ErrInvalid},
		{"duplicate key", cat(header(3, 0, 2), kvBytes("k", TypeUint8, 1), kvBytes("k", TypeUint8, 2)), ErrInvalid},
		{"alignment not uint32", cat(header(3, 0, 1), kvBytes(KeyAlignment, TypeUint64, u64b(32)...)), ErrInvalid},
		{"alignment not power of two", cat(header(3, 0, 1), kvBytes(KeyAlignment, TypeUint32, u32b(24)...)), ErrInvalid},
		{"alignment zero", cat(header(3, 0, 1), kvBytes(KeyAlignment, TypeUint32, u32b(0)...)), ErrInvalid},
		{"too many dims", cat(header(3, 1, 0), u64b(1), []byte("t"), u32b(5), make([]byte, 60)), ErrLimit},
		{"dims overflow", cat(header(3, 1, 0), u64b(1), []byte("t"), u32b(2), u64b(1<<40), u64b(1<<40), u32b(0), u64b(0)), ErrLimit},
		{"misaligned offset", cat(header(3, 1, 0), u64b(1), []byte("t"), u32b(1), u64b(8), u32b(0), u64b(4), make([]byte, 64)), ErrInvalid},
		{"partial block", cat(header(3, 1, 0), u64b(1), []byte("t"), u32b(1), u64b(31), u32b(uint32(TensorQ4_0)), u64b(0), make([]byte, 64)), ErrInvalid},
		{"data past end", cat(header(3, 1, 0), u64b(1), []byte("t"), u32b(1), u64b(1000), u32b(0), u64b(0), make([]byte, 64)), ErrTruncated},
		{"duplicate tensor", cat(header(3, 2, 0), u64b(1), []byte("t"), u32b(1), u64b(1), u32b(0), u64b(0), u64b(1), []byte("t"), u32b(1), u64b(1), u32b(0), u64b(32), make([]byte, 64)), ErrInvalid},
	}
	deep := header(3, 0, 1)
	deep = append(deep, kvBytes("k", TypeArray)...)
	for range MaxArrayDepth + 1 {
		deep = append(deep, cat(u32b(uint32(TypeArray)), u64b(1))...)
	}
	deep = append(deep, make([]byte, 64)...)
	tests = append(tests, struct {
		name string
		data []byte
		want *Error
	}{"arrays nested too deep", deep, ErrLimit})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse(bytes.NewReader(tt.data), int64(len(tt.data)))
			if !errors.Is(err, tt.want) {
				t.Errorf("Parse(%s): got %v, %v; want code %v", tt.name, f, err, tt.want.Code)
			}
		})
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.gguf")
	if err := os.WriteFile(good, sample(t), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(good)
	if err != nil || f.Path != good || len(f.Tensors) != 3 {
		t.Fatalf("Open(good): got %+v, %v", f, err)
	}
	missing := filepath.Join(dir, "missing.gguf")
	if _, err := Open(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open(missing): got %v, want fs.ErrNotExist", err)
	}
	if _, err := Open(dir); err == nil {
		t.Errorf("Open(dir): got nil error")
	}
	bad := filepath.Join(dir, "bad.gguf")
	if err := os.WriteFile(bad, []byte("{\"not\": \"gguf\"}"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(bad)
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeBadMagic || e.Path != bad {
		t.Errorf("Open(bad): got %v, want CodeBadMagic with the path", err)
	}
}

func TestWriterErrors(t *testing.T) {
	tests := []struct {
		name string
		add  func(w *Writer)
	}{
		{"duplicate key", func(w *Writer) { w.AddUint32("k", 1); w.AddUint32("k", 2) }},
		{"wrong Go type", func(w *Writer) { w.Add("k", Value{TypeUint32, int32(1)}) }},
		{"wrong slice type", func(w *Writer) { w.Add("k", Value{TypeArray, Array{TypeInt32, []uint32{1}}}) }},
		{"unsupported Go type", func(w *Writer) { w.AddValue("k", struct{}{}) }},
		{"other alignment", func(w *Writer) { w.AddUint32(KeyAlignment, 64) }},
		{"short data", func(w *Writer) { w.AddTensor("t", TensorF32, []uint64{4}, make([]byte, 15)) }},
		{"no dims", func(w *Writer) { w.AddTensor("t", TensorF32, nil, nil) }},
		{"zero dim", func(w *Writer) { w.AddTensor("t", TensorF32, []uint64{0}, nil) }},
		{"partial block", func(w *Writer) { w.AddTensor("t", TensorQ8_0, []uint64{31}, make([]byte, 34)) }},
		{"duplicate tensor", func(w *Writer) {
			w.AddTensor("t", TensorF32, []uint64{1}, make([]byte, 4))
			w.AddTensor("t", TensorF32, []uint64{1}, make([]byte, 4))
		}},
	}
	for _, tt := range tests {
		w := NewWriter()
		tt.add(w)
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err == nil || buf.Len() != 0 {
			t.Errorf("%s: WriteTo: got %v with %d bytes, want an error and nothing written", tt.name, err, buf.Len())
		}
	}
	// A streaming tensor that writes the wrong amount.
	w := NewWriter()
	w.AddTensorFunc("t", TensorF32, []uint64{2}, func(out io.Writer) error {
		_, err := out.Write(make([]byte, 4))
		return err
	})
	if _, err := w.WriteTo(&bytes.Buffer{}); err == nil {
		t.Errorf("AddTensorFunc writing 4 of 8 bytes: WriteTo got nil error")
	}
}

func TestTensorFuncMatchesTensor(t *testing.T) {
	data := f16Ones(40)
	w1, w2 := NewWriter(), NewWriter()
	w1.AddTensor("x", TensorF16, []uint64{8, 5}, data)
	w2.AddTensorFunc("x", TensorF16, []uint64{8, 5}, func(out io.Writer) error {
		_, err := out.Write(data)
		return err
	})
	var b1, b2 bytes.Buffer
	if _, err := w1.WriteTo(&b1); err != nil {
		t.Fatal(err)
	}
	if _, err := w2.WriteTo(&b2); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
		t.Errorf("AddTensorFunc output differs from AddTensor output")
	}
}
