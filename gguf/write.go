package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
)

// Writer builds a GGUF version 3 file: metadata pairs in the order they are
// added, then tensor infos and data in the order they are added, with the
// data aligned to [DefaultAlignment] (32 bytes, recorded as
// general.alignment). The zero value is not usable; call [NewWriter].
//
// Errors from the Add methods are sticky: the first one is returned again by
// [Writer.WriteTo], so a generator can add everything and check once.
type Writer struct {
	kvs     []KV
	keys    map[string]bool
	tensors []wtensor
	names   map[string]bool
	err     error
}

type wtensor struct {
	info  TensorInfo
	size  int64
	data  []byte
	write func(io.Writer) error
}

// NewWriter returns an empty Writer.
func NewWriter() *Writer {
	return &Writer{keys: map[string]bool{}, names: map[string]bool{}}
}

func (w *Writer) fail(key, format string, args ...any) {
	if w.err == nil {
		w.err = &Error{Code: CodeWrite, Offset: -1, Key: key, Msg: fmt.Sprintf(format, args...)}
	}
}

// Err returns the first error recorded by an Add method, or nil.
func (w *Writer) Err() error { return w.err }

// Add adds a metadata pair with an explicit Value. general.alignment, if
// given, must be the uint32 32.
func (w *Writer) Add(key string, v Value) {
	if len(key) > MaxKeyLen {
		w.fail(key[:64], "key longer than %d bytes", MaxKeyLen)
		return
	}
	if w.keys[key] {
		w.fail(key, "duplicate key")
		return
	}
	if err := checkValue(v, 0); err != nil {
		w.fail(key, "%v", err)
		return
	}
	if key == KeyAlignment {
		if a, ok := v.Data.(uint32); !ok || a != DefaultAlignment {
			w.fail(key, "the writer only writes alignment %d", DefaultAlignment)
			return
		}
	}
	w.keys[key] = true
	w.kvs = append(w.kvs, KV{Key: key, Value: v})
}

// AddValue adds a metadata pair whose type follows from the Go type of v:
// uint8 ... float64, bool, string, a slice of one of those (an array), an
// [Array] or a [Value].
func (w *Writer) AddValue(key string, v any) {
	val, err := ValueOf(v)
	if err != nil {
		w.fail(key, "%v", err)
		return
	}
	w.Add(key, val)
}

// AddString adds a string pair.
func (w *Writer) AddString(key, v string) { w.Add(key, Value{TypeString, v}) }

// AddUint32 adds a uint32 pair.
func (w *Writer) AddUint32(key string, v uint32) { w.Add(key, Value{TypeUint32, v}) }

// AddInt32 adds an int32 pair.
func (w *Writer) AddInt32(key string, v int32) { w.Add(key, Value{TypeInt32, v}) }

// AddUint64 adds a uint64 pair.
func (w *Writer) AddUint64(key string, v uint64) { w.Add(key, Value{TypeUint64, v}) }

// AddFloat32 adds a float32 pair.
func (w *Writer) AddFloat32(key string, v float32) { w.Add(key, Value{TypeFloat32, v}) }

// AddBool adds a bool pair.
func (w *Writer) AddBool(key string, v bool) { w.Add(key, Value{TypeBool, v}) }

// AddStrings adds a string array pair.
func (w *Writer) AddStrings(key string, v []string) {
	w.Add(key, Value{TypeArray, Array{TypeString, v}})
}

// AddInt32s adds an int32 array pair.
func (w *Writer) AddInt32s(key string, v []int32) {
	w.Add(key, Value{TypeArray, Array{TypeInt32, v}})
}

// AddFloat32s adds a float32 array pair.
func (w *Writer) AddFloat32s(key string, v []float32) {
	w.Add(key, Value{TypeArray, Array{TypeFloat32, v}})
}

