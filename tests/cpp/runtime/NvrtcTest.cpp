// runtime/Nvrtc: CUDA C++ to relocatable PTX for link= (needs the toolkit's libnvrtc, which
// this machine and CI have without a GPU; skipped where it is missing).
#include "runtime/Nvrtc.h"

#include <gtest/gtest.h>

namespace ptxjit::runtime {
namespace {

bool haveNvrtc() {
  try {
    compileCudaToPtx("", "empty.cu", 9, 0);
    return true;
  } catch (const NvrtcError &e) {
    return std::string(e.what()).find("was not found") == std::string::npos;
  }
}

TEST(Nvrtc, CompilesCudaCppToRelocatablePtxForTheComputeCapability) {
  if (!haveNvrtc())
    GTEST_SKIP() << "libnvrtc not found";
  std::string ptx = compileCudaToPtx(
      "extern \"C\" __device__ int mul_f32(float *out, float a, float b) { *out = a * b; "
      "return 0; }",
      "mul.cu", 8, 6);
  EXPECT_NE(ptx.find(".target sm_86"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find(".visible .func"), std::string::npos) << ptx; // a linkable device function
  EXPECT_NE(ptx.find("mul_f32"), std::string::npos);
  EXPECT_NE(ptx.find("mul.f32"), std::string::npos);
}

TEST(Nvrtc, ToolkitHeadersAreOnTheIncludePath) {
  if (!haveNvrtc())
    GTEST_SKIP() << "libnvrtc not found";
  std::string ptx = compileCudaToPtx("#include <cuda_fp16.h>\n"
                                     "extern \"C\" __device__ float h(float x) {\n"
                                     "  return __half2float(__float2half(x)); }",
                                     "half.cu", 9, 0);
  EXPECT_NE(ptx.find("cvt.rn.f16.f32"), std::string::npos) << ptx;
}

TEST(Nvrtc, ACompileErrorCarriesTheLog) {
  if (!haveNvrtc())
    GTEST_SKIP() << "libnvrtc not found";
  try {
    compileCudaToPtx("__device__ int broken(int x) { return x + ; }", "broken.cu", 9, 0);
    FAIL() << "expected NvrtcError";
  } catch (const NvrtcError &e) {
    std::string what = e.what();
    EXPECT_NE(what.find("NVRTC could not compile 'broken.cu'"), std::string::npos) << what;
    EXPECT_NE(what.find("broken.cu(1)"), std::string::npos) << what; // the log's location
  }
}

TEST(Nvrtc, CandidatesStartWithTheOverride) {
  setenv("PTXJIT_NVRTC", "/opt/x/libnvrtc.so", 1);
  std::vector<std::string> c = nvrtcCandidates();
  unsetenv("PTXJIT_NVRTC");
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(c.front(), "/opt/x/libnvrtc.so");
  EXPECT_EQ(c.back(), "libnvrtc.so");
}

} // namespace
} // namespace ptxjit::runtime
