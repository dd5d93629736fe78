// The disk cache (cache=True): SHA-256 (LLVM's), key stability and sensitivity to every input, the
// entry format (corrupt, truncated and foreign entries rejected), atomic stores, the cache
// directory, and the compiler's use of it (a second registration of the same function loads
// its code instead of compiling, on both backends).
#include "compiler/DiskCache.h"

#include "compiler/Compiler.h"
#include "runtime/HostGrid.h"
#include "tests/cpp/common/NeedsLibdevice.h"
#include "tests/cpp/common/Ptxas.h"
#include "tests/cpp/common/TempDir.h"
#include "tests/cpp/frontend/FixtureLoader.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

using namespace ptxjit;
using namespace ptxjit::compiler;
namespace t = ptxjit::ir::types;
namespace fs = std::filesystem;

namespace {

struct TempDir : ptxjit::testing::TempDir {
  TempDir() : ptxjit::testing::TempDir("ptxjit-cache-test") {}
};

/// Sets an environment variable for the scope of the test.
struct EnvVar {
  std::string name;
  std::optional<std::string> old;
  EnvVar(std::string n, const std::string &value) : name(std::move(n)) {
    if (const char *v = std::getenv(name.c_str()))
      old = v;
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~EnvVar() {
    if (old)
      ::setenv(name.c_str(), old->c_str(), 1);
    else
      ::unsetenv(name.c_str());
  }
};

std::string readFile(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeFile(const fs::path &p, const std::string &bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

frontend::CodeSnapshot fixture(const std::string &name, bool compilerFixture) {
  frontend::PyVersion v = frontend::PyVersion::Py312;
  std::string path = compilerFixture
                         ? std::string(PTXJIT_SOURCE_DIR) + "/tests/fixtures/compiler/" +
                               fixtures::versionDir(v) + "/" + name + ".json"
                         : fixtures::fixturePath(v, name);
  return fixtures::loadFixtureFile(path).snapshot;
}

Digest snapshotKey(const frontend::CodeSnapshot &s) {
  CacheKey k;
  addSnapshot(k, s, [](CacheKey &kk, const ir::GlobalValue &g) { kk.add("callee", g.path); });
  return k.digest();
}

/// A function's snapshot as the bindings take it: a fresh copy of `*base` at every request.
struct CopySnapshot {
  std::shared_ptr<frontend::CodeSnapshot> base;
  explicit CopySnapshot(frontend::CodeSnapshot s)
      : base(std::make_shared<frontend::CodeSnapshot>(std::move(s))) {}
  std::shared_ptr<const frontend::CodeSnapshot> take() const {
    return std::make_shared<const frontend::CodeSnapshot>(*base);
  }
};

codegen::CompileOptions hostOpts() {
  codegen::CompileOptions o;
  o.backend = codegen::Backend::Host;
  return o;
}

codegen::CompileOptions cudaOpts() {
  codegen::CompileOptions o;
  o.backend = codegen::Backend::CUDA;
  o.ptxVersion = codegen::choosePtxVersion(9, 0, 0);
  return o;
}

FunctionOptions cached() {
  FunctionOptions fo;
  fo.cache = true;
  return fo;
}

} // namespace

// ---- SHA-256 --------------------------------------------------------------------------------

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(toHex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(toHex(sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(toHex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  std::string million(1000000, 'a');
  EXPECT_EQ(toHex(sha256(million)),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(toHex(sha256("abc"), 4), "ba7816bf");
}

TEST(Sha256, CacheKeyIsTheDigestOfItsEncoding) {
  // A key fed field by field equals the one-call digest of the same bytes, and digest() leaves
  // the key growable (it hashes a copy of the state).
  CacheKey k;
  k.add("t", "abc");
  Digest first = k.digest();
  EXPECT_EQ(k.digest(), first);
  std::string enc = std::string("\x01\0\0\0t", 5) + std::string("\x03\0\0\0\0\0\0\0", 8) + "abc";
  EXPECT_EQ(first, sha256(enc));
  k.add("u", "");
  EXPECT_NE(k.digest(), first);
}

// ---- Keys -----------------------------------------------------------------------------------

TEST(CacheKey, FieldsAreUnambiguous) {
  EXPECT_NE(CacheKey().add("a", "bc").digest(), CacheKey().add("ab", "c").digest());
  EXPECT_NE(CacheKey().add("x", "ab").add("x", "c").digest(),
            CacheKey().add("x", "a").add("x", "bc").digest());
  EXPECT_NE(CacheKey().addInt("n", 1).digest(), CacheKey().addInt("n", 256).digest());
  EXPECT_EQ(CacheKey().add("a", "b").addInt("n", 3).digest(),
            CacheKey().add("a", "b").addInt("n", 3).digest());
}

TEST(CacheKey, SnapshotKeyIsStableAndSensitiveToEveryField) {
  const frontend::CodeSnapshot base = fixture("saxpy", false);
  const Digest k0 = snapshotKey(base);
  EXPECT_EQ(snapshotKey(base), k0);
  EXPECT_EQ(snapshotKey(fixture("saxpy", false)), k0); // loaded again: same key

  std::vector<std::pair<std::string, std::function<void(frontend::CodeSnapshot &)>>> edits = {
      {"bytecode", [](auto &s) { s.code.back() ^= 1; }},
      {"constant", [](auto &s) { s.consts.push_back(ir::ConstValue::floating(2.0)); }},
      {"constant value", [](auto &s) { s.consts.push_back(ir::ConstValue::integer(1)); }},
      {"name", [](auto &s) { s.names.push_back("extra"); }},
      {"varname", [](auto &s) { s.varnames.back() += "_"; }},
      {"qualname", [](auto &s) { s.qualname += "_"; }},
      {"filename", [](auto &s) { s.filename += "_"; }},
      {"first line", [](auto &s) { s.firstLine += 1; }},
      {"positions", [](auto &s) { s.positions.back().line += 1; }},
      {"flags", [](auto &s) { s.flags ^= 0x10; }},
      {"global constant",
       [](auto &s) { s.globals["N"] = ir::GlobalValue::makeConstant(ir::ConstValue::integer(3)); }},
      {"closure value",
       [](auto &s) { s.closure["c"] = ir::GlobalValue::makeConstant(ir::ConstValue::integer(3)); }},
      {"default", [](auto &s) { s.defaults.push_back(ir::ConstValue::floating(1.0)); }},
      {"global symbol", [](auto &s) { s.globals["m"] = ir::GlobalValue::symbol("math"); }},
  };
  std::set<Digest> seen{k0};
  for (auto &[what, edit] : edits) {
    frontend::CodeSnapshot s = base;
    edit(s);
    Digest k = snapshotKey(s);
    EXPECT_NE(k, k0) << what;
    seen.insert(k);
  }
  EXPECT_EQ(seen.size(), edits.size() + 1);

  // A global's value, its NumPy dtype and the integer's signedness all count.
  frontend::CodeSnapshot a = base, b = base, c = base, d = base;
  a.globals["N"] = ir::GlobalValue::makeConstant(ir::ConstValue::integer(3));
  b.globals["N"] = ir::GlobalValue::makeConstant(ir::ConstValue::integer(4));
  c.globals["N"] = ir::GlobalValue::makeConstant(ir::ConstValue::integer(3), "int32");
  d.globals["N"] = ir::GlobalValue::makeConstant(ir::ConstValue::floating(3.0));
  std::set<Digest> g{snapshotKey(a), snapshotKey(b), snapshotKey(c), snapshotKey(d)};
  EXPECT_EQ(g.size(), 4u);
  // Frozen global arrays: their contents, shape and dtype count.
  frontend::CodeSnapshot r1 = base, r2 = base, r3 = base, r4 = base;
  r1.globals["T"] = ir::GlobalValue::array("float32", {2}, std::string(8, '\1'));
  r2.globals["T"] = ir::GlobalValue::array("float32", {2}, std::string(7, '\1') + '\2');
  r3.globals["T"] = ir::GlobalValue::array("float32", {1, 2}, std::string(8, '\1'));
  r4.globals["T"] = ir::GlobalValue::array("int32", {2}, std::string(8, '\1'));
  std::set<Digest> arrays{snapshotKey(r1), snapshotKey(r2), snapshotKey(r3), snapshotKey(r4)};
  EXPECT_EQ(arrays.size(), 4u);
  // Device arrays by reference: strides and address count too (the compiler never stores such
  // code, but the key still describes it).
  frontend::CodeSnapshot v1 = base, v2 = base, v3 = base;
  v1.globals["D"] = ir::GlobalValue::deviceArray("float32", {4}, {4}, 4096);
  v2.globals["D"] = ir::GlobalValue::deviceArray("float32", {4}, {-4}, 4108);
  v3.globals["D"] = ir::GlobalValue::deviceArray("float32", {4}, {4}, 8192);
  std::set<Digest> devices{snapshotKey(v1), snapshotKey(v2), snapshotKey(v3)};
  EXPECT_EQ(devices.size(), 3u);
  // A device function is keyed by what the callback appends (its snapshot in the compiler),
  // not by its process-specific id.
  frontend::CodeSnapshot e1 = base, e2 = base;
  e1.globals["f"] = ir::GlobalValue::deviceFunction(1, "f");
  e2.globals["f"] = ir::GlobalValue::deviceFunction(2, "f");
  EXPECT_EQ(snapshotKey(e1), snapshotKey(e2));
}

TEST(CacheKey, SensitiveToTypesOptionsAndToolchain) {
  auto key = [](const std::vector<const ir::Type *> &args, const codegen::CompileOptions &o) {
    CacheKey k;
    addArgTypes(k, args);
    addCompileOptions(k, o);
    addToolchain(k, o.backend);
    return k.digest();
  };
  auto c1 = t::array(t::float32(), 1, ir::Layout::C);
  std::vector<const ir::Type *> args{t::float32(), c1};
  codegen::CompileOptions base = cudaOpts();
  Digest k0 = key(args, base);
  EXPECT_EQ(key(args, base), k0);
  std::set<Digest> seen{k0};
  auto differs = [&](const std::vector<const ir::Type *> &a, const codegen::CompileOptions &o,
                     const char *what) {
    Digest k = key(a, o);
    EXPECT_NE(k, k0) << what;
    seen.insert(k);
  };
  differs({t::float64(), c1}, base, "scalar type");
  differs({t::float32(), t::array(t::float32(), 1, ir::Layout::A)}, base, "layout");
  differs({t::float32(), t::array(t::float32(), 1, ir::Layout::C, true)}, base, "readonly");
  differs({t::float32(), t::array(t::float32(), 2, ir::Layout::C)}, base, "ndim");
  differs({t::float32()}, base, "argument count");
  codegen::CompileOptions o = base;
  o.ccMajor = 8;
  differs(args, o, "cc major");
  o = base;
  o.ccMinor = 9;
  differs(args, o, "cc minor");
  o = base;
  o.ptxVersion = 78;
  differs(args, o, "ptx version");
  o = base;
  o.fastmath = true;
  differs(args, o, "fastmath");
  o = base;
  o.optLevel = 0;
  differs(args, o, "opt level");
  differs(args, hostOpts(), "backend");
  EXPECT_EQ(seen.size(), 12u);
}

// libdevice is identified by its file (one stat, not a read): the same bytes at two paths, a file
// rewritten in place (another size, then the same size at a later time) and a file replaced by a
// rename (another inode) give other stamps; the same file the same stamp. The key does not hold
// it: entries whose code links libdevice record the stamp (CompilerDiskCache tests below).
TEST(CacheKey, LibdeviceIsIdentifiedByItsFileNotReadAgain) {
  TempDir dir;
  std::string content(460 * 1024 + 7, 'x');
  fs::path a = dir.path / "a.bc", b = dir.path / "b.bc";
  writeFile(a, content);
  writeFile(b, content);
  auto stampOf = [](const fs::path &p) {
    EnvVar env("PTXJIT_LIBDEVICE", p.string());
    return libdeviceStamp();
  };
  std::string first = stampOf(a);
  EXPECT_EQ(first, stampOf(a));
  EXPECT_NE(first, stampOf(b));
  EXPECT_NE(first, stampOf(dir.path / "missing.bc"));
  writeFile(a, content + "y");
  std::string grown = stampOf(a);
  EXPECT_NE(first, grown);
  fs::last_write_time(a, fs::last_write_time(a) + std::chrono::seconds(2));
  EXPECT_NE(grown, stampOf(a));
  std::string touched = stampOf(a);
  fs::path c = dir.path / "c.bc";
  writeFile(c, content + "y");
  fs::last_write_time(c, fs::last_write_time(a));
  fs::rename(c, a);
  EXPECT_NE(touched, stampOf(a)) << "a new file (another inode) with the same size and time";
  // The toolchain's part of the key is the same whichever libdevice there is.
  auto toolchainKey = [](const fs::path &p) {
    EnvVar env("PTXJIT_LIBDEVICE", p.string());
    CacheKey k;
    addToolchain(k, codegen::Backend::CUDA);
    return k.digest();
  };
  EXPECT_EQ(toolchainKey(a), toolchainKey(b));
  EXPECT_EQ(toolchainKey(a), toolchainKey(dir.path / "missing.bc"));
}

// ---- Entries --------------------------------------------------------------------------------

TEST(DiskCacheEntry, RoundTripAndCorruptionIsRejected) {
  Digest key = sha256("key");
  CacheEntry e{static_cast<uint32_t>(EntryKind::Ptx),
               {"sym", std::string("code\0with nul", 13), ""}};
  std::string bytes = diskcache::encode(key, e);
  auto back = diskcache::decode(bytes, key);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, e);

  EXPECT_FALSE(diskcache::decode(bytes, sha256("other key")).has_value());
  EXPECT_FALSE(diskcache::decode("", key).has_value());
  EXPECT_FALSE(diskcache::decode(bytes.substr(0, bytes.size() - 1), key).has_value());
  EXPECT_FALSE(diskcache::decode(bytes + "x", key).has_value());
  // Every single-byte change anywhere (header or payload) is detected.
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x20);
    EXPECT_FALSE(diskcache::decode(bad, key).has_value()) << "byte " << i;
  }
}

TEST(DiskCacheEntry, StoreIsAtomicAndLoadRejectsBadFiles) {
  TempDir dir;
  Digest key = sha256("k");
  std::string path = diskcache::entryPath(dir.path.string(), "mod.f-abc", key);
  CacheEntry e{2, {"a", std::string(100000, 'x'), "c"}};
  EXPECT_FALSE(diskcache::load(path, key).has_value()); // missing: not a rejection
  uint64_t rejected = cacheCounters().rejected.load();
  ASSERT_TRUE(diskcache::store(path, key, e));
  EXPECT_EQ(dir.files().size(), 1u); // no temporary file left behind
  auto got = diskcache::load(path, key);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, e);
  EXPECT_EQ(cacheCounters().rejected.load(), rejected);

  // Truncated: rejected.
  std::string full = readFile(path);
  writeFile(path, full.substr(0, full.size() / 2));
  EXPECT_FALSE(diskcache::load(path, key).has_value());
  EXPECT_EQ(cacheCounters().rejected.load(), rejected + 1);
  // Garbage: rejected; a store replaces it.
  writeFile(path, "not an entry");
  EXPECT_FALSE(diskcache::load(path, key).has_value());
  ASSERT_TRUE(diskcache::store(path, key, e));
  EXPECT_TRUE(diskcache::load(path, key).has_value());

  // Concurrent writers of the same entry: the file is always one complete entry.
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int w = 0; w < 4; ++w)
    threads.emplace_back([&, w] {
      for (int i = 0; i < 20; ++i) {
        CacheEntry mine{2, {"a", std::string(50000 + w, static_cast<char>('a' + w)), "c"}};
        diskcache::store(path, key, mine);
        auto seen = diskcache::load(path, key);
        if (!seen || seen->sections.size() != 3 || seen->sections[1].size() < 50000)
          ++bad;
      }
    });
  for (auto &th : threads)
    th.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(dir.files().size(), 1u);
}

TEST(DiskCacheEntry, StaleVersionsOfASpecializationAreRemoved) {
  TempDir dir;
  std::string d = dir.path.string();
  Digest k1 = sha256("v1"), k2 = sha256("v2");
  CacheEntry e{1, {"s", "p", "i"}};
  ASSERT_TRUE(diskcache::store(diskcache::entryPath(d, "m.f-aaaa", k1), k1, e, "m.f-aaaa"));
  ASSERT_TRUE(diskcache::store(diskcache::entryPath(d, "m.f-bbbb", k1), k1, e, "m.f-bbbb"));
  ASSERT_TRUE(diskcache::store(diskcache::entryPath(d, "m.f-aaaa", k2), k2, e, "m.f-aaaa"));
  std::vector<std::string> files = dir.files();
  std::sort(files.begin(), files.end());
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0], "llvmcache-m.f-aaaa." + toHex(k2, 16) + ".ptxjitc");
  EXPECT_EQ(files[1], "llvmcache-m.f-bbbb." + toHex(k1, 16) + ".ptxjitc");
}

