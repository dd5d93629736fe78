#include "compiler/DiskCache.h"

#include "codegen/Codegen.h"
#include "codegen/CudaPaths.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/SHA256.h>
#include <llvm/Support/xxhash.h>

#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>

namespace ptxjit::compiler {

namespace fs = std::filesystem;

// ---- Keys -----------------------------------------------------------------------------------

namespace {

void putU64(std::string &out, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out += static_cast<char>(v >> (8 * i));
}

void putU32(std::string &out, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out += static_cast<char>(v >> (8 * i));
}

uint64_t getU64(const char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= uint64_t(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

uint32_t getU32(const char *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= uint32_t(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

uint64_t bitsOf(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}

void addConst(CacheKey &k, const ir::ConstValue &c) {
  k.addInt("const.kind", static_cast<int>(c.kind));
  switch (c.kind) {
  case ir::ConstValue::Kind::None:
  case ir::ConstValue::Kind::Ellipsis:
    break;
  case ir::ConstValue::Kind::Bool:
    k.addInt("b", c.b);
    break;
  case ir::ConstValue::Kind::Int:
    k.addInt("i", c.i).addInt("u", c.isUnsigned);
    break;
  case ir::ConstValue::Kind::Float:
    k.addInt("f", static_cast<int64_t>(bitsOf(c.f)));
    break;
  case ir::ConstValue::Kind::Complex:
    k.addInt("re", static_cast<int64_t>(bitsOf(c.c.real())))
        .addInt("im", static_cast<int64_t>(bitsOf(c.c.imag())));
    break;
  case ir::ConstValue::Kind::String:
  case ir::ConstValue::Kind::Bytes:
  case ir::ConstValue::Kind::Unsupported:
    k.add("s", c.s);
    break;
  case ir::ConstValue::Kind::Tuple:
    k.addInt("n", static_cast<int64_t>(c.elems.size()));
    for (const ir::ConstValue &e : c.elems)
      addConst(k, e);
    break;
  }
}

void addStrings(CacheKey &k, std::string_view tag, const std::vector<std::string> &v) {
  k.addInt(tag, static_cast<int64_t>(v.size()));
  for (const std::string &s : v)
    k.add("str", s);
}

void addGlobal(CacheKey &k, const ir::GlobalValue &g,
               const std::function<void(CacheKey &, const ir::GlobalValue &)> &deviceFunction) {
  k.addInt("kind", static_cast<int>(g.kind));
  switch (g.kind) {
  case ir::GlobalValue::Kind::DeviceFunction:
  case ir::GlobalValue::Kind::Kernel: // called from device code, a kernel is a device function
    // Function ids are per process: the callee's own snapshot stands for it.
    k.add("path", g.path);
    deviceFunction(k, g);
    break;
  case ir::GlobalValue::Kind::ExternFunction: // called by name with its declared types
    k.add("path", g.path).addInt("cabi", g.externDecl->cAbi ? 1 : 0);
    k.add("result", g.externDecl->result->str());
    for (const ir::Type *p : g.externDecl->params)
      k.add("param", p->str());
    break;
  case ir::GlobalValue::Kind::ExceptionClass: // by name: handles are per process, and code
    k.add("path", g.path);                    // that records raise sites is never stored
    break;
  case ir::GlobalValue::Kind::EnumClass: // by name and members: ids are per process
  case ir::GlobalValue::Kind::EnumMember:
    k.add("path", g.path).add("class", g.enumClass->qualname);
    k.addInt("int", g.enumClass->isInt ? 1 : 0);
    k.addInt("members", static_cast<int64_t>(g.enumClass->members.size()));
    for (const auto &[member, value] : g.enumClass->members) {
      k.add("member", member);
      addConst(k, value);
    }
    addConst(k, g.constant);
    break;
  case ir::GlobalValue::Kind::Array: // a frozen NumPy array: its contents are code
    k.add("dtype", g.dtype).addInt("ndim", static_cast<int64_t>(g.shape.size()));
    for (int64_t d : g.shape)
      k.addInt("dim", d);
    k.add("bytes", g.bytes ? std::string_view(*g.bytes) : std::string_view());
    break;
  case ir::GlobalValue::Kind::Tuple: // each element as a global of its own
    k.addInt("elems", static_cast<int64_t>(g.elems.size()));
    for (const ir::GlobalValue &e : g.elems)
      addGlobal(k, e, deviceFunction);
    break;
  default: {
    // Every field (new GlobalValue fields must be added here: they change the code).
    addConst(k, g.constant);
    k.add("dtype", g.dtype).add("path", g.path);
    std::string shape;
    for (int64_t d : g.shape)
      putU64(shape, static_cast<uint64_t>(d));
    k.add("shape", shape).add("bytes", g.bytes ? std::string_view(*g.bytes) : "<none>");
    std::string strides;
    for (int64_t st : g.strides)
      putU64(strides, static_cast<uint64_t>(st));
    k.add("strides", strides).addInt("address", static_cast<int64_t>(g.address));
    break;
  }
  }
}

void addGlobals(CacheKey &k, std::string_view tag, const std::map<std::string, ir::GlobalValue> &m,
                const std::function<void(CacheKey &, const ir::GlobalValue &)> &deviceFunction) {
  k.addInt(tag, static_cast<int64_t>(m.size()));
  for (const auto &[name, g] : m) {
    k.add("name", name);
    addGlobal(k, g, deviceFunction);
  }
}

} // namespace

Digest sha256(std::string_view data) {
  return llvm::SHA256::hash(
      llvm::ArrayRef(reinterpret_cast<const uint8_t *>(data.data()), data.size()));
}

std::string toHex(const Digest &d, size_t bytes) {
  static const char *digits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < bytes && i < d.size(); ++i) {
    out += digits[d[i] >> 4];
    out += digits[d[i] & 15];
  }
  return out;
}

CacheKey &CacheKey::add(std::string_view tag, std::string_view bytes) {
  putU32(encoding_, static_cast<uint32_t>(tag.size()));
  encoding_ += tag;
  putU64(encoding_, bytes.size());
  encoding_ += bytes;
  return *this;
}

CacheKey &CacheKey::addInt(std::string_view tag, int64_t v) {
  std::string b; // 8 bytes: within the string's own storage, no allocation
  putU64(b, static_cast<uint64_t>(v));
  return add(tag, b);
}

Digest CacheKey::digest() const { return sha256(encoding_); }

void addSnapshot(CacheKey &k, const frontend::CodeSnapshot &s,
                 const std::function<void(CacheKey &, const ir::GlobalValue &)> &deviceFunction) {
  k.add("snapshot", frontend::pyVersionName(s.version));
  k.add("name", s.name).add("qualname", s.qualname).add("filename", s.filename);
  k.addInt("firstLine", s.firstLine).addInt("flags", s.flags).addInt("argCount", s.argCount);
  k.addInt("posOnly", s.posOnlyArgCount).addInt("kwOnly", s.kwOnlyArgCount);
  k.add("code", std::string_view(reinterpret_cast<const char *>(s.code.data()), s.code.size()));
  k.addInt("consts", static_cast<int64_t>(s.consts.size()));
  for (const ir::ConstValue &c : s.consts)
    addConst(k, c);
  addStrings(k, "names", s.names);
  addStrings(k, "varnames", s.varnames);
  addStrings(k, "cellvars", s.cellvars);
  addStrings(k, "freevars", s.freevars);
  addStrings(k, "localsPlus", s.localsPlusNames);
  k.add("exceptionTable", std::string_view(reinterpret_cast<const char *>(s.exceptionTable.data()),
                                           s.exceptionTable.size()));
  std::string pos;
  for (const frontend::Position &p : s.positions)
    for (int v : {p.line, p.endLine, p.col, p.endCol})
      putU32(pos, static_cast<uint32_t>(v));
  k.add("positions", pos);
  addGlobals(k, "globals", s.globals, deviceFunction);
  addGlobals(k, "closure", s.closure, deviceFunction);
  k.addInt("defaults", static_cast<int64_t>(s.defaults.size()));
  for (const ir::ConstValue &c : s.defaults)
    addConst(k, c);
}

void addCompileOptions(CacheKey &k, const codegen::CompileOptions &o) {
  k.addInt("backend", static_cast<int>(o.backend)).addInt("ccMajor", o.ccMajor);
  k.addInt("ccMinor", o.ccMinor).addInt("ptxVersion", o.ptxVersion);
  k.addInt("archSpecific", o.archSpecific ? 1 : 0);
  k.addInt("fastmath", o.fastmath).addInt("optLevel", o.optLevel);
  k.addInt("debugInfo", static_cast<int>(o.debugInfo));
  k.addInt("maxThreadsPerBlock", o.maxThreadsPerBlock).addInt("minBlocksPerSM", o.minBlocksPerSM);
  k.addInt("maxClusterRank", o.maxClusterRank).addInt("maxRegisters", o.maxRegisters);
  k.addInt("carveout", o.carveout).addInt("boundscheck", o.boundscheck);
  k.addInt("exceptions", o.exceptions);
}

void addArgTypes(CacheKey &k, const std::vector<const ir::Type *> &argTypes) {
  k.addInt("args", static_cast<int64_t>(argTypes.size()));
  for (const ir::Type *t : argTypes)
    k.add("type", t ? t->str() : std::string("<null>"));
}

namespace {

/// What identifies the file at `path` without reading it: its path, size, modification time,
/// device and inode, or "missing:<path>". One stat() per call: hashing libdevice's 460 KB, even
/// mapped, was a fifth of the first cache=True call of every process (its pages faulted in,
/// hashed, unmapped), and a file replaced by another gets another inode, size or time.
std::string fileStamp(const std::string &path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0)
    return "missing:" + path;
  return path + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec) + ":" + std::to_string(st.st_dev) + ":" +
         std::to_string(st.st_ino);
}

/// The path of the loaded object (shared library or executable) whose segments hold `addr`;
/// empty when none does. dl_iterate_phdr walks the loaded objects' program headers only:
/// dladdr would also search the object's whole dynamic symbol table for the nearest symbol,
/// thousands of entries for the extension module (a twentieth of a cache=True call that hits).
std::string objectPathOf(const void *addr) {
  struct Search {
    uintptr_t addr;
    std::string path;
  } search{reinterpret_cast<uintptr_t>(addr), {}};
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) {
        auto *s = static_cast<Search *>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr) &ph = info->dlpi_phdr[i];
          uintptr_t start = info->dlpi_addr + ph.p_vaddr;
          if (ph.p_type == PT_LOAD && s->addr >= start && s->addr < start + ph.p_memsz) {
            // The main program's name is empty: /proc/self/exe names it.
            s->path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "/proc/self/exe";
            return 1;
          }
        }
        return 0;
      },
      &search);
  return search.path;
}

