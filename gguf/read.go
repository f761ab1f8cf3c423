package gguf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"unsafe"
)

// Limits of the reader. Counts and lengths are also bounded by the bytes
// left in the file, which is what keeps allocations proportional to the file
// size; these constants add bounds the spec or ggml itself sets.
const (
	// MaxKeyLen is the longest metadata key: the spec caps keys at 65535 bytes.
	MaxKeyLen = 65535
	// MaxDims is GGML_MAX_DIMS: ggml tensors have at most 4 dimensions.
	MaxDims = 4
	// MaxArrayDepth bounds nested arrays (ggml itself writes none) so that
	// a hostile file cannot drive the decoder's recursion deep.
	MaxArrayDepth = 8
	// DefaultAlignment is the alignment of the tensor data when the file has
	// no general.alignment key (the spec's GGUF_DEFAULT_ALIGNMENT).
	DefaultAlignment = 32
)

// Magic is the four bytes every GGUF file starts with.
const Magic = "GGUF"

// KeyAlignment is the metadata key of the tensor data alignment.
const KeyAlignment = "general.alignment"

// Minimum encoded sizes, used to bound counts before allocating.
const (
	minKVSize     = 8 + 4 + 1     // key length, value type, a one-byte value
	minTensorSize = 8 + 4 + 4 + 8 // name length, n_dims, type, offset
	bufSize       = 64 << 10
	// plausibleCount splits counts that do not fit in the rest of the file
	// into "truncated" (a real file cut short: the largest real arrays, the
	// vocabularies, have a few hundred thousand entries) and "limit"
	// (garbage or a hostile count).
	plausibleCount = 1 << 28
)

// Open parses the GGUF file at path (header, metadata, tensor infos; not the
// tensor data) and closes it again.
func Open(path string) (*File, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, &Error{Code: CodeOpen, Path: path, Offset: -1, Err: err}
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, &Error{Code: CodeOpen, Path: path, Offset: -1, Err: err}
	}
	if st.IsDir() {
		return nil, &Error{Code: CodeOpen, Path: path, Offset: -1, Msg: "is a directory"}
	}
	f, err := Parse(fd, st.Size())
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Path = path
		}
		return nil, err
	}
	f.Path = path
	return f, nil
}

// Parse decodes a GGUF file of size bytes read from r. It reads the header,
// metadata and tensor infos, never the tensor data, and checks that every
// tensor whose type it knows lies inside the file.
func Parse(r io.ReaderAt, size int64) (*File, error) {
	if size < 0 {
		return nil, &Error{Code: CodeInvalid, Offset: -1, Msg: "negative size"}
	}
	d := &decoder{r: r, size: size}
	f, err := d.file()
	if err != nil {
		return nil, err
	}
	return f, nil
}

type decoder struct {
	r        io.ReaderAt
	size     int64
	off      int64  // position of the next byte to decode
	buf      []byte // window of the file starting at bufStart
	bufStart int64
	key      string // key or tensor being decoded, for errors
}

func (d *decoder) errorf(code ErrorCode, format string, args ...any) error {
	return &Error{Code: code, Offset: d.off, Key: d.key, Msg: fmt.Sprintf(format, args...)}
}

func (d *decoder) remaining() int64 { return d.size - d.off }

// next returns the next n bytes and advances. The slice is valid until the
// next call.
func (d *decoder) next(n int64) ([]byte, error) {
	if n < 0 || n > d.remaining() {
		return nil, d.errorf(CodeTruncated, "need %d bytes, %d left", n, d.remaining())
	}
	if d.off >= d.bufStart && d.off+n <= d.bufStart+int64(len(d.buf)) {
		i := d.off - d.bufStart
		d.off += n
		return d.buf[i : i+n : i+n], nil
	}
	if n > bufSize {
		b := make([]byte, n)
		if err := d.readAt(b, d.off); err != nil {
			return nil, err
		}
		d.off += n
		return b, nil
	}
	if d.buf == nil {
		d.buf = make([]byte, bufSize)
	}
	w := min(int64(bufSize), d.remaining())
	d.buf = d.buf[:cap(d.buf)][:w]
	d.bufStart = d.off
	if err := d.readAt(d.buf, d.off); err != nil {
		d.buf = d.buf[:0]
		return nil, err
	}
	d.off += n
	return d.buf[:n:n], nil
}