// ---- Pruning (llvm::pruneCache with PTXJIT_CACHE_POLICY) --------------------------------------

namespace {

/// Sets `p`'s last access time to `ago` before now (its modification time too).
void makeOld(const fs::path &p, std::chrono::seconds ago) {
  struct timespec ts[2];
  ts[0].tv_sec = ts[1].tv_sec = ::time(nullptr) - ago.count();
  ts[0].tv_nsec = ts[1].tv_nsec = 0;
  ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), ts, 0), 0) << p;
}

/// Stores entry `name` (payload of `bytes` bytes) in `d` and returns its path.
fs::path storeEntry(const std::string &d, const std::string &name, size_t bytes = 1000) {
  Digest k = sha256(name);
  std::string path = diskcache::entryPath(d, name, k);
  EXPECT_TRUE(diskcache::store(path, k, CacheEntry{1, {std::string(bytes, 'x')}}));
  return path;
}

} // namespace

TEST(DiskCachePruning, PolicyFromTheEnvironment) {
  {
    EnvVar env("PTXJIT_CACHE_POLICY", "");
    auto p = diskcache::pruningPolicy();
    ASSERT_TRUE(p.has_value());
    EXPECT_EQ(p->MaxSizeBytes, uint64_t(1) << 30);
    EXPECT_EQ(p->Expiration, std::chrono::hours(168));
    EXPECT_EQ(p->MaxSizePercentageOfAvailableSpace, 75u);
    EXPECT_EQ(p->Interval, std::chrono::seconds(1200));
  }
  {
    EnvVar env("PTXJIT_CACHE_POLICY", "prune_after=2h:cache_size_bytes=10m:cache_size_files=7");
    auto p = diskcache::pruningPolicy();
    ASSERT_TRUE(p.has_value());
    EXPECT_EQ(p->Expiration, std::chrono::hours(2));
    EXPECT_EQ(p->MaxSizeBytes, uint64_t(10) << 20);
    EXPECT_EQ(p->MaxSizeFiles, 7u);
  }
  {
    EnvVar env("PTXJIT_CACHE_POLICY", "off");
    EXPECT_FALSE(diskcache::pruningPolicy().has_value());
  }
  EnvVar env("PTXJIT_CACHE_POLICY", "cache_size_bytes=lots");
  try {
    diskcache::pruningPolicy();
    ADD_FAILURE() << "a bad policy was accepted";
  } catch (const std::invalid_argument &e) {
    std::string m = e.what();
    EXPECT_NE(m.find("PTXJIT_CACHE_POLICY='cache_size_bytes=lots'"), std::string::npos) << m;
    EXPECT_NE(m.find("prune_after="), std::string::npos) << m;
  }
  // store() never throws: with a bad policy it stores and does not prune.
  TempDir dir;
  storeEntry(dir.path.string(), "m.f-1");
  EXPECT_EQ(dir.files().size(), 1u);
}