/// The binary holding this function, as fileStamp identifies it: changes with every build of the
/// compiler.
std::string buildFingerprint() {
  static const std::string fp = [] {
    std::string path = objectPathOf(reinterpret_cast<const void *>(&buildFingerprint));
    return path.empty() ? std::string("unknown") : fileStamp(path);
  }();
  return fp;
}

} // namespace

void addToolchain(CacheKey &k, codegen::Backend backend) {
  k.add("ptxjit", PTXJIT_VERSION_STRING).add("build", buildFingerprint());
  k.add("llvm", codegen::llvmVersion());
  // libdevice is not in the key: only code that links it depends on it, and that code's entry
  // records the file it was linked with (libdeviceStamp), which a load compares. So a hit of
  // code without math functions never looks for libdevice (a tenth of such a call).
  if (backend == codegen::Backend::Host)
    k.add("host", codegen::hostTargetId());
}

std::string libdeviceStamp() { return fileStamp(codegen::libdevicePath()); }

CacheCounters &cacheCounters() {
  static CacheCounters *c = new CacheCounters(); // never destroyed: used until process exit
  return *c;
}

// ---- Files ----------------------------------------------------------------------------------

namespace diskcache {
namespace {

constexpr char kMagic[8] = {'P', 'T', 'X', 'J', 'I', 'T', 'C', '\0'};
// 2: the checksum became an XXH3-128 (SHA-256 before); CUDA entries gained a fifth section.
constexpr uint32_t kFormatVersion = 2;
/// magic, version, kind, key, payload length, checksum.
constexpr size_t kHeaderStart = 8 + 4 + 4 + 32 + 8;
constexpr size_t kChecksumSize = 16;
constexpr size_t kHeaderSize = kHeaderStart + kChecksumSize;
/// Entries larger than this are not read (a corrupt length would otherwise allocate wildly).
constexpr uint64_t kMaxEntry = uint64_t(1) << 30;

bool usableDirectory(const fs::path &dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir, ec))
      return false;
  }
  return ::access(dir.c_str(), W_OK | X_OK) == 0;
}