// AddTensor adds a tensor with its data. dims are in ggml "ne" order
// (innermost first); len(data) must be the size the type and dims imply.
// The writer keeps data (not a copy) until WriteTo.
func (w *Writer) AddTensor(name string, typ TensorType, dims []uint64, data []byte) {
	size, ok := w.tensorSize(name, typ, dims)
	if !ok {
		return
	}
	if int64(len(data)) != size {
		w.fail(name, "%d bytes of data for %v %v, want %d", len(data), typ, dims, size)
		return
	}
	w.addTensor(wtensor{info: TensorInfo{Name: name, Type: typ, Dims: append([]uint64(nil), dims...)}, size: size, data: data})
}

// AddTensorFunc adds a tensor whose data write produces when the file is
// written, so that large models need not sit in memory. write must write
// exactly the size the type and dims imply.
func (w *Writer) AddTensorFunc(name string, typ TensorType, dims []uint64, write func(io.Writer) error) {
	size, ok := w.tensorSize(name, typ, dims)
	if !ok {
		return
	}
	w.addTensor(wtensor{info: TensorInfo{Name: name, Type: typ, Dims: append([]uint64(nil), dims...)}, size: size, write: write})
}

func (w *Writer) tensorSize(name string, typ TensorType, dims []uint64) (int64, bool) {
	switch {
	case w.names[name]:
		w.fail(name, "duplicate tensor name")
		return 0, false
	case len(name) > MaxKeyLen:
		w.fail(name[:64], "tensor name longer than %d bytes", MaxKeyLen)
		return 0, false
	case len(dims) == 0 || len(dims) > MaxDims:
		w.fail(name, "%d dimensions, want 1 to %d", len(dims), MaxDims)
		return 0, false
	}
	elems := int64(1)
	for _, d := range dims {
		if d == 0 || d > uint64(math.MaxInt64/elems) {
			w.fail(name, "bad dims %v", dims)
			return 0, false
		}
		elems *= int64(d)
	}
	size, ok := typ.ByteSize(elems)
	if !ok {
		w.fail(name, "cannot size %d elements of type %v", elems, typ)
		return 0, false
	}
	return size, true
}

func (w *Writer) addTensor(t wtensor) {
	var off int64
	if n := len(w.tensors); n > 0 {
		last := w.tensors[n-1]
		off = align(int64(last.info.Offset)+last.size, DefaultAlignment)
	}
	t.info.Offset = uint64(off)
	w.names[t.info.Name] = true
	w.tensors = append(w.tensors, t)
}

func align(n, a int64) int64 { return (n + a - 1) / a * a }

// WriteFile writes the file to path (created or truncated).
func (w *Writer) WriteFile(path string) error {
	fd, err := os.Create(path)
	if err != nil {
		return &Error{Code: CodeWrite, Path: path, Offset: -1, Err: err}
	}
	_, err = w.WriteTo(fd)
	if cerr := fd.Close(); err == nil && cerr != nil {
		err = &Error{Code: CodeWrite, Path: path, Offset: -1, Err: cerr}
	}
	return err
}

// WriteTo writes the file to out and returns the bytes written.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	if w.err != nil {
		return 0, w.err
	}
	cw := &countWriter{w: bufio.NewWriterSize(out, 1<<20)}
	e := &encoder{w: cw}
	kvs := w.kvs
	if !w.keys[KeyAlignment] {
		kvs = append(kvs[:len(kvs):len(kvs)], KV{Key: KeyAlignment, Value: Value{TypeUint32, uint32(DefaultAlignment)}})
	}
	e.raw([]byte(Magic))
	e.u32(3)
	e.u64(uint64(len(w.tensors)))
	e.u64(uint64(len(kvs)))
	for _, kv := range kvs {
		e.str(kv.Key)
		e.u32(uint32(kv.Value.Type))
		e.value(kv.Value)
	}
	for _, t := range w.tensors {
		e.str(t.info.Name)
		e.u32(uint32(len(t.info.Dims)))
		for _, d := range t.info.Dims {
			e.u64(d)
		}
		e.u32(uint32(t.info.Type))
		e.u64(t.info.Offset)
	}
	e.pad()
	data := cw.n
	for _, t := range w.tensors {
		if e.err != nil {
			break
		}
		e.raw(make([]byte, data+int64(t.info.Offset)-cw.n)) // padding between tensors
		start := cw.n
		if t.data != nil {
			e.raw(t.data)
		} else if err := t.write(cw); err != nil && e.err == nil {
			e.err = &Error{Code: CodeWrite, Offset: -1, Key: t.info.Name, Err: err}
		}
		if e.err == nil && cw.n-start != t.size {
			e.err = &Error{Code: CodeWrite, Offset: -1, Key: t.info.Name, Msg: fmt.Sprintf("wrote %d bytes, want %d", cw.n-start, t.size)}
		}
	}
	if len(w.tensors) > 0 {
		e.pad()
	}
	if e.err == nil {
		if err := cw.w.Flush(); err != nil {
			e.err = &Error{Code: CodeWrite, Offset: -1, Err: err}
		}
	}
	return cw.n, e.err
}