TEST(DiskCachePruning, UnusedEntriesExpireOthersStay) {
  TempDir dir;
  std::string d = dir.path.string();
  EnvVar env("PTXJIT_CACHE_POLICY", "prune_interval=0s:prune_after=1h");
  fs::path old = storeEntry(d, "m.old-1"), recent = storeEntry(d, "m.recent-1");
  // Not ptxjit's (Python's bytecode beside it in __pycache__): never touched.
  fs::path pyc = dir.path / "m.cpython-311.pyc";
  writeFile(pyc, "bytecode");
  makeOld(old, std::chrono::hours(2));
  makeOld(pyc, std::chrono::hours(2));
  makeOld(recent, std::chrono::minutes(30));
  fs::path added = storeEntry(d, "m.new-1"); // the store prunes
  EXPECT_FALSE(fs::exists(old));
  EXPECT_TRUE(fs::exists(recent));
  EXPECT_TRUE(fs::exists(added));
  EXPECT_TRUE(fs::exists(pyc));
  // LLVM's timestamp file is not left beside numba's files (numba-cuda counts them).
  EXPECT_FALSE(fs::exists(dir.path / "llvmcache.timestamp"));
}

TEST(DiskCachePruning, SizeBoundRemovesTheLeastRecentlyUsed) {
  TempDir dir;
  std::string d = dir.path.string();
  std::vector<fs::path> entries;
  {
    EnvVar env("PTXJIT_CACHE_POLICY", "off");
    for (int i = 0; i < 5; ++i) {
      entries.push_back(storeEntry(d, "m.f" + std::to_string(i) + "-1"));
      makeOld(entries.back(), std::chrono::minutes(50 - i)); // f0 the least recently used
    }
  }
  uint64_t one = fs::file_size(entries[0]);
  // Room for three entries: storing a sixth removes the three least recently used.
  EnvVar env("PTXJIT_CACHE_POLICY", "prune_interval=0s:prune_after=0s:cache_size=0%:"
                                    "cache_size_bytes=" +
                                        std::to_string(3 * one + one / 2));
  fs::path sixth = storeEntry(d, "m.f5-1");
  EXPECT_FALSE(fs::exists(entries[0]));
  EXPECT_FALSE(fs::exists(entries[1]));
  EXPECT_FALSE(fs::exists(entries[2]));
  EXPECT_TRUE(fs::exists(entries[3]));
  EXPECT_TRUE(fs::exists(entries[4]));
  EXPECT_TRUE(fs::exists(sixth));
}