std::string safeName(std::string_view s) {
  std::string out;
  for (char c : s)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') ? c : '_';
  if (out.size() > 80)
    out.resize(80);
  return out;
}

/// The checksum covers the header's first fields and the payload: the XXH3-128 of the header's
/// fields followed by the XXH3-128 of the payload. It finds corruption (a torn or damaged
/// file), which needs no cryptographic hash: the key that names the entry is the SHA-256, and
/// the header holds it whole. SHA-256 of the payload (the PTX and the LLVM IR text, 10 KB for a
/// small loop) was a twentieth of a cache=True call that hits.
std::string checksum(std::string_view headerStart, std::string_view payload) {
  auto bytes = [](std::string_view s) {
    return llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(s.data()), s.size());
  };
  llvm::XXH128_hash_t body = llvm::xxh3_128bits(bytes(payload));
  std::string outer(headerStart);
  putU64(outer, body.low64);
  putU64(outer, body.high64);
  llvm::XXH128_hash_t all = llvm::xxh3_128bits(bytes(outer));
  std::string out;
  putU64(out, all.low64);
  putU64(out, all.high64);
  return out;
}

} // namespace

std::string userDirectory() {
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return (fs::path(xdg) / "ptxjit").string();
  if (const char *home = std::getenv("HOME"); home && *home)
    return (fs::path(home) / ".cache" / "ptxjit").string();
  return {};
}

