// The on-disk cache behind `@cuda.jit(cache=True)`: compiled code (PTX for CUDA, a relocatable
// object file for the host backend) stored in files keyed by a SHA-256 of everything that
// determines it.
//
// Keys (CacheKey) are built from tagged, length-prefixed fields, so two different sequences of
// inputs never encode to the same bytes: the function's snapshot (bytecode, constants, names,
// positions, frozen globals and closure values, defaults; device functions it refers to by
// their own snapshots, transitively), the argument types, every compile option, the ptxjit
// version and build, the LLVM version, and the host CPU (host). PTX that links libdevice
// depends on its file too: the entry records which (a hit that calls no math function never looks
// for libdevice).
//
// Entries are files `<dir>/<prefix>.<key hex>.ptxjitc` holding a header (magic, format
// version, the full key, the payload's length and an XXH3-128 checksum) and the payload
// (sections of bytes). They are written to a temporary file in the same directory and renamed into
// place, so a reader sees either nothing or a complete entry, also with several processes at once.
// An entry that cannot be read, is truncated, has another key or a bad checksum is ignored
// (and replaced by the next store), never trusted.
//
// Directories are kept within a size and age bound by LLVM's cache pruning (llvm::pruneCache,
// the policy LLVM's ThinLTO cache uses), configured by PTXJIT_CACHE_POLICY: see pruningPolicy.
//
// No Python here, and of LLVM only its Support library (SHA-256, xxHash, cache pruning): the
// compiler uses this for every specialization it compiles, kernels (Compiler::specialize) and
// ufunc loop kernels (Compiler::specializeLoop) alike.
#pragma once

#include "codegen/CompileOptions.h"
#include "frontend/CodeSnapshot.h"
#include "ir/Types.h"

#include <llvm/Support/CachePruning.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxjit::compiler {

/// A SHA-256 digest.
using Digest = std::array<uint8_t, 32>;

/// SHA-256 of `data` in one call (llvm::SHA256).
Digest sha256(std::string_view data);

/// Lower-case hexadecimal of the first `bytes` bytes of `d` (all 32 by default).
std::string toHex(const Digest &d, size_t bytes = 32);

/// Accumulates the inputs of a cache key. Every field is appended as (tag, length, bytes), so
/// the encoding is unambiguous; the key is the SHA-256 of that encoding.
class CacheKey {
public:
  /// Appends a field named `tag` holding `bytes`.
  CacheKey &add(std::string_view tag, std::string_view bytes);
  /// Appends a field holding `v` (as 8 little-endian bytes).
  CacheKey &addInt(std::string_view tag, int64_t v);
  /// The key so far (the builder may keep growing afterwards).
  Digest digest() const;

private:
  // The encoding, hashed whole by digest(): hundreds of small fields fed to SHA-256 one by one
  // cost more in the hasher's per-call work than the hashing itself.
  std::string encoding_;
};

/// Appends every field of `s` to `key`. A global or closure value that is a device function
/// (GlobalValue::Kind::DeviceFunction) is appended by calling `deviceFunction(key, value)`: the
/// compiler appends the callee's own snapshot there, since function ids differ between
/// processes. Other values are appended as their full contents (kind, constant, dtype, path).
void addSnapshot(CacheKey &key, const frontend::CodeSnapshot &s,
                 const std::function<void(CacheKey &, const ir::GlobalValue &)> &deviceFunction);

/// Appends every field of `opts` (backend, compute capability, PTX version, fastmath, opt
/// level).
void addCompileOptions(CacheKey &key, const codegen::CompileOptions &opts);

/// Appends argument types by their full spelling (element type, ndim, layout, readonly).
void addArgTypes(CacheKey &key, const std::vector<const ir::Type *> &argTypes);

/// Appends what the code depends on outside the function: the ptxjit version and build (the
/// loaded binary holding this code, so a rebuilt compiler never reads entries of an older one),
/// the LLVM version, and for the host the host triple, CPU and features. Files count by path,
/// size, modification time, device and inode (one stat, not a read). libdevice is not appended:
/// an entry whose code links it records libdeviceStamp() instead, compared when it is loaded.
/// Touches no LLVM target or pass.
void addToolchain(CacheKey &key, codegen::Backend backend);

/// libdevice's file (codegen::libdevicePath()) as the key identifies files: path, size,
/// modification time, device and inode, or "missing:" when there is none. Never throws but
/// std::bad_alloc.
std::string libdeviceStamp();

/// What one entry holds: a kind (EntryKind or a user value) and opaque sections.
struct CacheEntry {
  uint32_t kind = 0;
  std::vector<std::string> sections;
  bool operator==(const CacheEntry &o) const = default;
};

/// Entry kinds written by the compiler; sections are {symbol, code, llvm IR, launch facts,
/// libdevice} (launch facts, CUDA: "cooperative" for a kernel that needs a cooperative launch,
/// else empty; libdevice: the libdeviceStamp() of the file the code was linked with, empty when
/// it links none; an entry whose stamp is not the current file's is not used).
enum class EntryKind : uint32_t { Ptx = 1, HostObject = 2 };