TEST(DiskCachePruning, AtMostOncePerInterval) {
  TempDir dir;
  std::string d = dir.path.string();
  llvm::CachePruningPolicy policy =
      llvm::cantFail(llvm::parseCachePruningPolicy("prune_interval=1h:prune_after=1h"));
  auto t0 = std::chrono::steady_clock::now();
  fs::path first;
  {
    EnvVar env("PTXJIT_CACHE_POLICY", "off");
    first = storeEntry(d, "m.a-1");
  }
  EXPECT_TRUE(diskcache::prune(d, policy, t0)); // the first scan of this directory
  makeOld(first, std::chrono::hours(2));
  EXPECT_FALSE(diskcache::prune(d, policy, t0 + std::chrono::minutes(30))); // within: no scan
  EXPECT_TRUE(fs::exists(first));
  EXPECT_TRUE(diskcache::prune(d, policy, t0 + std::chrono::hours(2))); // the interval passed
  EXPECT_FALSE(fs::exists(first));
  EXPECT_FALSE(fs::exists(dir.path / "llvmcache.timestamp"));
}

TEST(DiskCacheEntry, UnusableDirectoryIsNotAnError) {
  TempDir dir;
  // A "directory" that is a regular file: nothing can be created below it (even by root).
  fs::path notADir = dir.path / "file";
  writeFile(notADir, "x");
  Digest key = sha256("k");
  EXPECT_FALSE(diskcache::store(diskcache::entryPath(notADir.string(), "p", key), key,
                                CacheEntry{1, {"x"}}));
  EXPECT_FALSE(diskcache::load(diskcache::entryPath(notADir.string(), "p", key), key));
  {
    EnvVar env("PTXJIT_CACHE_DIR", (notADir / "sub").string());
    EXPECT_EQ(diskcache::directoryFor("<string>"), "");
  }
  EXPECT_EQ(dir.files(), std::vector<std::string>{"file"});
}