std::string directoryFor(const std::string &sourceFile) {
  if (const char *env = std::getenv("PTXJIT_CACHE_DIR"); env && *env)
    return usableDirectory(env) ? std::string(env) : std::string();
  std::error_code ec;
  if (!sourceFile.empty() && sourceFile[0] != '<' && fs::is_regular_file(sourceFile, ec)) {
    fs::path dir = fs::absolute(fs::path(sourceFile), ec).parent_path() / "__pycache__";
    if (!ec && usableDirectory(dir))
      return dir.string();
  }
  fs::path user = userDirectory();
  if (!user.empty() && usableDirectory(user))
    return user.string();
  return {};
}

std::string entryPrefix(const std::string &sourceFile, const std::string &qualname,
                        std::string_view slot) {
  std::string stem = fs::path(sourceFile).stem().string();
  return safeName(stem) + "." + safeName(qualname) + "-" + toHex(sha256(slot), 6);
}

std::string entryPath(const std::string &dir, const std::string &prefix, const Digest &key) {
  return (fs::path(dir) / ("llvmcache-" + prefix + "." + toHex(key, 16) + ".ptxjitc")).string();
}

std::string encode(const Digest &key, const CacheEntry &e) {
  std::string payload;
  putU32(payload, static_cast<uint32_t>(e.sections.size()));
  for (const std::string &s : e.sections) {
    putU64(payload, s.size());
    payload += s;
  }
  std::string out(kMagic, sizeof kMagic);
  putU32(out, kFormatVersion);
  putU32(out, e.kind);
  out.append(reinterpret_cast<const char *>(key.data()), key.size());
  putU64(out, payload.size());
  out += checksum(out, payload);
  out += payload;
  return out;
}

std::optional<CacheEntry> decode(std::string_view bytes, const Digest &key) {
  if (bytes.size() < kHeaderSize || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    return std::nullopt;
  const char *p = bytes.data();
  if (getU32(p + 8) != kFormatVersion)
    return std::nullopt;
  if (std::memcmp(p + 16, key.data(), key.size()) != 0)
    return std::nullopt;
  uint64_t payloadSize = getU64(p + 48);
  if (payloadSize != bytes.size() - kHeaderSize)
    return std::nullopt;
  std::string_view payload = bytes.substr(kHeaderSize);
  if (bytes.substr(kHeaderStart, kChecksumSize) != checksum(bytes.substr(0, kHeaderStart), payload))
    return std::nullopt;
  CacheEntry e;
  e.kind = getU32(p + 12);
  if (payload.size() < 4)
    return std::nullopt;
  uint32_t count = getU32(payload.data());
  size_t at = 4;
  for (uint32_t i = 0; i < count; ++i) {
    if (payload.size() - at < 8)
      return std::nullopt;
    uint64_t len = getU64(payload.data() + at);
    at += 8;
    if (len > payload.size() - at)
      return std::nullopt;
    e.sections.emplace_back(payload.substr(at, len));
    at += len;
  }
  if (at != payload.size())
    return std::nullopt;
  return e;
}

std::optional<std::string> readFile(const std::string &path, uint64_t maxBytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return std::nullopt;
  std::optional<std::string> bytes;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size >= 0 && static_cast<uint64_t>(st.st_size) <= maxBytes) {
    bytes.emplace(static_cast<size_t>(st.st_size), '\0');
    size_t got = 0;
    while (got < bytes->size()) {
      ssize_t n = ::read(fd, bytes->data() + got, bytes->size() - got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      got += static_cast<size_t>(n);
    }
    bytes->resize(got);
  }
  ::close(fd);
  return bytes;
}

bool writeFileAtomically(const std::string &path, std::string_view bytes) {
  static std::atomic<uint64_t> counter{0};
  std::random_device rd;
  std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++) +
                    "." + std::to_string(rd());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return false;
  size_t put = 0;
  while (put < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + put, bytes.size() - put);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    put += static_cast<size_t>(n);
  }
  bool ok = put == bytes.size();
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

