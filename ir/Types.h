// The type system shared by every layer below the bindings: Numba's scalar and array types,
// NEP 50 "weak" literal types, and the compile-time-only types of symbols (modules, builtins).
//
// Types are interned: each distinct type exists once for the life of the process, so types
// compare by pointer and can key hash maps. All factory functions are thread-safe.
#pragma once

#include "ir/Casting.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ptxjit::ir {

enum class TypeKind : uint8_t {
  Void,        ///< no value (a kernel's or a bare `return`'s result)
  None,        ///< Python's None as a value (e.g. a default argument)
  Bool,        ///< bool (i1 in registers, one byte in memory)
  Int,         ///< int8..int64, uint8..uint64
  Float,       ///< float16, bfloat16, float32, float64
  Complex,     ///< complex64, complex128
  WeakInt,     ///< a Python int literal: adopts the other operand's type (NEP 50), else int64
  WeakFloat,   ///< a Python float literal: float32 next to float32, else float64
  WeakComplex, ///< a Python complex literal: complex64 next to float32/complex64, else complex128
  Array,       ///< an N-d array view: data pointer, shape[ndim], strides[ndim] in bytes
  Tuple,       ///< a fixed-size heterogeneous tuple
  Range,       ///< a `range(start, stop, step)` object (three int64)
  Iterator,    ///< the state of a `for` loop's iterator
  Symbol,      ///< a compile-time name: a module, builtin, intrinsic or NumPy type ("math.sin")
  Function,    ///< a reference to a user device function
  String,      ///< a string literal (only printable)
  Slice,       ///< a `start:stop:step` slice of int64 parts (None parts allowed)
  Pointer,     ///< a raw address (Numba's CPointer(dtype) "int32*", or voidptr "void*")
  Extern,      ///< a foreign device function (cuda.declare_device): called by name
  StrLiteral,  ///< a string constant passed to a device function (Numba's Literal[str]): its value
  Record,      ///< a NumPy structured dtype: named fields at byte offsets (Numba's Record)
  NestedArray, ///< an array field of a record: a scalar dtype and a fixed shape, C order
  Datetime,    ///< numpy.datetime64 with a unit (Numba's NPDatetime): see ir/Datetime.h
  Timedelta,   ///< numpy.timedelta64 with a unit (Numba's NPTimedelta): see ir/Datetime.h
  EnumClass,   ///< an enum.Enum / IntEnum class (Numba's EnumClass): see ir/Enums.h
  EnumMember,  ///< a member of one (Numba's EnumMember / IntEnumMember): see ir/Enums.h
  List,        ///< a list display `[a, b]` (compile-time only: kernels cannot allocate lists)
  CharSeq,     ///< a NumPy `S<n>` / `U<n>` element (Numba's CharSeq / UnicodeCharSeq)
  Bytes,       ///< a bytes constant `b"..."` (compile-time only: stored into `S<n>` elements)
  Ellipsis,    ///< `...` (compile-time only: an array index component, NumPy's basic indexing)
};

/// The unit of a datetime64 / timedelta64 (ir/Datetime.h), numbered as NumPy's
/// NPY_DATETIMEUNIT and numba's DATETIME_UNITS (3 is unused).
enum class DateUnit : uint8_t {
  Y = 0,
  M = 1,
  W = 2,
  D = 4,
  h = 5,
  m = 6,
  s = 7,
  ms = 8,
  us = 9,
  ns = 10,
  ps = 11,
  fs = 12,
  as = 13,
  Generic = 14,
};

/// Memory layout of an array type, in Numba's spelling: C, F or A (any strides).
enum class Layout : uint8_t { C, F, A };

/// Base of all types. Never constructed directly: use the factories below.
class Type {
public:
  TypeKind kind() const { return kind_; }
  /// Numba's spelling: "int64", "float32", "array(float32, 1d, C)", "UniTuple(int64 x 2)".
  const std::string &str() const { return str_; }
  virtual ~Type() = default;

  bool isScalarNumber() const {
    return kind_ == TypeKind::Bool || kind_ == TypeKind::Int || kind_ == TypeKind::Float ||
           kind_ == TypeKind::Complex || isWeak();
  }
  bool isWeak() const {
    return kind_ == TypeKind::WeakInt || kind_ == TypeKind::WeakFloat ||
           kind_ == TypeKind::WeakComplex;
  }

protected:
  Type(TypeKind k, std::string s) : kind_(k), str_(std::move(s)) {}

private:
  TypeKind kind_;
  std::string str_;
};