TEST(DiskCacheDirectory, EnvThenPycacheThenUserCache) {
  TempDir dir;
  fs::path src = dir.path / "mod.py";
  writeFile(src, "# source\n");
  {
    EnvVar env("PTXJIT_CACHE_DIR", (dir.path / "explicit").string());
    EXPECT_EQ(diskcache::directoryFor(src.string()), (dir.path / "explicit").string());
    EXPECT_TRUE(fs::is_directory(dir.path / "explicit"));
  }
  EnvVar none("PTXJIT_CACHE_DIR", "");
  EnvVar xdg("XDG_CACHE_HOME", (dir.path / "xdg").string());
  EXPECT_EQ(diskcache::directoryFor(src.string()), (dir.path / "__pycache__").string());
  EXPECT_EQ(diskcache::directoryFor("<string>"), (dir.path / "xdg" / "ptxjit").string());
  EXPECT_EQ(diskcache::directoryFor((dir.path / "gone.py").string()),
            (dir.path / "xdg" / "ptxjit").string());
  EXPECT_EQ(diskcache::entryPrefix("/x/my mod.py", "A.<locals>.f", "slot"),
            "my_mod.A__locals__f-" + toHex(sha256("slot"), 6));
}

// ---- The compiler with cache=True -----------------------------------------------------------

