package gguf

import (
	"fmt"
	"io"
	"math"
)

// Value is one metadata value. Data holds the Go value for Type: uint8,
// int8, uint16, int16, uint32, int32, float32, bool, string, uint64, int64,
// float64, or an [Array] for TypeArray.
type Value struct {
	Type Type
	Data any
}

// Array is an array value. Data is a slice of the element type's Go type
// ([]uint8 ... []float64, []string, []bool), or []Array when Elem is
// TypeArray (nested arrays).
type Array struct {
	Elem Type
	Data any
}

// Len returns the number of elements of a.
func (a Array) Len() int {
	switch d := a.Data.(type) {
	case []uint8:
		return len(d)
	case []int8:
		return len(d)
	case []uint16:
		return len(d)
	case []int16:
		return len(d)
	case []uint32:
		return len(d)
	case []int32:
		return len(d)
	case []float32:
		return len(d)
	case []bool:
		return len(d)
	case []string:
		return len(d)
	case []uint64:
		return len(d)
	case []int64:
		return len(d)
	case []float64:
		return len(d)
	case []Array:
		return len(d)
	}
	return 0
}

// KV is one metadata key/value pair.
type KV struct {
	Key   string
	Value Value
}

// TensorInfo describes one tensor. Dims are in ggml "ne" order (innermost,
// fastest-varying dimension first); Offset is relative to the start of the
// tensor data section ([File.DataOffset]).
type TensorInfo struct {
	Name   string
	Dims   []uint64
	Type   TensorType
	Offset uint64
}

// Elements returns the product of t's dimensions (1 for a scalar).
func (t TensorInfo) Elements() int64 {
	n := int64(1)
	for _, d := range t.Dims {
		n *= int64(d) // bounded at parse time: the product fits in int64
	}
	return n
}

// Size returns the bytes of t's data, or ok=false when its type's layout is
// unknown to this package.
func (t TensorInfo) Size() (int64, bool) { return t.Type.ByteSize(t.Elements()) }

// File is a parsed GGUF file: its header, metadata and tensor infos. It
// holds no tensor data and no open file handle; it is safe for concurrent
// reads.
type File struct {
	// Path is the file name given to Open ("" for Parse).
	Path string
	// Version is the GGUF version (2 or 3).
	Version uint32
	// KVs are the metadata pairs in file order.
	KVs []KV
	// Tensors are the tensor infos in file order.
	Tensors []TensorInfo
	// Alignment is general.alignment, or 32 when absent.
	Alignment uint32
	// DataOffset is the absolute offset of the tensor data section.
	DataOffset int64
	// Size is the size of the file in bytes.
	Size int64

	index map[string]int // key -> index in KVs
}

// Keys returns the metadata keys in file order.
func (f *File) Keys() []string {
	keys := make([]string, len(f.KVs))
	for i, kv := range f.KVs {
		keys[i] = kv.Key
	}
	return keys
}

// Value returns the value stored under key.
func (f *File) Value(key string) (Value, bool) {
	i, ok := f.index[key]
	if !ok {
		return Value{}, false
	}
	return f.KVs[i].Value, true
}

// Tensor returns the info of the tensor named name.
func (f *File) Tensor(name string) (TensorInfo, bool) {
	for _, t := range f.Tensors {
		if t.Name == name {
			return t, true
		}
	}
	return TensorInfo{}, false
}

// TensorData reads the data of t from r, which must hold the same file f
// was parsed from. It fails for tensor types whose size is unknown.
func (f *File) TensorData(r io.ReaderAt, t TensorInfo) ([]byte, error) {
	n, ok := t.Size()
	if !ok {
		return nil, &Error{Code: CodeInvalid, Path: f.Path, Offset: -1, Key: t.Name, Msg: fmt.Sprintf("size of tensor type %v unknown", t.Type)}
	}
	off := f.DataOffset + int64(t.Offset)
	buf := make([]byte, n)
	if _, err := r.ReadAt(buf, off); err != nil {
		return nil, &Error{Code: CodeTruncated, Path: f.Path, Offset: off, Key: t.Name, Err: err}
	}
	return buf, nil
}