std::optional<CacheEntry> load(const std::string &path, const Digest &key) {
  std::optional<std::string> bytes;
  try {
    bytes = readFile(path, kMaxEntry);
  } catch (const std::bad_alloc &) {
  }
  if (!bytes && ::access(path.c_str(), F_OK) != 0)
    return std::nullopt; // no entry (rather than an unusable one)
  std::optional<CacheEntry> e;
  if (bytes)
    e = decode(*bytes, key);
  if (!e)
    ++cacheCounters().rejected;
  return e;
}

bool store(const std::string &path, const Digest &key, const CacheEntry &e,
           const std::string &stalePrefix) {
  try {
    if (!writeFileAtomically(path, encode(key, e)))
      return false;
    ++cacheCounters().stores;
    if (!stalePrefix.empty()) {
      fs::path target(path);
      std::string start = "llvmcache-" + stalePrefix + ".";
      std::error_code ec;
      for (const auto &de : fs::directory_iterator(target.parent_path(), ec)) {
        std::string name = de.path().filename().string();
        if (name != target.filename().string() && name.rfind(start, 0) == 0 && name.size() > 8 &&
            name.compare(name.size() - 8, 8, ".ptxjitc") == 0)
          fs::remove(de.path(), ec);
      }
    }
    // Bad policies were reported by the compiler before it looked up the entry; here, where
    // nothing may throw, one is only skipped.
    std::optional<llvm::CachePruningPolicy> policy;
    try {
      policy = pruningPolicy();
    } catch (const std::invalid_argument &) {
    }
    if (policy)
      prune(fs::path(path).parent_path().string(), *policy);
    return true;
  } catch (...) {
    return false;
  }
}

std::optional<llvm::CachePruningPolicy> pruningPolicy() {
  const char *env = std::getenv("PTXJIT_CACHE_POLICY");
  std::string text = env && *env ? env : kDefaultCachePolicy;
  if (text == "off")
    return std::nullopt;
  llvm::Expected<llvm::CachePruningPolicy> p = llvm::parseCachePruningPolicy(text);
  if (!p)
    throw std::invalid_argument(
        "PTXJIT_CACHE_POLICY='" + text + "' is not a cache pruning policy (" +
        llvm::toString(p.takeError()) +
        "); expected colon-separated prune_interval=<duration>, prune_after=<duration>, "
        "cache_size=<percent>%, cache_size_bytes=<size>[k|m|g], cache_size_files=<count>, "
        "e.g. '" +
        kDefaultCachePolicy + "', or 'off'");
  return *p;
}

bool prune(const std::string &dir, llvm::CachePruningPolicy policy,
           std::chrono::steady_clock::time_point now) {
  try {
    static std::mutex mutex;
    static std::map<std::string, std::chrono::steady_clock::time_point> lastScan;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = lastScan.find(dir);
      if (it != lastScan.end() && (!policy.Interval || now - it->second < *policy.Interval))
        return false;
      lastScan[dir] = now;
    }
    fs::path stamp = fs::path(dir) / "llvmcache.timestamp";
    std::error_code ec;
    bool hadStamp = fs::exists(stamp, ec);
    policy.Interval = std::chrono::seconds(0); // scan now: the interval was checked above
    bool scanned = llvm::pruneCache(dir, policy);
    if (!hadStamp)
      fs::remove(stamp, ec); // LLVM's bookkeeping, written by the scan: not left behind
    return scanned;
  } catch (...) {
    return false;
  }
}

} // namespace diskcache

} // namespace ptxjit::compiler