namespace {

/// Registers add_one (device) and calls_add_one (kernel) with cache=True, from copies of
/// `dev` and `ker`, and specializes the kernel for float32 arrays.
struct CachedPair {
  Compiler &c = Compiler::instance();
  int devId, id;
  const Specialization *spec;
  CachedPair(const CopySnapshot &dev, CopySnapshot ker, const codegen::CompileOptions &o) {
    devId = c.registerFunction("add_one", ir::FunctionKind::Device, cached());
    ker.base->globals["add_one"] = ir::GlobalValue::deviceFunction(devId, "add_one");
    id = c.registerFunction("calls_add_one", ir::FunctionKind::Kernel, cached());
    auto f32 = t::array(t::float32(), 1, ir::Layout::C);
    spec = &c.specialize(id, {f32, f32}, o, {{id, ker.take()}, {devId, dev.take()}});
  }
  ~CachedPair() {
    c.unregisterFunction(id);
    c.unregisterFunction(devId);
  }
};

/// Runs a host specialization of calls_add_one over {1.5, -2, 10}.
std::vector<float> runAddOne(const Specialization &spec) {
  std::vector<float> x{1.5f, -2.0f, 10.0f}, out(3, 0.0f);
  struct {
    void *data;
    int64_t shape, stride;
  } ax{x.data(), 3, 4}, aout{out.data(), 3, 4};
  std::vector<void *> params;
  for (auto *a : {&ax, &aout}) {
    params.push_back(&a->data);
    params.push_back(&a->shape);
    params.push_back(&a->stride);
  }
  EXPECT_EQ(spec.plan.slots.size(), params.size());
  runtime::launchHost(spec.hostEntry, {1, 1, 1}, {32, 1, 1}, params.data());
  return out;
}

} // namespace