type countWriter struct {
	w *bufio.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// encoder writes little-endian GGUF values with a sticky error.
type encoder struct {
	w   *countWriter
	err error
	b   [8]byte
}

func (e *encoder) raw(p []byte) {
	if e.err != nil {
		return
	}
	if _, err := e.w.Write(p); err != nil {
		e.err = &Error{Code: CodeWrite, Offset: e.w.n, Err: err}
	}
}

func (e *encoder) pad() { e.raw(make([]byte, align(e.w.n, DefaultAlignment)-e.w.n)) }

func (e *encoder) u8(v uint8) { e.b[0] = v; e.raw(e.b[:1]) }
func (e *encoder) u16(v uint16) {
	binary.LittleEndian.PutUint16(e.b[:], v)
	e.raw(e.b[:2])
}
func (e *encoder) u32(v uint32) {
	binary.LittleEndian.PutUint32(e.b[:], v)
	e.raw(e.b[:4])
}
func (e *encoder) u64(v uint64) {
	binary.LittleEndian.PutUint64(e.b[:], v)
	e.raw(e.b[:8])
}
func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	if e.err == nil {
		if _, err := e.w.w.WriteString(s); err != nil {
			e.err = &Error{Code: CodeWrite, Offset: e.w.n, Err: err}
		}
		e.w.n += int64(len(s))
	}
}

func (e *encoder) value(v Value) {
	switch x := v.Data.(type) {
	case uint8:
		e.u8(x)
	case int8:
		e.u8(uint8(x))
	case uint16:
		e.u16(x)
	case int16:
		e.u16(uint16(x))
	case uint32:
		e.u32(x)
	case int32:
		e.u32(uint32(x))
	case float32:
		e.u32(math.Float32bits(x))
	case bool:
		if x {
			e.u8(1)
		} else {
			e.u8(0)
		}
	case string:
		e.str(x)
	case uint64:
		e.u64(x)
	case int64:
		e.u64(uint64(x))
	case float64:
		e.u64(math.Float64bits(x))
	case Array:
		e.array(x)
	}
}

func (e *encoder) array(a Array) {
	e.u32(uint32(a.Elem))
	e.u64(uint64(a.Len()))
	switch d := a.Data.(type) {
	case []uint8:
		e.raw(d)
	case []int8:
		for _, x := range d {
			e.u8(uint8(x))
		}
	case []bool:
		for _, x := range d {
			e.value(Value{TypeBool, x})
		}
	case []uint16:
		for _, x := range d {
			e.u16(x)
		}
	case []int16:
		for _, x := range d {
			e.u16(uint16(x))
		}
	case []uint32:
		for _, x := range d {
			e.u32(x)
		}
	case []int32:
		for _, x := range d {
			e.u32(uint32(x))
		}
	case []float32:
		for _, x := range d {
			e.u32(math.Float32bits(x))
		}
	case []uint64:
		for _, x := range d {
			e.u64(x)
		}
	case []int64:
		for _, x := range d {
			e.u64(uint64(x))
		}
	case []float64:
		for _, x := range d {
			e.u64(math.Float64bits(x))
		}
	case []string:
		for _, x := range d {
			e.str(x)
		}
	case []Array:
		for _, x := range d {
			e.array(x)
		}
	}
}