func (d *decoder) readAt(b []byte, off int64) error {
	n, err := d.r.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		return &Error{Code: CodeTruncated, Offset: off + int64(n), Key: d.key, Msg: "file shorter than its size"}
	}
	return &Error{Code: CodeTruncated, Offset: off + int64(n), Key: d.key, Err: err}
}

func (d *decoder) u8() (uint8, error) {
	b, err := d.next(1)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

func (d *decoder) u16() (uint16, error) {
	b, err := d.next(2)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint16(b), nil
}

func (d *decoder) u32() (uint32, error) {
	b, err := d.next(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (d *decoder) u64() (uint64, error) {
	b, err := d.next(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// count reads a uint64 count of items that each take at least minSize bytes
// and checks that the rest of the file can hold them.
func (d *decoder) count(what string, minSize int64) (int, error) {
	at := d.off
	n, err := d.u64()
	if err != nil {
		return 0, err
	}
	if n > uint64(d.remaining()/minSize) {
		code := CodeTruncated
		if n > plausibleCount {
			code = CodeLimit
		}
		return 0, &Error{Code: code, Offset: at, Key: d.key, Msg: fmt.Sprintf("%s count %d: the %d bytes left hold at most %d", what, n, d.remaining(), d.remaining()/minSize)}
	}
	return int(n), nil
}

func (d *decoder) str(maxLen int64) (string, error) {
	at := d.off
	n, err := d.u64()
	if err != nil {
		return "", err
	}
	if n > uint64(d.remaining()) {
		return "", &Error{Code: CodeTruncated, Offset: at, Key: d.key, Msg: fmt.Sprintf("string of %d bytes, %d left", n, d.remaining())}
	}
	if n > uint64(maxLen) {
		return "", &Error{Code: CodeLimit, Offset: at, Key: d.key, Msg: fmt.Sprintf("string of %d bytes, limit %d", n, maxLen)}
	}
	b, err := d.next(int64(n))
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// strs reads n strings into shared 1 MiB chunks (a handful of
// allocations instead of n: a vocabulary holds ~150k tokens). A chunk is
// never written again once a string points into it.
func (d *decoder) strs(n int) ([]string, error) {
	const chunk = 1 << 20
	out := make([]string, n)
	var buf []byte
	for i := range out {
		at := d.off
		l, err := d.u64()
		if err != nil {
			return nil, err
		}
		if l > uint64(d.remaining()) {
			return nil, &Error{Code: CodeTruncated, Offset: at, Key: d.key, Msg: fmt.Sprintf("string of %d bytes, %d left", l, d.remaining())}
		}
		b, err := d.next(int64(l))
		if err != nil {
			return nil, err
		}
		if len(b) == 0 {
			continue
		}
		if cap(buf)-len(buf) < len(b) {
			buf = make([]byte, 0, max(chunk, len(b)))
		}
		start := len(buf)
		buf = append(buf, b...)
		out[i] = unsafe.String(&buf[start], len(b))
	}
	return out, nil
}

func (d *decoder) file() (*File, error) {
	// Magic: report "not GGUF" when the bytes present already differ.
	head := min(int64(len(Magic)), d.size)
	b, err := d.next(head)
	if err != nil {
		return nil, err
	}
	if string(b) != Magic[:head] {
		return nil, &Error{Code: CodeBadMagic, Offset: 0, Msg: fmt.Sprintf("starts with %q", b)}
	}
	if head < int64(len(Magic)) {
		return nil, d.errorf(CodeTruncated, "file of %d bytes", d.size)
	}
	at := d.off
	version, err := d.u32()
	if err != nil {
		return nil, err
	}
	switch {
	case version == 2 || version == 3:
	case bits.ReverseBytes32(version) == 2 || bits.ReverseBytes32(version) == 3:
		return nil, &Error{Code: CodeVersion, Offset: at, Msg: "big-endian GGUF is not supported"}
	default:
		return nil, &Error{Code: CodeVersion, Offset: at, Msg: fmt.Sprintf("version %d (only 2 and 3 are read)", version)}
	}
	nTensors, err := d.count("tensor", minTensorSize)
	if err != nil {
		return nil, err
	}
	nKV, err := d.count("metadata", minKVSize)
	if err != nil {
		return nil, err
	}
	if int64(nTensors)*minTensorSize > d.remaining()-int64(nKV)*minKVSize {
		return nil, d.errorf(CodeTruncated, "%d tensors and %d metadata pairs cannot fit in %d bytes", nTensors, nKV, d.remaining())
	}
	f := &File{Version: version, Size: d.size, Alignment: DefaultAlignment, index: make(map[string]int, nKV)}
	f.KVs = make([]KV, 0, nKV)
	for range nKV {
		d.key = ""
		at := d.off
		key, err := d.str(MaxKeyLen)
		if err != nil {
			return nil, err
		}
		d.key = key
		if _, dup := f.index[key]; dup {
			return nil, &Error{Code: CodeInvalid, Offset: at, Key: key, Msg: "duplicate key"}
		}
		t, err := d.u32()
		if err != nil {
			return nil, err
		}
		v, err := d.value(Type(t), 0)
		if err != nil {
			return nil, err
		}
		f.index[key] = len(f.KVs)
		f.KVs = append(f.KVs, KV{Key: key, Value: v})
		if key == KeyAlignment {
			a, ok := v.Data.(uint32)
			if !ok || a == 0 || a&(a-1) != 0 {
				return nil, &Error{Code: CodeInvalid, Offset: at, Key: key, Msg: fmt.Sprintf("alignment must be a uint32 power of two, got %v %v", v.Type, v.Data)}
			}
			f.Alignment = a
		}
	}
	if err := d.tensors(f, nTensors); err != nil {
		return nil, err
	}
	return f, nil
}

func (d *decoder) tensors(f *File, n int) error {
	f.Tensors = make([]TensorInfo, 0, n)
	seen := make(map[string]bool, n)
	for range n {
		d.key = ""
		at := d.off
		name, err := d.str(MaxKeyLen)
		if err != nil {
			return err
		}
		d.key = name
		if seen[name] {
			return &Error{Code: CodeInvalid, Offset: at, Key: name, Msg: "duplicate tensor name"}
		}
		seen[name] = true
		nDims, err := d.u32()
		if err != nil {
			return err
		}
		if nDims > MaxDims {
			return d.errorf(CodeLimit, "%d dimensions, ggml allows %d", nDims, MaxDims)
		}
		dims := make([]uint64, nDims)
		elems := uint64(1)
		for i := range dims {
			if dims[i], err = d.u64(); err != nil {
				return err
			}
			hi, lo := bits.Mul64(elems, dims[i])
			if hi != 0 || lo > math.MaxInt64 {
				return d.errorf(CodeLimit, "element count of dims %v overflows", dims[:i+1])
			}
			elems = lo
		}
		typ, err := d.u32()
		if err != nil {
			return err
		}
		offset, err := d.u64()
		if err != nil {
			return err
		}
		t := TensorInfo{Name: name, Dims: dims, Type: TensorType(typ), Offset: offset}
		if offset%uint64(f.Alignment) != 0 {
			return d.errorf(CodeInvalid, "offset %d is not a multiple of the alignment %d", offset, f.Alignment)
		}
		if t.Type.Known() {
			if _, ok := t.Size(); !ok {
				return d.errorf(CodeInvalid, "%d elements are not whole %v blocks", elems, t.Type)
			}
		}
		f.Tensors = append(f.Tensors, t)
	}
	d.key = ""
	a := int64(f.Alignment)
	if d.off > math.MaxInt64-a {
		return d.errorf(CodeLimit, "offset overflows")
	}
	f.DataOffset = (d.off + a - 1) / a * a
	for _, t := range f.Tensors {
		size, ok := t.Size()
		if !ok {
			continue
		}
		if t.Offset > uint64(d.size) || size > d.size-f.DataOffset-int64(t.Offset) {
			return &Error{Code: CodeTruncated, Offset: -1, Key: t.Name, Msg: fmt.Sprintf("data [%d, +%d) past the end of the %d-byte file", f.DataOffset+int64(t.Offset), size, d.size)}
		}
	}
	return nil
}

func (d *decoder) value(t Type, depth int) (Value, error) {
	var v any
	var err error
	switch t {
	case TypeUint8:
		v, err = d.u8()
	case TypeInt8:
		var x uint8
		x, err = d.u8()
		v = int8(x)
	case TypeUint16:
		v, err = d.u16()
	case TypeInt16:
		var x uint16
		x, err = d.u16()
		v = int16(x)
	case TypeUint32:
		v, err = d.u32()
	case TypeInt32:
		var x uint32
		x, err = d.u32()
		v = int32(x)
	case TypeFloat32:
		var x uint32
		x, err = d.u32()
		v = math.Float32frombits(x)
	case TypeBool:
		var x uint8
		x, err = d.u8()
		if err == nil && x > 1 {
			return Value{}, d.errorf(CodeInvalid, "bool byte %d", x)
		}
		v = x == 1
	case TypeString:
		v, err = d.str(maxInt64)
	case TypeUint64:
		v, err = d.u64()
	case TypeInt64:
		var x uint64
		x, err = d.u64()
		v = int64(x)
	case TypeFloat64:
		var x uint64
		x, err = d.u64()
		v = math.Float64frombits(x)
	case TypeArray:
		v, err = d.array(depth + 1)
	default:
		return Value{}, d.errorf(CodeInvalid, "unknown value type %d", uint32(t))
	}
	if err != nil {
		return Value{}, err
	}
	return Value{Type: t, Data: v}, nil
}

func (d *decoder) array(depth int) (Array, error) {
	if depth > MaxArrayDepth {
		return Array{}, d.errorf(CodeLimit, "arrays nested deeper than %d", MaxArrayDepth)
	}
	et, err := d.u32()
	if err != nil {
		return Array{}, err
	}
	elem := Type(et)
	if !elem.valid() {
		return Array{}, d.errorf(CodeInvalid, "unknown array element type %d", et)
	}
	n, err := d.count("array element", elem.minSize())
	if err != nil {
		return Array{}, err
	}
	a := Array{Elem: elem}
	switch elem {
	case TypeString:
		s, err := d.strs(n)
		if err != nil {
			return Array{}, err
		}
		a.Data = s
	case TypeArray:
		s := make([]Array, n)
		for i := range s {
			if s[i], err = d.array(depth + 1); err != nil {
				return Array{}, err
			}
		}
		a.Data = s
	default:
		raw, err := d.next(int64(n) * elem.minSize())
		if err != nil {
			return Array{}, err
		}
		if a.Data, err = decodeFixed(elem, raw, n); err != nil {
			return Array{}, d.errorf(CodeInvalid, "%v", err)
		}
	}
	return a, nil
}

// decodeFixed decodes n little-endian fixed-size elements from raw.
func decodeFixed(t Type, raw []byte, n int) (any, error) {
	le := binary.LittleEndian
	switch t {
	case TypeUint8:
		return append([]uint8(nil), raw...), nil
	case TypeInt8:
		s := make([]int8, n)
		for i := range s {
			s[i] = int8(raw[i])
		}
		return s, nil
	case TypeBool:
		s := make([]bool, n)
		for i := range s {
			if raw[i] > 1 {
				return nil, fmt.Errorf("bool byte %d at element %d", raw[i], i)
			}
			s[i] = raw[i] == 1
		}
		return s, nil
	case TypeUint16:
		s := make([]uint16, n)
		for i := range s {
			s[i] = le.Uint16(raw[2*i:])
		}
		return s, nil
	case TypeInt16:
		s := make([]int16, n)
		for i := range s {
			s[i] = int16(le.Uint16(raw[2*i:]))
		}
		return s, nil
	case TypeUint32:
		s := make([]uint32, n)
		for i := range s {
			s[i] = le.Uint32(raw[4*i:])
		}
		return s, nil
	case TypeInt32:
		s := make([]int32, n)
		for i := range s {
			s[i] = int32(le.Uint32(raw[4*i:]))
		}
		return s, nil
	case TypeFloat32:
		s := make([]float32, n)
		for i := range s {
			s[i] = math.Float32frombits(le.Uint32(raw[4*i:]))
		}
		return s, nil
	case TypeUint64:
		s := make([]uint64, n)
		for i := range s {
			s[i] = le.Uint64(raw[8*i:])
		}
		return s, nil
	case TypeInt64:
		s := make([]int64, n)
		for i := range s {
			s[i] = int64(le.Uint64(raw[8*i:]))
		}
		return s, nil
	case TypeFloat64:
		s := make([]float64, n)
		for i := range s {
			s[i] = math.Float64frombits(le.Uint64(raw[8*i:]))
		}
		return s, nil
	}
	return nil, fmt.Errorf("type %v is not fixed-size", t)
}