/// Process-wide counters (all functions), for tests and debugging.
struct CacheCounters {
  std::atomic<uint64_t> hits{0};     ///< entries loaded and used
  std::atomic<uint64_t> misses{0};   ///< lookups that found no usable entry
  std::atomic<uint64_t> stores{0};   ///< entries written
  std::atomic<uint64_t> rejected{0}; ///< entries present but unreadable or corrupt
};
CacheCounters &cacheCounters();

namespace diskcache {

/// The cache directory for functions defined in `sourceFile` (created when missing):
/// $PTXJIT_CACHE_DIR when set and non-empty; else `<directory of sourceFile>/__pycache__`
/// when sourceFile is an existing file and that directory is (or can be made) writable; else
/// $XDG_CACHE_HOME/ptxjit, else ~/.cache/ptxjit. Empty when no directory can be used.
std::string directoryFor(const std::string &sourceFile);

/// The per-user directory: $XDG_CACHE_HOME/ptxjit, else ~/.cache/ptxjit; empty when neither
/// variable is set. Neither created nor checked.
std::string userDirectory();

/// A file-name-safe prefix naming a function ("<module stem>.<qualname>") and, after '-', a
/// short hash of `slot` (what identifies the specialization apart from its code: types and
/// options), so stale entries of the same specialization can be found and removed.
std::string entryPrefix(const std::string &sourceFile, const std::string &qualname,
                        std::string_view slot);

/// `<dir>/llvmcache-<prefix>.<first 32 hex digits of key>.ptxjitc` (llvm::pruneCache considers
/// only files named llvmcache-*, so that it never removes anything else of the directory:
/// __pycache__ holds Python's and Numba's files too).
std::string entryPath(const std::string &dir, const std::string &prefix, const Digest &key);

/// The whole file at `path` when it can be opened and holds at most `maxBytes` bytes; else
/// nullopt. Throws std::bad_alloc only.
std::optional<std::string> readFile(const std::string &path, uint64_t maxBytes);

/// Writes `bytes` to `path` through a temporary file in the same directory renamed into place,
/// so that a reader sees the old file or the whole new one, also with several writers at once.
/// Returns false, leaving no temporary file, when it cannot. Throws only what allocation and
/// std::random_device (which names the temporary file) throw.
bool writeFileAtomically(const std::string &path, std::string_view bytes);

/// The bytes of an entry file for `key` and `e` (header + payload).
std::string encode(const Digest &key, const CacheEntry &e);

/// The entry in `bytes` when they are a complete, uncorrupted entry for `key`; else nullopt.
std::optional<CacheEntry> decode(std::string_view bytes, const Digest &key);

/// Reads the entry at `path` for `key`. nullopt when the file is missing or unusable (counted
/// in cacheCounters().rejected when present but corrupt). Never throws.
std::optional<CacheEntry> load(const std::string &path, const Digest &key);

/// Writes the entry atomically (a temporary file in the same directory, then rename). When
/// `stalePrefix` is not empty, other entries in the directory whose names start with
/// `stalePrefix + "."` are removed afterwards (older versions of the same specialization).
/// Returns false (and leaves no temporary file) when the directory is not writable. Never
/// throws.
/// After storing, the directory is pruned with pruningPolicy() (prune(): at most once per
/// policy interval, directory and process).
bool store(const std::string &path, const Digest &key, const CacheEntry &e,
           const std::string &stalePrefix = {});

/// The pruning policy from $PTXJIT_CACHE_POLICY, in LLVM's cache policy syntax
/// (llvm::parseCachePruningPolicy: colon-separated prune_interval=<dur>, prune_after=<dur>,
/// cache_size=<N>%, cache_size_bytes=<N>[k|m|g], cache_size_files=<N>; durations in s, m or h).
/// Unset or empty: kDefaultCachePolicy. "off": nullopt (never pruned). Throws
/// std::invalid_argument naming the variable, the value and LLVM's reason when it does not parse.
std::optional<llvm::CachePruningPolicy> pruningPolicy();

/// ptxjit's default policy: LLVM's defaults (prune at most every 20 minutes; remove entries
/// unused for a week; keep the directory under 75% of the free disk space and a million files)
/// and at most 1 GiB per cache directory.
inline constexpr const char *kDefaultCachePolicy =
    "prune_interval=20m:prune_after=168h:cache_size=75%:cache_size_bytes=1g";

/// Prunes `dir` with `policy` (llvm::pruneCache) unless this process scanned it less than the
/// policy's interval before `now` (no interval: once per process). The interval is kept in
/// memory, not in LLVM's llvmcache.timestamp file, which is removed after the scan: a
/// __pycache__ directory shared with numba gains no file but ptxjit's entries (numba-cuda's
/// caching tests count its files). Returns true when the directory was scanned. Never throws.
bool prune(const std::string &dir, llvm::CachePruningPolicy policy,
           std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());

} // namespace diskcache

} // namespace ptxjit::compiler
