// Facts about the CUDA driver API declarations of one header, as text, for CudaApiTest: each
// entry point's type (typeid name), each enumerator's value and each macro's expansion.
#pragma once

#include <map>
#include <string>

namespace ptxjit::testing {

// From runtime/CudaApi.h (OurFacts.cpp).
std::map<std::string, std::string> ourCudaApiFacts();
// From the CUDA toolkit's cuda.h (ToolkitFacts.cpp).
std::map<std::string, std::string> toolkitCudaApiFacts();

} // namespace ptxjit::testing
