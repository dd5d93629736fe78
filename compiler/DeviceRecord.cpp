#include "compiler/DeviceRecord.h"

#include "compiler/DiskCache.h"

#include <filesystem>
#include <string_view>

namespace ptxjit::compiler {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kHeader = "ptxjit device record 1\n";
constexpr uint64_t kMaxRecord = 64 * 1024; // identities are a few hundred bytes

std::string resolve(const std::string &dir) {
  return dir.empty() ? diskcache::userDirectory() : dir;
}

/// A decimal number of one or two digits at the start of `s`, consumed.
std::optional<int> number(std::string_view &s) {
  size_t n = 0;
  while (n < s.size() && s[n] >= '0' && s[n] <= '9')
    ++n;
  if (n == 0 || n > 2)
    return std::nullopt;
  int v = 0;
  for (size_t i = 0; i < n; ++i)
    v = v * 10 + (s[i] - '0');
  s.remove_prefix(n);
  return v;
}

} // namespace

std::string deviceRecordPath(const std::string &dir, const std::string &identity) {
  return (fs::path(dir) / ("device-record-" + toHex(sha256(identity), 8) + ".txt")).string();
}

std::optional<RememberedCapability> readDeviceRecord(const std::string &identity,
                                                     const std::string &dir) {
  try {
    std::string where = resolve(dir);
    if (identity.empty() || where.empty())
      return std::nullopt;
    std::optional<std::string> bytes =
        diskcache::readFile(deviceRecordPath(where, identity), kMaxRecord);
    std::string prefix = std::string(kHeader) + identity + "compute capability ";
    if (!bytes || bytes->compare(0, prefix.size(), prefix) != 0)
      return std::nullopt;
    std::string_view rest = std::string_view(*bytes).substr(prefix.size());
    std::optional<int> major = number(rest);
    if (!major || *major == 0 || rest.empty() || rest[0] != '.')
      return std::nullopt;
    rest.remove_prefix(1);
    std::optional<int> minor = number(rest);
    if (!minor || rest != "\n")
      return std::nullopt;
    return RememberedCapability{*major, *minor};
  } catch (...) { // std::bad_alloc
    return std::nullopt;
  }
}

bool writeDeviceRecord(const std::string &identity, RememberedCapability cc,
                       const std::string &dir) {
  try {
    std::string where = resolve(dir);
    if (identity.empty() || where.empty() || cc.major <= 0 || cc.major > 99 || cc.minor < 0 ||
        cc.minor > 99)
      return false;
    std::error_code ec;
    fs::create_directories(where, ec);
    return diskcache::writeFileAtomically(deviceRecordPath(where, identity),
                                          std::string(kHeader) + identity + "compute capability " +
                                              std::to_string(cc.major) + "." +
                                              std::to_string(cc.minor) + "\n");
  } catch (...) { // std::bad_alloc
    return false;
  }
}

} // namespace ptxjit::compiler