/// bool, int*, uint*, float*, bfloat16, complex* (the concrete numeric types), and datetime64 /
/// timedelta64 (64-bit counts of a unit: array elements and values like the numbers, but not
/// numbers: isScalarNumber() is false for them; see ir/Datetime.h).
class ScalarType final : public Type {
public:
  /// Width in bits: bool 1; ints 8..64; floats 16/32/64; complex 64/128 (both parts together);
  /// datetime64 / timedelta64 64.
  int bits() const { return bits_; }
  /// For Int only: true for int8..int64, false for uint8..uint64 (datetimes: true).
  bool isSigned() const { return signed_; }
  /// bfloat16 (a Float of 16 bits with float32's 8-bit exponent and an 8-bit significand), the
  /// one float whose width does not tell its format: code that picks a format by bits() asks
  /// this first.
  bool isBFloat16() const { return bfloat16_; }
  /// Size in bytes of one element in memory (bool: 1).
  int byteSize() const { return kind() == TypeKind::Bool ? 1 : bits_ / 8; }
  /// For Datetime and Timedelta: the unit (Generic for the others).
  DateUnit unit() const { return unit_; }
  static bool classof(const Type *t) {
    return t->kind() == TypeKind::Bool || t->kind() == TypeKind::Int ||
           t->kind() == TypeKind::Float || t->kind() == TypeKind::Complex ||
           t->kind() == TypeKind::Datetime || t->kind() == TypeKind::Timedelta;
  }
  ScalarType(TypeKind k, int bits, bool isSigned, std::string s, bool bfloat16 = false,
             DateUnit unit = DateUnit::Generic)
      : Type(k, std::move(s)), bits_(bits), signed_(isSigned), bfloat16_(bfloat16), unit_(unit) {}

private:
  int bits_;
  bool signed_;
  bool bfloat16_;
  DateUnit unit_;
};

/// The type of a Python int/float/complex literal (NEP 50 weak scalar).
class WeakType final : public Type {
public:
  /// The concrete type it becomes when nothing else decides: int64, float64, complex128.
  const ScalarType *defaultType() const { return default_; }
  /// A Python int literal passed to a device function (Numba's IntegerLiteral): its value, which
  /// the callee may use where a compile-time constant is needed (cuda.shared.array(n, ...));
  /// otherwise it is an int literal like any other. Null for other weak types.
  const int64_t *literalValue() const { return hasValue_ ? &value_ : nullptr; }
  static bool classof(const Type *t) { return t->isWeak(); }
  WeakType(TypeKind k, const ScalarType *def, std::string s)
      : Type(k, std::move(s)), default_(def) {}
  WeakType(const ScalarType *def, int64_t value, std::string s)
      : Type(TypeKind::WeakInt, std::move(s)), default_(def), value_(value), hasValue_(true) {}

private:
  const ScalarType *default_;
  int64_t value_ = 0;
  bool hasValue_ = false;
};

/// The element type of an array: a ScalarType, a RecordType or a CharSeqType (numba's Array
/// dtypes).
class ArrayType final : public Type {
public:
  /// A ScalarType, a RecordType or a CharSeqType.
  const Type *dtype() const { return dtype_; }
  /// The dtype when it is a scalar; null for an array of records or of character sequences.
  const ScalarType *scalarDtype() const;
  /// Bytes of one element (records: their itemsize).
  int64_t itemSize() const;
  int ndim() const { return ndim_; }
  Layout layout() const { return layout_; }
  bool readonly() const { return readonly_; }
  static bool classof(const Type *t) { return t->kind() == TypeKind::Array; }
  ArrayType(const Type *dtype, int ndim, Layout layout, bool readonly, std::string s)
      : Type(TypeKind::Array, std::move(s)), dtype_(dtype), ndim_(ndim), layout_(layout),
        readonly_(readonly) {}

private:
  const Type *dtype_;
  int ndim_;
  Layout layout_;
  bool readonly_;
};

class TupleType final : public Type {
public:
  const std::vector<const Type *> &elements() const { return elems_; }
  size_t size() const { return elems_.size(); }
  static bool classof(const Type *t) { return t->kind() == TypeKind::Tuple; }
  TupleType(std::vector<const Type *> elems, std::string s)
      : Type(TypeKind::Tuple, std::move(s)), elems_(std::move(elems)) {}

private:
  std::vector<const Type *> elems_;
};