TEST(CompilerDiskCache, SecondRegistrationLoadsInsteadOfCompiling) {
  TempDir dir;
  EnvVar env("PTXJIT_CACHE_DIR", dir.path.string());
  CopySnapshot dev(fixture("add_one", true)), ker(fixture("calls_add_one", true));
  for (const codegen::CompileOptions &o : {hostOpts(), cudaOpts()}) {
    size_t compiled = Compiler::instance().compiledCount();
    std::string ptx, symbol;
    {
      CachedPair first(dev, ker, o);
      EXPECT_FALSE(first.spec->fromDiskCache);
      EXPECT_TRUE(fs::exists(first.spec->cachePath));
      ptx = first.spec->ptx;
      symbol = first.spec->symbol;
      if (o.backend == codegen::Backend::Host)
        EXPECT_EQ(runAddOne(*first.spec), (std::vector<float>{2.5f, -1.0f, 11.0f}));
    }
    EXPECT_EQ(Compiler::instance().compiledCount(), compiled + 1);
    CachedPair second(dev, ker, o);
    EXPECT_TRUE(second.spec->fromDiskCache);
    EXPECT_EQ(Compiler::instance().compiledCount(), compiled + 1); // nothing compiled
    EXPECT_EQ(second.spec->symbol, symbol);
    EXPECT_EQ(second.spec->returnType, t::void_());
    EXPECT_FALSE(second.spec->llvmIR.empty());
    if (o.backend == codegen::Backend::Host) {
      EXPECT_EQ(runAddOne(*second.spec), (std::vector<float>{2.5f, -1.0f, 11.0f}));
    } else {
      EXPECT_EQ(second.spec->ptx, ptx);
      EXPECT_TRUE(testutil::ptxasAccepts(second.spec->ptx));
    }
  }
  EXPECT_EQ(dir.files().size(), 2u); // one entry per backend
}

TEST(CompilerDiskCache, ChangedCalleeIsAMissAndCorruptEntriesAreReplaced) {
  TempDir dir;
  EnvVar env("PTXJIT_CACHE_DIR", dir.path.string());
  CopySnapshot dev(fixture("add_one", true)), ker(fixture("calls_add_one", true));
  { CachedPair warm(dev, ker, hostOpts()); }
  // The device function's constant 1.0 becomes 2.0: a new key, so compiled again, and right.
  for (ir::ConstValue &c : dev.base->consts)
    if (c.kind == ir::ConstValue::Kind::Float)
      c.f = 2.0;
  std::string firstPath;
  {
    CachedPair changed(dev, ker, hostOpts());
    EXPECT_FALSE(changed.spec->fromDiskCache);
    EXPECT_EQ(runAddOne(*changed.spec), (std::vector<float>{3.5f, 0.0f, 12.0f}));
    firstPath = changed.spec->cachePath;
  }
  // The older entry of the same specialization was replaced (not kept beside it).
  EXPECT_EQ(dir.files().size(), 1u);
  // Corrupt the entry: it is ignored, the kernel compiled again and the entry rewritten.
  std::string bytes = readFile(firstPath);
  bytes[bytes.size() - 10] ^= 0x55;
  writeFile(firstPath, bytes);
  uint64_t rejected = cacheCounters().rejected.load();
  {
    CachedPair again(dev, ker, hostOpts());
    EXPECT_FALSE(again.spec->fromDiskCache);
    EXPECT_EQ(runAddOne(*again.spec), (std::vector<float>{3.5f, 0.0f, 12.0f}));
  }
  EXPECT_EQ(cacheCounters().rejected.load(), rejected + 1);
  CachedPair hit(dev, ker, hostOpts());
  EXPECT_TRUE(hit.spec->fromDiskCache);
  EXPECT_EQ(runAddOne(*hit.spec), (std::vector<float>{3.5f, 0.0f, 12.0f}));
}

