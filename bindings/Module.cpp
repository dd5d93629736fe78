// The extension module ptxjit._core: kernels (Dispatcher), device arrays, streams, targets.
#include "bindings/ArgTypes.h"
#include "bindings/DLPack.h"
#include "bindings/DeviceArray.h"
#include "bindings/Devices.h"
#include "bindings/Dispatcher.h"
#include "bindings/Errors.h"
#include "bindings/HostMemory.h"
#include "bindings/Snapshot.h"
#include "bindings/Streams.h"
#include "bindings/Target.h"
#include "bindings/Ufunc.h"
#include "codegen/CudaPaths.h"
#include "compiler/Compiler.h"
#include "compiler/DiskCache.h"
#include "ir/Conversions.h"
#include "ir/typing/Libdevice.h"
#include "ir/typing/NumpyUfuncs.h"
#include "runtime/Device.h"
#include "runtime/Xoroshiro.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;
using namespace ptxjit;
using namespace ptxjit::bindings;

PYBIND11_MODULE(_core, m) {
  m.doc() = "ptxjit's compiler and runtime (C++). Use ptxjit.cuda instead of this module.";
  registerErrorTranslators();
  // libdevice's conda and wheel look-ups (codegen/CudaPaths.h) need the Python environment;
  // taken once here, so that compiling never calls into Python for it.
  py::module_ sys = py::module_::import("sys");
  std::vector<std::string> paths;
  for (py::handle p : sys.attr("path"))
    if (py::isinstance<py::str>(p))
      paths.push_back(p.cast<std::string>());
  codegen::setPythonSearchPaths(sys.attr("prefix").cast<std::string>(), std::move(paths));
  defineStreams(m);
  defineGraphs(m);
  defineDeviceArrays(m);
  defineDLPack(m);
  defineDevices(m);
  defineHostMemory(m);
  defineDispatcher(m);
  defineUfunc(m);

  m.def(
      "libdevice_candidates",
      [] {
        std::vector<std::pair<std::string, std::string>> out;
        for (const codegen::LibdeviceCandidate &c : codegen::libdeviceCandidates())
          out.emplace_back(c.source, c.path);
        return out;
      },
      "The places libdevice is looked for, in order, as (source, path) pairs.");
  m.def(
      "libdevice_path", [] { return codegen::libdevicePath(); },
      "The libdevice file CUDA compiles link ('' when none is found).");
  m.def(
      "is_available", [] { return cudaAvailable(); },
      "True when a CUDA driver and GPU can be used.");
  m.def("unavailable_reason", [] {
    std::string why;
    return cudaAvailable(&why) ? std::string() : why;
  });
  m.def(
      "select_target", [](const std::string &name) { selectTarget(name); }, py::arg("name"),
      "Use the 'cpu' or 'cuda' backend from now on ('' decides again from PTXJIT_TARGET).");
  m.def(
      "current_target", [] { return std::string(backendName(currentBackend())); },
      "The backend kernels run on: 'cuda' or 'cpu'.");
  m.def(
      "snapshot", [](py::object func) { return snapshotToDict(*snapshotFunction(func)); },
      py::arg("func"), "The compiler's snapshot of a Python function, as a dict (for tests).");
  m.def(
      "compiled_count", [] { return compiler::Compiler::instance().compiledCount(); },
      "How many specializations were compiled in this process (for tests).");
  m.def(
      "_compiler_entry_count", [] { return compiler::Compiler::instance().entryCount(); },
      "How many functions the compiler's table holds, registered or kept for callers (for "
      "tests: dropped kernels must not accumulate).");
  m.def(
      "cache_counters",
      [] {
        const compiler::CacheCounters &c = compiler::cacheCounters();
        py::dict d;
        d["hits"] = c.hits.load();
        d["misses"] = c.misses.load();
        d["stores"] = c.stores.load();
        d["rejected"] = c.rejected.load();
        return d;
      },
      "The disk cache's process-wide counters (cache=True): hits, misses, stores and rejected "
      "(corrupt or unreadable) entries.");
  m.def(
      "typeof",
      [](py::object value) {
        ArgReader reader;
        std::string why;
        if (!reader.read(value.ptr(), 0, why))
          throw PtxjitPyError("TypingError", "cannot determine the kernel argument type of " +
                                                 py::repr(value).cast<std::string>() + ": " + why);
        // A Python scalar is typed as a launch types it: its concrete (not weak) type.
        return typeDescription(ir::concretize(typesFromCodes(reader.codes, false)[0]));
      },
      py::arg("value"),
      "The kernel argument type a launch gives `value`, as a type description "
      "(ptxjit.types.from_description).");
  m.def(
      "libdevice_functions",
      [] {
        py::list out;
        for (const ir::LibdeviceFunction *f : ir::libdeviceFunctions())
          out.append(py::make_tuple(f->name, f->signature()));
        return out;
      },
      "ptxjit.cuda.libdevice's functions: (name, signature) pairs (ir/typing/Libdevice.def).");
  m.def(
      "_conversion",
      [](const std::string &from, const std::string &to) {
        const ir::ScalarType *f = ir::types::scalarByName(from), *t = ir::types::scalarByName(to);
        if (!f || !t)
          throw py::value_error("unknown scalar type '" + (f ? to : from) + "'");
        return py::make_tuple(ir::conversionName(ir::scalarConversion(f, t, ir::Rules::NumPy)),
                              ir::conversionName(ir::scalarConversion(f, t, ir::Rules::Numba)));
      },
      py::arg("from_type"), py::arg("to_type"),
      "(NumPy's grade, Numba's grade) of converting one scalar type to another, from the "
      "compiler's table (ir/Conversions.h), for tests.");
  m.def(
      "_numpy_ufunc_loops",
      [] {
        py::dict d;
        for (const ir::NumpyUfunc *u : ir::numpyUfuncs()) {
          py::list loops;
          for (const ir::LoopTypes &l : u->loops)
            loops.append(ir::loopTypesStr(l));
          d[py::str(u->name)] = loops;
        }
        return d;
      },
      "The NumPy ufuncs kernels call and their loops in NumPy's type characters "
      "(ir/typing/NumpyUfuncs.def), for tests.");
  m.def(
      "init_xoroshiro128p_states",
      [](py::buffer states, uint64_t seed, uint64_t subsequenceStart) {
        py::buffer_info info = states.request(/*writable=*/true);
        if (info.itemsize != sizeof(runtime::Xoroshiro128pState) ||
            (info.ndim == 1 && info.shape[0] > 1 && info.strides[0] != info.itemsize) ||
            info.ndim > 1)
          throw py::value_error("xoroshiro128+ states must be a contiguous 1-d array of "
                                "xoroshiro128p_dtype (16 bytes an element)");
        size_t n = info.ndim == 0 ? 1 : static_cast<size_t>(info.shape[0]);
        auto *p = static_cast<runtime::Xoroshiro128pState *>(info.ptr);
        py::gil_scoped_release release;
        runtime::initXoroshiro128pStates(p, n, seed, subsequenceStart);
      },
      py::arg("states"), py::arg("seed"), py::arg("subsequence_start"),
      "Fills a host array of xoroshiro128p_dtype as numba-cuda's init_xoroshiro128p_states_cpu "
      "does (ptxjit.cuda.random; runtime/Xoroshiro.h).");
}