/// What a `for` loop iterates over.
enum class IterKind : uint8_t { Range, Array, Enumerate, Zip, Tuple };

class IteratorType final : public Type {
public:
  IterKind iterKind() const { return iterKind_; }
  /// The type of each value the iterator yields.
  const Type *yieldType() const { return yield_; }
  /// What is iterated: Range → {Range}; Array → {the array}; Tuple → {the tuple, whose elements
  /// share one type}; Enumerate/Zip → inner iterators.
  const std::vector<const Type *> &sources() const { return sources_; }
  static bool classof(const Type *t) { return t->kind() == TypeKind::Iterator; }
  IteratorType(IterKind k, const Type *yield, std::vector<const Type *> sources, std::string s)
      : Type(TypeKind::Iterator, std::move(s)), iterKind_(k), yield_(yield),
        sources_(std::move(sources)) {}

private:
  IterKind iterKind_;
  const Type *yield_;
  std::vector<const Type *> sources_;
};

/// A compile-time name with no run-time value: "math", "cuda", "cuda.threadIdx",
/// "builtins.range", "math.sin", "numpy.float32".
class SymbolType final : public Type {
public:
  const std::string &path() const { return path_; }
  static bool classof(const Type *t) { return t->kind() == TypeKind::Symbol; }
  SymbolType(std::string path, std::string s) : Type(TypeKind::Symbol, std::move(s)), path_(std::move(path)) {}

private:
  std::string path_;
};

/// A reference to a user function registered with the compiler (a device function, or a
/// kernel, which may not be called from device code).
class FunctionRefType final : public Type {
public:
  int functionId() const { return id_; }
  static bool classof(const Type *t) { return t->kind() == TypeKind::Function; }
  FunctionRefType(int id, std::string s) : Type(TypeKind::Function, std::move(s)), id_(id) {}

private:
  int id_;
};

struct ExternDecl;

/// A foreign device function declared with cuda.declare_device (ir/Values.h's ExternDecl):
/// "ExternFunction(name)". Compile-time only: calls name it.
class ExternFunctionType final : public Type {
public:
  const ExternDecl &decl() const { return *decl_; }
  static bool classof(const Type *t) { return t->kind() == TypeKind::Extern; }
  ExternFunctionType(std::shared_ptr<const ExternDecl> d, std::string s)
      : Type(TypeKind::Extern, std::move(s)), decl_(std::move(d)) {}

private:
  std::shared_ptr<const ExternDecl> decl_;
};

/// A string constant a caller passed to a device function, with its value (Numba's
/// Literal[str], printed "Literal[str]('value')"): compile-time only; one specialization per value,
/// so that the callee can compare it with constants (`if op == "add":`).
class StringLiteralType final : public Type {
public:
  const std::string &value() const { return value_; }
  static bool classof(const Type *t) { return t->kind() == TypeKind::StrLiteral; }
  StringLiteralType(std::string v, std::string s)
      : Type(TypeKind::StrLiteral, std::move(s)), value_(std::move(v)) {}

private:
  std::string value_;
};

/// Types without parameters: Void, None, Range, String, Bytes, Ellipsis.
class SimpleType final : public Type {
public:
  static bool classof(const Type *t) {
    return t->kind() == TypeKind::Void || t->kind() == TypeKind::None ||
           t->kind() == TypeKind::Range || t->kind() == TypeKind::String ||
           t->kind() == TypeKind::Bytes || t->kind() == TypeKind::Ellipsis;
  }
  SimpleType(TypeKind k, std::string s) : Type(k, std::move(s)) {}
};

/// A `start:stop[:step]` slice value (Numba's slice2_type "slice<a:b>" and slice3_type
/// "slice<a:b:c>"). `hasStep` is false when the step is absent, None or the constant 1, which
/// lets a slice keep an array contiguous (see typing of array indices).
class SliceType final : public Type {
public:
  bool hasStep() const { return hasStep_; }
  static bool classof(const Type *t) { return t->kind() == TypeKind::Slice; }
  SliceType(bool hasStep, std::string s) : Type(TypeKind::Slice, std::move(s)), hasStep_(hasStep) {}

private:
  bool hasStep_;
};