TEST(CompilerDiskCache, GlobalsChangedAfterTypingInThisProcessAreNotCached) {
  TempDir dir;
  EnvVar env("PTXJIT_CACHE_DIR", dir.path.string());
  CopySnapshot dev(fixture("add_one", true)), ker(fixture("calls_add_one", true));
  Compiler &c = Compiler::instance();
  int devId = c.registerFunction("add_one", ir::FunctionKind::Device, cached());
  ker.base->globals["add_one"] = ir::GlobalValue::deviceFunction(devId, "add_one");
  int id = c.registerFunction("calls_add_one", ir::FunctionKind::Kernel, cached());
  auto f32 = t::array(t::float32(), 1, ir::Layout::C);
  c.specialize(id, {f32, f32}, hostOpts(), {{id, ker.take()}, {devId, dev.take()}});
  // The callee changes after it was typed: this process keeps using the typed callee (globals
  // are frozen at first compile), so another backend's code must not be stored under the key
  // of the changed callee.
  for (ir::ConstValue &v : dev.base->consts)
    if (v.kind == ir::ConstValue::Kind::Float)
      v.f = 5.0;
  uint64_t stores = cacheCounters().stores.load();
  const Specialization &cuda =
      c.specialize(id, {f32, f32}, cudaOpts(), {{id, ker.take()}, {devId, dev.take()}});
  EXPECT_FALSE(cuda.fromDiskCache);
  EXPECT_TRUE(cuda.cachePath.empty());
  EXPECT_EQ(cacheCounters().stores.load(), stores);
  c.unregisterFunction(id);
  c.unregisterFunction(devId);
}

// An entry of PTX that links libdevice is used only while libdevice is the file it was linked
// with (another one compiles again and replaces it); an entry of PTX that links none is used
// whichever libdevice there is, or none.
TEST(CompilerDiskCache, AnEntryThatLinksLibdeviceIsUsedOnlyWithThatFile) {
  PTXJIT_SKIP_WITHOUT_LIBDEVICE();
  TempDir dir;
  EnvVar env("PTXJIT_CACHE_DIR", (dir.path / "cache").string());
  const std::string real = codegen::libdevicePath();
  const fs::path a = dir.path / "a.bc", b = dir.path / "b.bc";
  fs::copy_file(real, a);
  fs::copy_file(real, b);
  CopySnapshot exp(fixture("exp_each", true));
  CopySnapshot dev(fixture("add_one", true)), ker(fixture("calls_add_one", true));
  Compiler &c = Compiler::instance();
  const uint64_t rejected = cacheCounters().rejected.load();
  // A fresh registration each time (nothing kept in memory); true when it came from the disk.
  auto expFromDisk = [&](const fs::path &libdevice) {
    EnvVar lib("PTXJIT_LIBDEVICE", libdevice.string());
    int id = c.registerFunction("exp_each", ir::FunctionKind::Kernel, cached());
    auto f64 = t::array(t::float64(), 1, ir::Layout::C);
    const Specialization &s = c.specialize(id, {f64, f64}, cudaOpts(), {{id, exp.take()}});
    bool fromDisk = s.fromDiskCache;
    EXPECT_NE(s.ptx.find(".entry " + s.symbol), std::string::npos);
    c.unregisterFunction(id);
    return fromDisk;
  };
  auto addOneFromDisk = [&](const fs::path &libdevice) {
    EnvVar lib("PTXJIT_LIBDEVICE", libdevice.string());
    CachedPair pair(dev, ker, cudaOpts());
    return pair.spec->fromDiskCache;
  };
  EXPECT_FALSE(expFromDisk(a));
  EXPECT_TRUE(expFromDisk(a));
  EXPECT_FALSE(expFromDisk(b)) << "linked with another libdevice file";
  EXPECT_TRUE(expFromDisk(b));
  EXPECT_FALSE(expFromDisk(a));
  EXPECT_FALSE(addOneFromDisk(a));
  EXPECT_TRUE(addOneFromDisk(b));
  EXPECT_TRUE(addOneFromDisk(dir.path / "missing.bc")) << "no libdevice needed, none looked for";
  EXPECT_EQ(cacheCounters().rejected.load(), rejected) << "a stale libdevice is a miss";
  size_t entries = 0; // one per specialization: each new one replaced the last
  for (const auto &f : fs::directory_iterator(dir.path / "cache"))
    entries += f.path().extension() == ".ptxjitc";
  EXPECT_EQ(entries, 2u);
}
