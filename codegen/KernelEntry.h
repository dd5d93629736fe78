// Codegen-internal: the LLVM side of the kernel ABI (codegen/KernelABI.h): the entry function
// of a kernel, a ufunc loop kernel or a device function compiled alone, built from the
// PackingPlan of its parameter types, with each argument rebuilt in register form.
#pragma once

#include "codegen/CompileOptions.h"
#include "codegen/KernelABI.h"

#include <llvm/IR/IRBuilder.h>

#include <string>
#include <vector>

namespace ptxjit::codegen::detail {

/// What an entry is.
enum class EntryKind : uint8_t {
  /// A kernel: CUDA: a `.entry` taking the plan's slots, marked in !nvvm.annotations (and its
  /// Python floats' float32 copies listed in kFloat32CopiesAttr); host: `void entry(void **args,
  /// const HostThreadCtx *ctx)` loading slot i from args[i] (the float32 copies unread).
  Kernel,
  /// A device function compiled alone (compile_ptx(device=True)): an external function taking
  /// the plan's slots (plus, on the host, the HostThreadCtx pointer last) and returning
  /// `returnType`.
  DeviceFunction,
};

/// An entry under construction.
struct KernelEntry {
  llvm::Function *function = nullptr;
  /// Host only: the HostThreadCtx pointer (null on CUDA).
  llvm::Value *hostCtx = nullptr;
  /// Per argument (the `types` given): its value in register form (codegen/ScalarValues.h for
  /// scalars and arrays; tuples as literal structs of their elements; a weak float as double).
  std::vector<llvm::Value *> args;
};

/// Creates entry `symbol` in `mod` for arguments of `types` named `names` (parameter names are
/// derived from them: "x_data", "x_shape0", "t_1", "a_f32", ...), whose slots are `plan`
/// (buildPackingPlan(types)), and rebuilds the arguments. `b` is left at the end of the entry
/// block, where the caller emits the body. `returnType` is the entry's return type
/// (DeviceFunction only; kernels return void). The entry does not throw.
KernelEntry buildEntry(llvm::Module &mod, llvm::IRBuilder<> &b, Backend backend, EntryKind kind,
                       const std::string &symbol, const std::vector<const ir::Type *> &types,
                       const std::vector<std::string> &names, const PackingPlan &plan,
                       llvm::Type *returnType = nullptr);

} // namespace ptxjit::codegen::detail