/// A raw pointer (Numba's `types.CPointer(dtype)`, spelled "int32*", or `types.voidptr`, spelled
/// "void*"): one 64-bit address, indexable without bounds when it has a pointee. It only enters
/// a kernel through an explicit signature, where the launch passes an integer as the address.
class PointerType final : public Type {
public:
  /// The element type `p[i]` reads and writes; null for void*.
  const ScalarType *pointee() const { return pointee_; }
  static bool classof(const Type *t) { return t->kind() == TypeKind::Pointer; }
  PointerType(const ScalarType *pointee, std::string s)
      : Type(TypeKind::Pointer, std::move(s)), pointee_(pointee) {}

private:
  const ScalarType *pointee_;
};

/// An array field of a record (Numba's NestedArray, spelled "nestedarray(float32, (3, 2))"):
/// `shape` elements of `dtype` in C order, inside the record's bytes. Reading the field gives
/// a C-contiguous array view of that memory (ArrayType of ndim = shape.size()).
class NestedArrayType final : public Type {
public:
  const ScalarType *dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  /// Bytes of the whole field: the product of the shape times the element size.
  int64_t byteSize() const;
  static bool classof(const Type *t) { return t->kind() == TypeKind::NestedArray; }
  NestedArrayType(const ScalarType *dtype, std::vector<int64_t> shape, std::string s)
      : Type(TypeKind::NestedArray, std::move(s)), dtype_(dtype), shape_(std::move(shape)) {}

private:
  const ScalarType *dtype_;
  std::vector<int64_t> shape_;
};

/// The type of a list display `[a, b]` (Numba's List, spelled as Numba spells it: "list(int64)",
/// or "list(int64)<iv=[5, 6]>" when every item is a constant). Kernels cannot allocate lists, so
/// it has no run-time form: typing lets a list reach only a call's argument list, so that the
/// callee's error names it (`cuda.local.array([5, 6], ...)`), and reports every other use.
class ListType final : public Type {
public:
  /// The unified type of the items (a weak type stays weak).
  const Type *dtype() const { return dtype_; }
  static bool classof(const Type *t) { return t->kind() == TypeKind::List; }
  ListType(const Type *dtype, std::string s) : Type(TypeKind::List, std::move(s)), dtype_(dtype) {}

private:
  const Type *dtype_;
};

/// A fixed-length string, NumPy's `S<n>` (n bytes; Numba's CharSeq, spelled "[char x n]") or
/// `U<n>` (n UCS4 code points of four bytes each; Numba's UnicodeCharSeq, "[unichr x n]"): an
/// array element or a record field. As a value (an element read) it is its n code units; a
/// shorter string ends at the first zero code unit, as NumPy reads it.
class CharSeqType final : public Type {
public:
  /// The number of code units (bytes for S, code points for U).
  int64_t count() const { return count_; }
  /// True for `U<n>` (code units are uint32), false for `S<n>` (bytes).
  bool isUnicode() const { return unicode_; }
  /// Bytes of one code unit: 1 or 4.
  int unitBytes() const { return unicode_ ? 4 : 1; }
  /// Bytes of the whole sequence (NumPy's itemsize).
  int64_t byteSize() const { return count_ * unitBytes(); }
  static bool classof(const Type *t) { return t->kind() == TypeKind::CharSeq; }
  CharSeqType(int64_t count, bool unicode, std::string s)
      : Type(TypeKind::CharSeq, std::move(s)), count_(count), unicode_(unicode) {}

private:
  int64_t count_;
  bool unicode_;
};

/// One field of a record: its name, its type (a ScalarType, a NestedArrayType, a CharSeqType or
/// a nested RecordType) and its byte offset from the start of the record.
struct RecordField {
  std::string name;
  const Type *type = nullptr;
  int64_t offset = 0;
};

