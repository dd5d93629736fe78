// The device record: the compute capability that kernels were last compiled for in a process
// that saw the same devices, kept in the per-user cache directory so that a later process can
// compile before CUDA has started (cuInit takes 100-200 ms; the compute capability is needed
// to choose the target, and CUDA answers it only after cuInit).
//
// A record is keyed by runtime::deviceSetIdentity() (the driver library and its version, the
// GPUs the kernel module lists, CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER), all readable without
// cuInit. A record is a guess, never trusted past CUDA's start-up: compile options are taken
// again once the driver is loaded (bindings' compileOptionsFor), so a kernel compiled from a
// record that no longer holds is compiled again for the devices CUDA reports, and the record is
// rewritten.
//
// Files `<dir>/device-record-<16 hex digits of the identity's SHA-256>.txt`, in
// diskcache::userDirectory() (not PTXJIT_CACHE_DIR, which holds compiled code only): a header
// line, the identity, then `compute capability <major>.<minor>`. Written to a temporary file
// and renamed into place. No Python here.
#pragma once

#include <optional>
#include <string>

namespace ptxjit::compiler {

struct RememberedCapability {
  int major = 0;
  int minor = 0;
  bool operator==(const RememberedCapability &) const = default;
};

/// The path of the record for `identity` in `dir`.
std::string deviceRecordPath(const std::string &dir, const std::string &identity);

/// The compute capability recorded for `identity` in `dir` (diskcache::userDirectory() when
/// empty). nullopt when `identity` is empty, or the record is missing, unreadable, for another
/// identity (a hash collision) or malformed. Never throws.
std::optional<RememberedCapability> readDeviceRecord(const std::string &identity,
                                                     const std::string &dir = {});

/// Records `cc` for `identity` in `dir` (diskcache::userDirectory() when empty; created when
/// missing). Returns false, leaving no temporary file, when `identity` is empty, `cc` is not a
/// compute capability (major 1-99, minor 0-99) or the directory cannot be written. Never throws.
bool writeDeviceRecord(const std::string &identity, RememberedCapability cc,
                       const std::string &dir = {});

} // namespace ptxjit::compiler