// String returns the string stored under key.
func (f *File) String(key string) (string, bool) {
	v, ok := f.Value(key)
	if !ok {
		return "", false
	}
	s, ok := v.Data.(string)
	return s, ok
}

// Strings returns the string array stored under key. The slice is shared
// with f: do not modify it.
func (f *File) Strings(key string) ([]string, bool) {
	a, ok := f.array(key)
	if !ok {
		return nil, false
	}
	s, ok := a.Data.([]string)
	return s, ok
}

// Int32s returns the integer array stored under key as int32s. An int32
// array is returned as is (shared with f: do not modify it); arrays of other
// integer types are converted when every element fits in an int32.
func (f *File) Int32s(key string) ([]int32, bool) {
	a, ok := f.array(key)
	if !ok {
		return nil, false
	}
	if s, ok := a.Data.([]int32); ok {
		return s, true
	}
	n := a.Len()
	out := make([]int32, n)
	for i := range n {
		x, ok := toInt64(index(a.Data, i))
		if !ok || x < math.MinInt32 || x > math.MaxInt32 {
			return nil, false
		}
		out[i] = int32(x)
	}
	return out, true
}

// Float32s returns the float array stored under key as float32s. A float32
// array is returned as is (shared with f: do not modify it); a float64 array
// is converted.
func (f *File) Float32s(key string) ([]float32, bool) {
	a, ok := f.array(key)
	if !ok {
		return nil, false
	}
	switch d := a.Data.(type) {
	case []float32:
		return d, true
	case []float64:
		out := make([]float32, len(d))
		for i, x := range d {
			out[i] = float32(x)
		}
		return out, true
	}
	return nil, false
}

// Uint32 returns the integer stored under key, of any integer type, when it
// fits in a uint32.
func (f *File) Uint32(key string) (uint32, bool) {
	u, ok := f.Uint64(key)
	if !ok || u > math.MaxUint32 {
		return 0, false
	}
	return uint32(u), true
}

// Uint64 returns the integer stored under key, of any integer type, when it
// is not negative.
func (f *File) Uint64(key string) (uint64, bool) {
	v, ok := f.Value(key)
	if !ok {
		return 0, false
	}
	return toUint64(v.Data)
}

// Int64 returns the integer stored under key, of any integer type, when it
// fits in an int64.
func (f *File) Int64(key string) (int64, bool) {
	v, ok := f.Value(key)
	if !ok {
		return 0, false
	}
	return toInt64(v.Data)
}

// Float32 returns the float stored under key (a float64 is converted).
func (f *File) Float32(key string) (float32, bool) {
	v, ok := f.Value(key)
	if !ok {
		return 0, false
	}
	switch x := v.Data.(type) {
	case float32:
		return x, true
	case float64:
		return float32(x), true
	}
	return 0, false
}

// Bool returns the bool stored under key.
func (f *File) Bool(key string) (bool, bool) {
	v, ok := f.Value(key)
	if !ok {
		return false, false
	}
	b, ok := v.Data.(bool)
	return b, ok
}

func (f *File) array(key string) (Array, bool) {
	v, ok := f.Value(key)
	if !ok {
		return Array{}, false
	}
	a, ok := v.Data.(Array)
	return a, ok
}

// index returns element i of a slice held in an Array's Data.
func index(data any, i int) any {
	switch d := data.(type) {
	case []uint8:
		return d[i]
	case []int8:
		return d[i]
	case []uint16:
		return d[i]
	case []int16:
		return d[i]
	case []uint32:
		return d[i]
	case []int32:
		return d[i]
	case []uint64:
		return d[i]
	case []int64:
		return d[i]
	}
	return nil
}

func toInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case uint8:
		return int64(x), true
	case int8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case int16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint64:
		if x > math.MaxInt64 {
			return 0, false
		}
		return int64(x), true
	}
	return 0, false
}

func toUint64(v any) (uint64, bool) {
	if x, ok := v.(uint64); ok {
		return x, true
	}
	i, ok := toInt64(v)
	if !ok || i < 0 {
		return 0, false
	}
	return uint64(i), true
}
