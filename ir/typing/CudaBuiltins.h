// The cooperating-threads builtins (ir/typing/CudaBuiltins.def): their kinds, and the compile-time
// facts typing and lowering both need (constant shapes and dtypes of cuda.shared.array and
// cuda.local.array, the binding of keyword arguments).
#pragma once

#include "ir/IR.h"
#include "ir/Types.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ptxjit::ir {

/// How a cooperating-threads builtin is typed and lowered.
enum class CudaKind : uint8_t {
  SharedArray, ///< cuda.shared.array(shape, dtype): a C array in shared memory (shape 0: dynamic)
  LocalArray,  ///< cuda.local.array(shape, dtype): a C array private to the thread
  ConstArray,  ///< cuda.const.array_like(global array): the array frozen into constant memory
  Barrier,     ///< syncthreads (variant 0) / _count / _and / _or (1..3)
  Syncwarp,    ///< syncwarp([mask])
  Fence,       ///< threadfence (0), threadfence_block (1), threadfence_system (2)
  Value,       ///< laneid (0), warpsize (1): attributes of `cuda`, int32
  Shfl,        ///< shfl_sync / up / down / xor (variant 0..3)
  Vote,        ///< all / any / eq (bool) / ballot (int32) _sync (variant 0..3)
  Match,       ///< match_any_sync (int32), match_all_sync ((int32, bool))
  LaneMask,    ///< activemask (0), lanemask_lt (1): uint32
  Atomic,      ///< cuda.atomic.<op>(ary, idx, val): see AtomicOp for the variant
  AtomicCas,   ///< compare_and_swap(ary, old, val) (0), cas(ary, idx, old, val) (1)
  BitOp,       ///< popc (0), brev (1), clz (2), ffs (3)
  Fma,         ///< fma(a, b, c)
  Cbrt,        ///< cbrt(x)
  Selp,        ///< selp(cond, a, b)
  Nanosleep,   ///< nanosleep(ns): suspends the thread for about ns nanoseconds (0 to 2*ns)
  CacheLoad,   ///< ldca/ldcg/ldcs/ldlu/ldcv(array, index): see cacheOperator for the variant
  CacheStore,  ///< stcg/stcs/stwb/stwt(array, index, value): see cacheOperator
  Vector,      ///< a vector type's constructor (float32x4(...)): see vectorTypeOfVariant
  Grid,        ///< cuda.cg.this_grid() (0), GridGroup.sync() (1): a cooperative launch
};

/// The type of cuda.cg.this_grid()'s value (numba-cuda's GridGroup): compile-time only.
inline constexpr const char *kGridGroupSymbol = "cuda.cg.GridGroup";

/// The variants of CudaKind::Atomic.
enum class AtomicOp : uint8_t { Add, Sub, And, Or, Xor, Inc, Dec, Exch, Max, Min, NanMax, NanMin };

/// The PTX cache operator of a CacheLoad ("ca", "cg", "cs", "lu", "cv") or CacheStore ("cg",
/// "cs", "wb", "wt") builtin's variant ("" for anything else).
const char *cacheOperator(CudaKind kind, int variant);

/// A CUDA vector type (numba-cuda's float32x4, int16x2, ...): `count` (1 to 4) components of
/// `base` (int8 .. uint64, float32 or float64), read as .x, .y, .z and .w.
struct VectorTypeInfo {
  const ScalarType *base = nullptr;
  int count = 0;
};

/// The vector type a CudaKind::Vector builtin's variant constructs.
VectorTypeInfo vectorTypeOfVariant(int variant);

/// The type of the values of vector type `v`: the named tuple (ir/NamedTuples.h) of class
/// "<base>x<count>" ("float32x4") with fields x, y, z, w, so that vectors pass to and return
/// from device functions, and unify, as tuples do, and `.x` reads a component.
const TupleType *vectorType(VectorTypeInfo v);

/// The vector type `t` is the type of (vectorType), or nullopt for any other type.
std::optional<VectorTypeInfo> vectorTypeInfo(const Type *t);

/// numba-cuda's dim3 values, the symbols cuda.threadIdx (0), cuda.blockDim (1), cuda.blockIdx
/// (2) and cuda.gridDim (3) (the order of codegen's special registers); -1 for other types.
int dim3Symbol(const Type *t);

struct CudaBuiltinInfo {
  CudaKind kind;
  int variant;
};

/// The kind and variant of `id`, or nullptr when `id` is not a cooperating-threads builtin.
const CudaBuiltinInfo *cudaBuiltinInfo(BuiltinId id);

/// The dimensions an instruction denotes when it is a compile-time constant shape: an int or
/// a tuple of ints given as a literal, a frozen global or closure value, a tuple built of those,
/// or a local variable assigned exactly once from one of those. nullopt otherwise.
std::optional<std::vector<int64_t>> constantShape(const Instr *i, const Function &fn);

/// For an int, or a tuple of ints, written as a literal, a frozen global or closure value, a
/// local assigned exactly once from one of those, or a parameter whose caller passed one: the
/// int literal type carrying the value (types::intLiteral), or a tuple of those; null
/// otherwise.
const Type *constantIntsType(const Instr *i, const Function &fn);

/// What NumPy makes of a dtype string (np.dtype(text)): the scalar type when it is one kernels
/// support (null otherwise), and whether NumPy knows the string at all ("O", "U5" and "M8[D]"
/// are known but not supported; "int33" is not known).
struct NumpyDtypeName {
  const ScalarType *type = nullptr;
  bool known = false;
};
NumpyDtypeName numpyDtypeString(const std::string &text);

/// The element type a dtype argument names: a NumPy or ptxjit type (numpy.float32, float32), a
/// string as NumPy reads it ("float32", "f4", "<i8", "float"), a record type (a structured
/// numpy.dtype, a record array's `.dtype`, ptxjit.types.Record), whose symbol is
/// "numpy.Record(...)", or numpy.dtype(...) of one of those; null otherwise.
const Type *constantDtype(const Instr *i);

/// The arguments of call `i` bound to parameters `names` in order (positional first, then
/// keywords by name); a missing one is null. Returns false (with `why` set) for too many
/// arguments, an unknown keyword or a parameter given twice.
bool bindCallArgs(const CallInstr *i, const std::vector<std::string> &names,
                  std::vector<const Instr *> &out, std::string &why);

/// The `alignment=` of a cuda.shared.array / cuda.local.array call `i` in `fn` (`arg`, the bound
/// argument, may be null): 0 when absent or None, else its value, numba-cuda's rules checked: a
/// compile-time int constant (else ConstantRequired, "RequireLiteralValue: alignment must be a
/// constant integer"), positive, a power of 2 and a multiple of the pointer size, 8 (else
/// ArgumentValue, a ValueError: "Alignment must be a power of 2"). `name` names the call in the
/// messages, located in `fn`'s file.
int64_t arrayAlignment(const CallInstr *i, const Instr *arg, const Function &fn,
                       const std::string &name);

/// The most bytes of constant memory (global arrays and cuda.const.array_like) one kernel may
/// use: the GPU's 64 KiB constant bank.
inline constexpr int64_t kMaxConstArrayBytes = 64 * 1024;

} // namespace ptxjit::ir
