// A fresh temporary directory for a test, removed with its contents (whatever permissions the
// test left on it) when the test ends.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

namespace ptxjit::testing {

struct TempDir {
  std::filesystem::path path;
  /// Makes `<temp dir>/<prefix>-XXXXXX`.
  explicit TempDir(const std::string &prefix = "ptxjit-test") {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    path = ::mkdtemp(buf.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path, std::filesystem::perms::owner_all, ec);
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  /// The names of the directory's entries, less llvm::pruneCache's llvmcache.timestamp (which a
  /// disk-cache store leaves).
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    for (const auto &e : std::filesystem::directory_iterator(path))
      if (e.path().filename() != "llvmcache.timestamp")
        out.push_back(e.path().filename().string());
    return out;
  }
};

} // namespace ptxjit::testing
