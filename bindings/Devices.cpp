// cuda.gpus, cuda.select_device, cuda.current_context and friends: the runtime's devices
// (runtime/Device.h) as python/ptxjit/_devices.py uses them. On the CPU backend these are not
// called: the package models one device there without the driver.
#include "bindings/Devices.h"

#include "runtime/Device.h"
#include "runtime/Memory.h"
#include "runtime/Nvrtc.h"

#include <pybind11/pybind11.h>

namespace ptxjit::bindings {
namespace {

// The properties numba-cuda's Device offers (attribute names as numba spells them).
py::dict deviceInfo(const runtime::Device &dev) {
  py::dict d;
  d["id"] = dev.ordinal();
  d["name"] = dev.name();
  d["compute_capability"] =
      py::make_tuple(dev.computeCapabilityMajor(), dev.computeCapabilityMinor());
  d["MULTIPROCESSOR_COUNT"] = dev.multiprocessorCount();
  d["MAX_THREADS_PER_BLOCK"] = dev.maxThreadsPerBlock();
  d["MAX_BLOCK_DIM_X"] = dev.maxBlockDim()[0];
  d["MAX_BLOCK_DIM_Y"] = dev.maxBlockDim()[1];
  d["MAX_BLOCK_DIM_Z"] = dev.maxBlockDim()[2];
  d["MAX_GRID_DIM_X"] = dev.maxGridDim()[0];
  d["MAX_GRID_DIM_Y"] = dev.maxGridDim()[1];
  d["MAX_GRID_DIM_Z"] = dev.maxGridDim()[2];
  d["WARP_SIZE"] = dev.warpSize();
  d["MAX_SHARED_MEMORY_PER_BLOCK"] = dev.sharedMemoryPerBlock();
  d["MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"] = dev.sharedMemoryPerBlockOptin();
  d["total_memory"] = dev.totalMemory();
  d["PCI_BUS_ID"] = dev.attribute(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
  d["PCI_DEVICE_ID"] = dev.attribute(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);
  d["UNIFIED_ADDRESSING"] = dev.attribute(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING);
  return d;
}

/// numba-cuda's Device.uuid ("GPU-" and the UUID; runtime::Device::uuid).
std::string deviceUuid(int ordinal) { return runtime::Device::get(ordinal).uuid(); }

} // namespace

void defineDevices(py::module_ &m) {
  m.def(
      "_device_count", [] { return runtime::Device::count(); },
      "How many CUDA devices the driver exposes (cuDeviceGetCount).");
  m.def(
      "_device_info", [](int ordinal) { return deviceInfo(runtime::Device::get(ordinal)); },
      py::arg("ordinal"),
      "Device `ordinal`'s properties (opens it; the thread's current device is unchanged).");
  m.def(
      "_device_summary",
      [](int ordinal) {
        runtime::DeviceSummary s = runtime::describeDevice(ordinal);
        py::dict d;
        d["id"] = ordinal;
        d["name"] = s.name;
        d["compute_capability"] = py::make_tuple(s.major, s.minor);
        return d;
      },
      py::arg("ordinal"),
      "Device `ordinal`'s id, name and compute capability, read without opening it.");
  m.def("_device_uuid", &deviceUuid, py::arg("ordinal"),
        "Device `ordinal`'s UUID as numba-cuda writes it: 'GPU-xxxxxxxx-xxxx-xxxx-xxxx-...'.");
  m.def(
      "_current_device", [] { return runtime::Device::currentOrdinal(); },
      "The calling thread's current device ordinal.");
  m.def(
      "_select_device", [](int ordinal) { runtime::Device::select(ordinal); }, py::arg("ordinal"),
      "Makes device `ordinal` the calling thread's current device.");
  m.def(
      "_can_access_peer",
      [](int ordinal, int peer) { return runtime::Device::get(ordinal).canAccessPeer(peer); },
      py::arg("ordinal"), py::arg("peer"),
      "Whether device `ordinal` can access device `peer`'s memory (cuDeviceCanAccessPeer).");
  m.def(
      "_enable_peer_access",
      [](int ordinal, int peer) {
        py::gil_scoped_release release;
        runtime::Device::get(ordinal).enablePeerAccess(peer);
      },
      py::arg("ordinal"), py::arg("peer"),
      "Lets device `ordinal`'s kernels and copies use device `peer`'s memory.");
  m.def(
      "_peer_access_enabled",
      [](int ordinal, int peer) { return runtime::Device::get(ordinal).peerAccessEnabled(peer); },
      py::arg("ordinal"), py::arg("peer"));
  m.def(
      "_memory_info",
      [] {
        runtime::MemoryInfo info;
        {
          py::gil_scoped_release release;
          info = runtime::memoryInfo();
        }
        return py::make_tuple(info.free, info.total);
      },
      "(free, total) bytes of the current device's memory (cuMemGetInfo).");
  m.def(
      "_driver_version",
      [] {
        int v = runtime::driver().version; // DriverUnavailable without a usable driver
        return py::make_tuple(v / 1000, (v % 1000) / 10);
      },
      "The CUDA version of the driver (cuDriverGetVersion) as (major, minor).");
  m.def(
      "_nvrtc_version",
      [] {
        auto [major, minor] = runtime::nvrtcVersion();
        return py::make_tuple(major, minor);
      },
      "The version (major, minor) of the CUDA toolkit's NVRTC that ptxjit uses.");
  m.def(
      "_defer_cleanup",
      [](bool begin) {
        if (begin)
          runtime::beginDeferredCleanup();
        else
          runtime::endDeferredCleanup();
      },
      py::arg("begin"),
      "Opens (True) or closes (False) a deferral of memory cleanup (cuda.defer_cleanup).");
  m.def(
      "_deferred_allocations", [] { return runtime::deferredAllocationCount(); },
      "The allocations kept by open cleanup deferrals (for tests).");
  m.def(
      "_synchronize_device",
      [](int ordinal) {
        py::gil_scoped_release release;
        runtime::Device::Selection on(ordinal);
        runtime::synchronize();
        on.restore();
      },
      py::arg("ordinal"), "Waits for all work on device `ordinal` (cuCtxSynchronize).");
}

} // namespace ptxjit::bindings
