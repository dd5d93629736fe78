// Writes fuzz_frontend's seed corpus: every bytecode fixture of the test suite
// (tests/fixtures/bytecode/py3XX/*.json, the project's own test kernels for each Python
// version), encoded with fuzz/SnapshotCodec.h, into the directory given as the argument.
// Each fixture gets the first argument types of a few candidate lists that type it (else
// float64 arrays, which still reach the typing errors), so that the corpus covers typing too.
#include "frontend/Frontend.h"
#include "fuzz/SnapshotCodec.h"
#include "ir/Diagnostics.h"
#include "ir/typing/Typing.h"
#include "tests/cpp/frontend/FixtureLoader.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

using namespace ptxjit;

namespace {

std::vector<std::vector<const ir::Type *>> candidates(size_t n) {
  const auto &t = fuzz::argTypeTable();
  // Indices into argTypeTable(): uniform lists, and a float32 scalar before float32 arrays.
  std::vector<std::vector<size_t>> picks = {{0},     {1},    {2},    {3},   {4},  {5},
                                            {8},     {11},   {12},   {13},  {14}, {12, 1},
                                            {11, 0}, {8, 2}, {0, 8}, {2, 8}};
  std::vector<std::vector<const ir::Type *>> out;
  for (const auto &p : picks) {
    std::vector<const ir::Type *> args;
    for (size_t i = 0; i < n; ++i)
      args.push_back(t[p[std::min(i, p.size() - 1)]]);
    out.push_back(args);
  }
  return out;
}

/// Whether `bytes` decodes back to `in` (positions apart): the codec's round trip, checked on
/// every corpus file so that the corpus is what the fixtures are.
bool roundTrips(const fuzz::FuzzInput &in, const std::string &bytes) {
  fuzz::FuzzInput out =
      fuzz::decodeInput(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
  const frontend::CodeSnapshot &a = in.snapshot, &b = out.snapshot;
  return a.version == b.version && in.kind == out.kind && a.argCount == b.argCount &&
         a.posOnlyArgCount == b.posOnlyArgCount && a.kwOnlyArgCount == b.kwOnlyArgCount &&
         a.flags == b.flags && a.firstLine == b.firstLine && a.name == b.name &&
         a.qualname == b.qualname && a.filename == b.filename && a.code == b.code &&
         a.consts == b.consts && a.names == b.names && a.varnames == b.varnames &&
         a.cellvars == b.cellvars && a.freevars == b.freevars &&
         a.localsPlusNames == b.localsPlusNames && a.exceptionTable == b.exceptionTable &&
         a.globals.size() == b.globals.size() && a.closure.size() == b.closure.size() &&
         a.defaults == b.defaults && in.argTypes == out.argTypes;
}

bool types(const fuzz::FuzzInput &in) {
  try {
    auto fn = frontend::buildFunction(in.snapshot, in.kind);
    ir::inferTypes(*fn, in.argTypes, nullptr);
    return true;
  } catch (const std::exception &) {
    return false;
  }
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  std::filesystem::create_directories(argv[1]);
  int written = 0, typed = 0;
  for (frontend::PyVersion v : fixtures::allPyVersions()) {
    for (const std::string &name : fixtures::fixtureNames(v)) {
      fixtures::Fixture f = fixtures::loadFixture(v, name);
      for (ir::FunctionKind kind : {ir::FunctionKind::Kernel, ir::FunctionKind::Device}) {
        fuzz::FuzzInput in{f.snapshot, kind, {}};
        size_t n = static_cast<size_t>(f.snapshot.argCount);
        bool ok = false;
        for (auto &args : candidates(n)) {
          in.argTypes = args;
          if ((ok = types(in)))
            break;
        }
        if (!ok)
          in.argTypes = candidates(n).front();
        typed += ok;
        std::string path = std::string(argv[1]) + "/" + frontend::pyVersionName(v) + "-" + name +
                           (kind == ir::FunctionKind::Device ? "-device" : "-kernel");
        std::string bytes = fuzz::encodeInput(in);
        if (!roundTrips(in, bytes)) {
          std::fprintf(stderr, "%s: the encoding does not decode back to the fixture\n",
                       path.c_str());
          return 1;
        }
        std::ofstream(path, std::ios::binary) << bytes;
        ++written;
      }
    }
  }
  std::printf("%d corpus files (%d typed without error) in %s\n", written, typed, argv[1]);
  return written ? 0 : 1;
}