// checkValue reports whether v's Data has the Go type its Type names.
func checkValue(v Value, depth int) error {
	want := map[Type]string{
		TypeUint8: "uint8", TypeInt8: "int8", TypeUint16: "uint16", TypeInt16: "int16",
		TypeUint32: "uint32", TypeInt32: "int32", TypeFloat32: "float32", TypeBool: "bool",
		TypeString: "string", TypeUint64: "uint64", TypeInt64: "int64", TypeFloat64: "float64",
		TypeArray: "gguf.Array",
	}[v.Type]
	if got := fmt.Sprintf("%T", v.Data); got != want {
		return fmt.Errorf("value of type %v holds a %s", v.Type, got)
	}
	a, ok := v.Data.(Array)
	if !ok {
		return nil
	}
	if depth >= MaxArrayDepth {
		return fmt.Errorf("arrays nested deeper than %d", MaxArrayDepth)
	}
	if a.Elem == TypeArray {
		nested, ok := a.Data.([]Array)
		if !ok {
			return fmt.Errorf("array of arrays holds a %T", a.Data)
		}
		for _, x := range nested {
			if err := checkValue(Value{TypeArray, x}, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	wantSlice := "[]" + fmt.Sprint(map[Type]string{
		TypeUint8: "uint8", TypeInt8: "int8", TypeUint16: "uint16", TypeInt16: "int16",
		TypeUint32: "uint32", TypeInt32: "int32", TypeFloat32: "float32", TypeBool: "bool",
		TypeString: "string", TypeUint64: "uint64", TypeInt64: "int64", TypeFloat64: "float64",
	}[a.Elem])
	if got := fmt.Sprintf("%T", a.Data); got != wantSlice || wantSlice == "[]" {
		return fmt.Errorf("array of %v holds a %s", a.Elem, got)
	}
	return nil
}

// ValueOf returns the Value for a Go value: uint8 ... float64, bool, string,
// a slice of one of those, an [Array] or a [Value].
func ValueOf(v any) (Value, error) {
	switch x := v.(type) {
	case Value:
		return x, checkValue(x, 0)
	case Array:
		val := Value{TypeArray, x}
		return val, checkValue(val, 0)
	case uint8:
		return Value{TypeUint8, x}, nil
	case int8:
		return Value{TypeInt8, x}, nil
	case uint16:
		return Value{TypeUint16, x}, nil
	case int16:
		return Value{TypeInt16, x}, nil
	case uint32:
		return Value{TypeUint32, x}, nil
	case int32:
		return Value{TypeInt32, x}, nil
	case float32:
		return Value{TypeFloat32, x}, nil
	case bool:
		return Value{TypeBool, x}, nil
	case string:
		return Value{TypeString, x}, nil
	case uint64:
		return Value{TypeUint64, x}, nil
	case int64:
		return Value{TypeInt64, x}, nil
	case float64:
		return Value{TypeFloat64, x}, nil
	case []uint8:
		return Value{TypeArray, Array{TypeUint8, x}}, nil
	case []int8:
		return Value{TypeArray, Array{TypeInt8, x}}, nil
	case []uint16:
		return Value{TypeArray, Array{TypeUint16, x}}, nil
	case []int16:
		return Value{TypeArray, Array{TypeInt16, x}}, nil
	case []uint32:
		return Value{TypeArray, Array{TypeUint32, x}}, nil
	case []int32:
		return Value{TypeArray, Array{TypeInt32, x}}, nil
	case []float32:
		return Value{TypeArray, Array{TypeFloat32, x}}, nil
	case []bool:
		return Value{TypeArray, Array{TypeBool, x}}, nil
	case []string:
		return Value{TypeArray, Array{TypeString, x}}, nil
	case []uint64:
		return Value{TypeArray, Array{TypeUint64, x}}, nil
	case []int64:
		return Value{TypeArray, Array{TypeInt64, x}}, nil
	case []float64:
		return Value{TypeArray, Array{TypeFloat64, x}}, nil
	}
	return Value{}, fmt.Errorf("no GGUF type for Go type %T", v)
}
