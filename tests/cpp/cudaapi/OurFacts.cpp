// The facts (Facts.h) of runtime/CudaApi.h.
#include "tests/cpp/cudaapi/Facts.h"

#include "runtime/CudaApi.h"

#include <typeinfo>

#define PTXJIT_STR2(x) #x
#define PTXJIT_STR(x) PTXJIT_STR2(x)

namespace ptxjit::testing {
namespace {

// Stringizing keeps the header's spacing ("(void *)" or "(void*)"): compare without it.
std::string noSpaces(std::string s) {
  std::erase(s, ' ');
  return s;
}

} // namespace

std::map<std::string, std::string> ourCudaApiFacts() {
  std::map<std::string, std::string> facts;
#define F(x) facts["fn " #x] = typeid(decltype(&::x)).name();
#define E(x) facts["enum " #x] = std::to_string(static_cast<long long>(x));
#define T(x) facts["type " #x] = typeid(x).name();
#define S(x) facts["size " #x] = std::to_string(sizeof(x));
#define M(x) facts["macro " #x] = noSpaces(PTXJIT_STR(x));
#include "tests/cpp/cudaapi/CudaApiNames.def"
#undef F
#undef E
#undef M
#undef T
#undef S
  return facts;
}

} // namespace ptxjit::testing