/// A NumPy structured dtype (Numba's Record): fields at byte offsets within `size` bytes, laid
/// out exactly as NumPy's dtype says (aligned with `align=True`, else packed). Spelled as Numba
/// spells it, "Record(a[type=float64;offset=0],b[type=int32;offset=8];16;True)" (fields in
/// offset order), which types::parseRecord reads back. A record value is a reference to
/// `size` bytes of memory (an element of an array, a kernel argument copied to the device, a
/// local or shared array's element): field reads and writes go to that memory, as in Numba.
class RecordType final : public Type {
public:
  /// In offset order (then by name), as Numba orders them.
  const std::vector<RecordField> &fields() const { return fields_; }
  /// The field called `name`, or null.
  const RecordField *field(const std::string &name) const;
  /// NumPy's itemsize.
  int64_t size() const { return size_; }
  /// NumPy's isalignedstruct (the dtype was made with align=True).
  bool aligned() const { return aligned_; }
  /// A record of a read-only array (constant memory, a read-only host array): its fields
  /// cannot be written. Spelled "readonly Record(...)"; a distinct type from the writable one.
  bool readonly() const { return writable_ != this; }
  /// The same record, writable (this one when it is): the dtype of arrays of it.
  const RecordType *writable() const { return writable_; }
  /// The alignment the start of a record in an array of them is known to have: the largest
  /// power of two dividing its size, at most 16 (array data is at least 16-byte aligned). A
  /// field is read and written with min(its natural alignment, what this and its offset
  /// guarantee), so that packed records are accessed correctly on targets that need alignment.
  int64_t baseAlignment() const;
  /// The alignment loads and stores of the field at `offset` with scalar memory `t` use.
  int64_t fieldAlignment(int64_t offset, const ScalarType *t) const;
  /// The largest natural alignment of any scalar inside it (NumPy's dtype.alignment for an
  /// aligned struct): the alignment a local or shared array of these records gets.
  int64_t maxAlignment() const;
  static bool classof(const Type *t) { return t->kind() == TypeKind::Record; }
  /// `writable`: the writable record this is the read-only form of; null for a writable one.
  RecordType(std::vector<RecordField> fields, int64_t size, bool aligned, std::string s,
             const RecordType *writable = nullptr)
      : Type(TypeKind::Record, std::move(s)), fields_(std::move(fields)), size_(size),
        aligned_(aligned), writable_(writable ? writable : this) {}

private:
  std::vector<RecordField> fields_;
  int64_t size_;
  bool aligned_;
  const RecordType *writable_;
};

/// The natural (ABI) alignment of a value of scalar type `t` in memory: its size, complex
/// numbers that of one part (bool: 1).
int64_t naturalAlignment(const ScalarType *t);

/// The scalar of a record field's memory for alignment purposes: the scalar itself, a nested
/// array's element type, a character sequence's code unit (uint8 or uint32); null for a nested
/// record.
const ScalarType *alignmentScalar(const Type *fieldType);

