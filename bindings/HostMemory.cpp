#include "bindings/HostMemory.h"

#include "bindings/Target.h"
#include "runtime/HostMemory.h"

#include <stdexcept>
#include <string>

namespace ptxjit::bindings {
namespace {

/// Memory from runtime::HostMemory (CUDA backend) or plain host memory (CPU backend, where
/// pinned, mapped and managed memory are ordinary host memory), exposed through the buffer
/// protocol so that a NumPy array can be built on it and keep it alive.
class HostBuffer {
public:
  HostBuffer(std::shared_ptr<runtime::HostMemory> mem, size_t bytes)
      : mem_(std::move(mem)), bytes_(bytes) {
    if (!mem_ && bytes_)
      plain_.reset(new char[bytes_]);
  }
  void *data() const { return mem_ ? mem_->hostPtr() : plain_.get(); }
  size_t size() const { return bytes_; }
  /// The address kernels use: the device address of mapped or managed memory on the CUDA
  /// backend; the host address on the CPU backend; 0 for pinned memory.
  uint64_t devicePointer() const {
    if (mem_)
      return mem_->devicePtr();
    return reinterpret_cast<uint64_t>(plain_.get());
  }

private:
  std::shared_ptr<runtime::HostMemory> mem_;
  std::unique_ptr<char[]> plain_;
  size_t bytes_;
};

runtime::HostMemory::Kind kindFrom(const std::string &kind) {
  if (kind == "pinned")
    return runtime::HostMemory::Kind::Pinned;
  if (kind == "mapped")
    return runtime::HostMemory::Kind::Mapped;
  if (kind == "managed")
    return runtime::HostMemory::Kind::Managed;
  throw std::invalid_argument("host memory kind must be 'pinned', 'mapped' or 'managed', not '" +
                              kind + "'");
}

} // namespace

void defineHostMemory(py::module_ &m) {
  py::class_<HostBuffer>(m, "HostBuffer", py::buffer_protocol(),
                         "Pinned, mapped or managed host memory (plain host memory on the CPU "
                         "backend).")
      .def_buffer([](HostBuffer &b) {
        return py::buffer_info(b.data(), 1, py::format_descriptor<uint8_t>::format(), 1,
                               {static_cast<py::ssize_t>(b.size())}, {1});
      })
      .def_property_readonly("device_pointer", &HostBuffer::devicePointer)
      .def_property_readonly(
          "host_pointer", [](const HostBuffer &b) { return reinterpret_cast<uintptr_t>(b.data()); })
      .def("__len__", &HostBuffer::size);
  m.def(
      "host_memory",
      [](const std::string &kind, size_t bytes, bool portable, bool wc, bool attachHost) {
        runtime::HostMemory::Kind k = kindFrom(kind);
        if (currentBackend() != codegen::Backend::CUDA)
          return HostBuffer(nullptr, bytes);
        std::shared_ptr<runtime::HostMemory> mem;
        {
          py::gil_scoped_release release;
          mem = runtime::HostMemory::allocate(k, bytes, portable, wc, attachHost);
        }
        return HostBuffer(std::move(mem), bytes);
      },
      py::arg("kind"), py::arg("nbytes"), py::arg("portable") = false, py::arg("wc") = false,
      py::arg("attach_host") = false);
  m.def(
      "register_host",
      [](uintptr_t address, size_t bytes, bool mapped) -> uint64_t {
        if (currentBackend() != codegen::Backend::CUDA)
          return mapped ? address : 0; // kernels of the CPU backend use host memory as it is
        py::gil_scoped_release release;
        return runtime::registerHost(reinterpret_cast<void *>(address), bytes, mapped);
      },
      py::arg("address"), py::arg("nbytes"), py::arg("mapped") = false,
      "Page-locks existing host memory (CUDA backend); with `mapped` also maps it for kernels "
      "and returns the address they use (the host address on the CPU backend).");
  m.def(
      "unregister_host",
      [](uintptr_t address) {
        if (currentBackend() != codegen::Backend::CUDA)
          return;
        py::gil_scoped_release release;
        runtime::unregisterHost(reinterpret_cast<void *>(address));
      },
      py::arg("address"), "Undoes register_host().");
}

} // namespace ptxjit::bindings
