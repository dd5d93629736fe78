// For tests that link libdevice (GPU code calling math functions): ptxjit builds, and its CPU
// backend runs, without a CUDA toolkit, so where no libdevice is found (codegen/CudaPaths.h)
// such a test is skipped rather than failed.
#pragma once

#include "codegen/CudaPaths.h"

#include <gtest/gtest.h>

// Skips the current test when no libdevice is found. Use at the top of a TEST body.
#define PTXJIT_SKIP_WITHOUT_LIBDEVICE()                                                            \
  do {                                                                                             \
    if (::ptxjit::codegen::libdevicePath().empty())                                                \
      GTEST_SKIP() << "no libdevice (CUDA toolkit) found: "                                        \
                   << ::ptxjit::codegen::libdeviceNotFoundMessage();                               \
  } while (0)
