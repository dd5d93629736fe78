// libFuzzer target over the frontend and typing (issue 19, item 3): each input decodes
// (fuzz/SnapshotCodec.h) to a code snapshot and argument types; the frontend builds it and
// typing types it. Either may reject the input with a CompileError of kind Unsupported or
// Typing; anything else is a finding and aborts, so that libFuzzer saves the input:
//   - a CompileError of kind Internal ("internal compiler error" on input a user can write or a
//     malformed code object);
//   - any other exception escaping;
//   - a crash, a hang, or an AddressSanitizer/UndefinedBehaviorSanitizer report.
// Built with -DPTXJIT_FUZZ=ON and clang (scripts/fuzz.sh); see docs/reliability.md.
#include "frontend/Frontend.h"
#include "fuzz/SnapshotCodec.h"
#include "ir/Diagnostics.h"
#include "ir/typing/Typing.h"

#include <cstdio>
#include <cstdlib>
#include <exception>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace ptxjit;
  fuzz::FuzzInput in = fuzz::decodeInput(data, size);
  try {
    std::unique_ptr<ir::Function> fn = frontend::buildFunction(in.snapshot, in.kind);
    ir::inferTypes(*fn, in.argTypes, nullptr);
  } catch (const ir::CompileError &e) {
    if (e.kind() == ir::DiagKind::Internal) {
      std::fprintf(stderr, "fuzz_frontend: internal compiler error: %s\n", e.message().c_str());
      std::abort();
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "fuzz_frontend: exception escaped: %s\n", e.what());
    std::abort();
  }
  return 0;
}
