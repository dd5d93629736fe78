// Internal to the frontend: the per-version opcode tables (Opcodes311.cpp, Opcodes312.cpp,
// Opcodes313.cpp), read through the functions of frontend/Opcodes.h.
#pragma once

#include "frontend/Opcodes.h"

namespace ptxjit::frontend::detail {

extern const PyOpcodeEntry kOpcodes311[];
extern const size_t kNumOpcodes311;
extern const PyOpcodeEntry kOpcodes312[];
extern const size_t kNumOpcodes312;
extern const PyOpcodeEntry kOpcodes313[];
extern const size_t kNumOpcodes313;

} // namespace ptxjit::frontend::detail