// ---- Factories (interned, thread-safe) ----
namespace types {
const Type *void_();
const Type *none();
const ScalarType *boolean();
/// bits in {8,16,32,64}.
const ScalarType *integer(int bits, bool isSigned);
const ScalarType *int8();
const ScalarType *int16();
const ScalarType *int32();
const ScalarType *int64();
const ScalarType *uint8();
const ScalarType *uint16();
const ScalarType *uint32();
const ScalarType *uint64();
/// bits in {16,32,64} (any other width gives float64); 16 is IEEE float16, never bfloat16.
const ScalarType *floating(int bits);
const ScalarType *float16();
/// bfloat16 ("bfloat16"; numba-cuda's types.bfloat16, ml_dtypes.bfloat16).
const ScalarType *bfloat16();
const ScalarType *float32();
const ScalarType *float64();
/// bits in {64,128} (total).
const ScalarType *complex(int bits);
const ScalarType *complex64();
const ScalarType *complex128();
/// numpy.datetime64 / timedelta64 of `unit` ("datetime64[D]", "timedelta64[s]"; the generic
/// unit prints "datetime64" / "timedelta64", as NumPy and Numba name them).
const ScalarType *datetime(DateUnit unit);
const ScalarType *timedelta(DateUnit unit);
const WeakType *weakInt();
const WeakType *weakFloat();
const WeakType *weakComplex();
/// The int literal type carrying `value` ("Literal[int](32)"), interned per value.
const WeakType *intLiteral(int64_t value);
/// ndim in 1..3 for kernel arguments; views made inside kernels may have other ndims (>= 0).
/// `dtype` is a ScalarType, a RecordType or a CharSeqType.
const ArrayType *array(const Type *dtype, int ndim, Layout layout, bool readonly = false);
/// A record of `fields` (any order: they are sorted by offset, then name) in `size` bytes.
/// Throws std::invalid_argument naming the problem when a field is malformed: an empty or
/// duplicate name, a name with one of the characters "[],;=()'\"" that the spelling cannot
/// carry, a type other than a scalar, nested array or record, or bytes outside `size`.
const RecordType *record(std::vector<RecordField> fields, int64_t size, bool aligned);
/// The read-only form of record `r` (r itself when it is read-only).
const RecordType *readonlyRecord(const RecordType *r);
/// NumPy's `S<count>` ("[char x count]") or, when `unicode`, `U<count>` ("[unichr x count]");
/// count >= 1 (throws std::invalid_argument otherwise).
const CharSeqType *charSeq(int64_t count, bool unicode);
/// The type of a bytes constant ("readonly bytes(uint8, 1d, C)", as Numba spells it).
const Type *bytes();
/// The type of the `...` constant ("ellipsis", as Numba spells it).
const Type *ellipsis();
/// A nested array field type: `shape` (at least one dimension, each >= 0) of `dtype`.
const NestedArrayType *nestedArray(const ScalarType *dtype, std::vector<int64_t> shape);
/// An array element type from its name: a scalar name (scalarByName) or a record's spelling
/// ("Record(...)"); null when it is neither (a malformed record spelling included). Character
/// sequences are not named here: local, shared and constant arrays of them are not supported.
const Type *dtypeByName(const std::string &name);
/// Reads a record, nested array or string spelling ("Record(...)", "nestedarray(...)", "[char x
/// 12]", as str() writes them) at `text[pos]`, advancing `pos` past it; throws invalid_argument
/// naming what was expected where. IR text and signature parsing read records through this.
const Type *parseRecordSpelling(std::string_view text, size_t &pos);
const TupleType *tuple(const std::vector<const Type *> &elems);
/// A pointer to `pointee` ("int32*"), or void* when `pointee` is null.
const PointerType *pointer(const ScalarType *pointee);
/// void*, Numba's voidptr.
const PointerType *voidPointer();
const Type *range();
const Type *string();
/// A slice type: "slice<a:b:c>" when `hasStep`, else "slice<a:b>".
const SliceType *slice(bool hasStep = true);
const IteratorType *iterator(IterKind k, const Type *yield, const std::vector<const Type *> &sources);
const SymbolType *symbol(const std::string &path);
const FunctionRefType *functionRef(int functionId, const std::string &name);
/// The type of a list display of items of type `dtype`; `initialValue` is the items' values as
/// Numba prints them ("[5, 6]") when every item is a constant, else empty.
const ListType *list(const Type *dtype, const std::string &initialValue);
/// The string literal type of `value` (Literal[str]).
const StringLiteralType *stringLiteral(const std::string &value);
/// The type of declaration `d` (one per declaration id).
const ExternFunctionType *externFunction(std::shared_ptr<const ExternDecl> d);
/// A scalar type from its Numba/NumPy name ("float32", "int64", "bool", "b1", "f4", "i8",
/// "complex128", "uint8", "bfloat16" or numba-cuda's "__nv_bfloat16", "datetime64[D]", "m8[s]",
/// "timedelta64", ...); null when the name is unknown.
const ScalarType *scalarByName(const std::string &name);
} // namespace types

/// `t` with every int literal carrying a value (types::intLiteral) replaced by `with`, in tuples
/// too: int64 for a value's type, types::weakInt() for a parameter variable that a caller
/// specialized on constants.
const Type *replaceIntLiterals(const Type *t, const Type *with);

/// True when `t` is, or is a tuple holding, an int literal carrying a value.
bool hasIntLiteral(const Type *t);

/// The concrete type a value of type `t` gets when it must be materialized on its own:
/// weak types become their default; everything else is returned unchanged.
const Type *concretize(const Type *t);

/// The components of an index of type `index` into an array of `ndim` dimensions (NumPy's basic
/// indexing): a tuple gives its elements, any other type is one component; one Ellipsis
/// component becomes as many full slices (`slice<a:b>`) as the other components leave
/// dimensions (none when they leave none; a None component, a new axis, takes no dimension).
/// `ellipses` (when given) receives the number of Ellipsis components; with two or more they are
/// all kept, for the caller to report.
std::vector<const Type *> indexComponentTypes(const Type *index, int ndim, int *ellipses = nullptr);

} // namespace ptxjit::ir
