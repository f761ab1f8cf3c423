package gguf

import "fmt"

// Type is a metadata value type (gguf_metadata_value_type in the spec).
type Type uint32

// The metadata value types, numbered as in the spec.
const (
	TypeUint8   Type = 0
	TypeInt8    Type = 1
	TypeUint16  Type = 2
	TypeInt16   Type = 3
	TypeUint32  Type = 4
	TypeInt32   Type = 5
	TypeFloat32 Type = 6
	TypeBool    Type = 7
	TypeString  Type = 8
	TypeArray   Type = 9
	TypeUint64  Type = 10
	TypeInt64   Type = 11
	TypeFloat64 Type = 12
)

var typeNames = [...]string{"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool", "string", "array", "uint64", "int64", "float64"}

// String returns the spec's name of the type ("uint32", "array", ...).
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("Type(%d)", uint32(t))
}

// valid reports whether t is one of the types of the spec.
func (t Type) valid() bool { return t <= TypeFloat64 }

// minSize is the fewest bytes a value of type t occupies in a file; it bounds
// how many elements an array can announce before we allocate for them.
func (t Type) minSize() int64 {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeString, TypeUint64, TypeInt64, TypeFloat64:
		return 8
	case TypeArray:
		return 12 // element type + count
	}
	return 1
}

// TensorType is a ggml tensor element type (enum ggml_type).
type TensorType uint32

// The ggml tensor types whose block layout this package knows. Numbers are
// ggml's; gaps are types ggml has removed.
const (
	TensorF32     TensorType = 0
	TensorF16     TensorType = 1
	TensorQ4_0    TensorType = 2
	TensorQ4_1    TensorType = 3
	TensorQ5_0    TensorType = 6
	TensorQ5_1    TensorType = 7
	TensorQ8_0    TensorType = 8
	TensorQ8_1    TensorType = 9
	TensorQ2_K    TensorType = 10
	TensorQ3_K    TensorType = 11
	TensorQ4_K    TensorType = 12
	TensorQ5_K    TensorType = 13
	TensorQ6_K    TensorType = 14
	TensorQ8_K    TensorType = 15
	TensorIQ2_XXS TensorType = 16
	TensorIQ2_XS  TensorType = 17
	TensorIQ3_XXS TensorType = 18
	TensorIQ1_S   TensorType = 19
	TensorIQ4_NL  TensorType = 20
	TensorIQ3_S   TensorType = 21
	TensorIQ2_S   TensorType = 22
	TensorIQ4_XS  TensorType = 23
	TensorI8      TensorType = 24
	TensorI16     TensorType = 25
	TensorI32     TensorType = 26
	TensorI64     TensorType = 27
	TensorF64     TensorType = 28
	TensorIQ1_M   TensorType = 29
	TensorBF16    TensorType = 30
	TensorTQ1_0   TensorType = 34
	TensorTQ2_0   TensorType = 35
	TensorMXFP4   TensorType = 39
)

// tensorLayout is a type's block: elements per block and bytes per block,
// from the block structs in ggml-common.h.
type tensorLayout struct {
	name       string
	blockElems int64
	blockBytes int64
}

var tensorLayouts = map[TensorType]tensorLayout{
	TensorF32: {"F32", 1, 4}, TensorF16: {"F16", 1, 2}, TensorBF16: {"BF16", 1, 2},
	TensorF64: {"F64", 1, 8}, TensorI8: {"I8", 1, 1}, TensorI16: {"I16", 1, 2},
	TensorI32: {"I32", 1, 4}, TensorI64: {"I64", 1, 8},
	TensorQ4_0: {"Q4_0", 32, 18}, TensorQ4_1: {"Q4_1", 32, 20},
	TensorQ5_0: {"Q5_0", 32, 22}, TensorQ5_1: {"Q5_1", 32, 24},
	TensorQ8_0: {"Q8_0", 32, 34}, TensorQ8_1: {"Q8_1", 32, 36},
	TensorQ2_K: {"Q2_K", 256, 84}, TensorQ3_K: {"Q3_K", 256, 110},
	TensorQ4_K: {"Q4_K", 256, 144}, TensorQ5_K: {"Q5_K", 256, 176},
	TensorQ6_K: {"Q6_K", 256, 210}, TensorQ8_K: {"Q8_K", 256, 292},
	TensorIQ2_XXS: {"IQ2_XXS", 256, 66}, TensorIQ2_XS: {"IQ2_XS", 256, 74},
	TensorIQ3_XXS: {"IQ3_XXS", 256, 98}, TensorIQ1_S: {"IQ1_S", 256, 50},
	TensorIQ4_NL: {"IQ4_NL", 32, 18}, TensorIQ3_S: {"IQ3_S", 256, 110},
	TensorIQ2_S: {"IQ2_S", 256, 82}, TensorIQ4_XS: {"IQ4_XS", 256, 136},
	TensorIQ1_M: {"IQ1_M", 256, 56}, TensorTQ1_0: {"TQ1_0", 256, 54},
	TensorTQ2_0: {"TQ2_0", 256, 66}, TensorMXFP4: {"MXFP4", 32, 17},
}

// String returns ggml's name of the type ("F16", "Q4_K", ...).
func (t TensorType) String() string {
	if l, ok := tensorLayouts[t]; ok {
		return l.name
	}
	return fmt.Sprintf("TensorType(%d)", uint32(t))
}

// Known reports whether this package knows the type's block layout, and so
// can compute the byte size of a tensor of that type.
func (t TensorType) Known() bool {
	_, ok := tensorLayouts[t]
	return ok
}

// ByteSize returns the bytes a tensor of type t with the given element count
// occupies, or ok=false when the type is unknown or the count is not a whole
// number of blocks or overflows.
func (t TensorType) ByteSize(elems int64) (n int64, ok bool) {
	l, known := tensorLayouts[t]
	if !known || elems < 0 || elems%l.blockElems != 0 {
		return 0, false
	}
	blocks := elems / l.blockElems
	if blocks > maxInt64/l.blockBytes {
		return 0, false
	}
	return blocks * l.blockBytes, true
}

const maxInt64 = int64(^uint64(0) >> 1)
