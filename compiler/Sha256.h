// SHA-256 (FIPS 180-4), used by the disk cache for its keys and its entries' checksums, and
// XXH64 for fingerprinting large files quickly. Self-contained: the compiler layer does not
// include LLVM.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ptxjit::compiler {

/// A SHA-256 digest.
using Digest = std::array<uint8_t, 32>;

/// Incremental SHA-256: update() any number of times, then digest() once.
class Sha256 {
public:
  Sha256();
  /// Appends `n` bytes at `data`.
  void update(const void *data, size_t n);
  void update(std::string_view s) { update(s.data(), s.size()); }
  /// The digest of everything appended (the object must not be updated afterwards).
  Digest digest();

private:
  void block(const uint8_t *p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t bufLen_ = 0;
  uint64_t total_ = 0;
};

/// SHA-256 of `data` in one call.
Digest sha256(std::string_view data);

/// A fast 64-bit content hash (the XXH64 algorithm) of `n` bytes at `data` with `seed`: for
/// fingerprinting large inputs (libdevice) where SHA-256 would cost milliseconds. Not
/// collision-resistant against an adversary.
uint64_t xxh64(const void *data, size_t n, uint64_t seed);

/// Lower-case hexadecimal of the first `bytes` bytes of `d` (all 32 by default).
std::string toHex(const Digest &d, size_t bytes = 32);

} // namespace ptxjit::compiler
