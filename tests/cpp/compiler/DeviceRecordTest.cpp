// The device record (compiler/DeviceRecord.h): what a process learned of its devices' compute
// capability, found again only for the same identity, never trusted when malformed, and written
// atomically (or not at all).
#include "compiler/DeviceRecord.h"

#include "compiler/DiskCache.h"
#include "tests/cpp/common/TempDir.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

using namespace ptxjit::compiler;
namespace fs = std::filesystem;

namespace {

struct TempDir : ptxjit::testing::TempDir {
  TempDir() : ptxjit::testing::TempDir("ptxjit-record-test") {}
  size_t count() const { return files().size(); }
};

const std::string kIdentity = "driver library: libcuda.so.1\nCUDA version: 13000\n"
                              "gpu 0000:01:00.0\nModel: \t\t NVIDIA H200\n";

} // namespace

TEST(DeviceRecord, IsFoundAgainForTheSameIdentityOnly) {
  TempDir dir;
  EXPECT_FALSE(readDeviceRecord(kIdentity, dir.path.string()));
  ASSERT_TRUE(writeDeviceRecord(kIdentity, {9, 0}, dir.path.string()));
  EXPECT_EQ(readDeviceRecord(kIdentity, dir.path.string()), (RememberedCapability{9, 0}));
  EXPECT_FALSE(readDeviceRecord(kIdentity + "CUDA_VISIBLE_DEVICES=1\n", dir.path.string()));
  // Rewritten in place: one file per identity, no temporary left behind.
  ASSERT_TRUE(writeDeviceRecord(kIdentity, {12, 1}, dir.path.string()));
  EXPECT_EQ(readDeviceRecord(kIdentity, dir.path.string()), (RememberedCapability{12, 1}));
  EXPECT_EQ(dir.count(), 1u);
}

TEST(DeviceRecord, AnotherIdentityInTheFileIsNotTrusted) {
  // A record whose name (the identity's hash) matches but whose text names other devices, as a
  // hash collision or a hand-edited file would.
  TempDir dir;
  ASSERT_TRUE(writeDeviceRecord("other devices\n", {8, 0}, dir.path.string()));
  fs::rename(deviceRecordPath(dir.path.string(), "other devices\n"),
             deviceRecordPath(dir.path.string(), kIdentity));
  EXPECT_FALSE(readDeviceRecord(kIdentity, dir.path.string()));
}

TEST(DeviceRecord, MalformedRecordsAreIgnored) {
  TempDir dir;
  std::string path = deviceRecordPath(dir.path.string(), kIdentity);
  std::string head = "ptxjit device record 1\n" + kIdentity + "compute capability ";
  for (const std::string &tail : {"9.0", "9.0\nmore\n", "9\n", ".0\n", "x.0\n", "0.0\n", "9.\n",
                                  "123.0\n", "9.000\n", ""}) {
    std::ofstream(path, std::ios::trunc) << head << tail;
    EXPECT_FALSE(readDeviceRecord(kIdentity, dir.path.string())) << tail;
  }
  std::ofstream(path, std::ios::trunc) << "ptxjit device record 2\n" << kIdentity
                                       << "compute capability 9.0\n";
  EXPECT_FALSE(readDeviceRecord(kIdentity, dir.path.string())) << "another format";
  std::ofstream(path, std::ios::trunc) << head << "10.3\n";
  EXPECT_EQ(readDeviceRecord(kIdentity, dir.path.string()), (RememberedCapability{10, 3}));
}

TEST(DeviceRecord, NothingIsWrittenWithoutAnIdentityOrAUsableDirectory) {
  TempDir dir;
  EXPECT_FALSE(writeDeviceRecord("", {9, 0}, dir.path.string()));
  EXPECT_FALSE(writeDeviceRecord(kIdentity, {0, 0}, dir.path.string()));
  EXPECT_FALSE(writeDeviceRecord(kIdentity, {100, 0}, dir.path.string()));
  EXPECT_EQ(dir.count(), 0u);
  EXPECT_FALSE(readDeviceRecord("", dir.path.string()));
  // A directory that cannot be made (below a file).
  std::ofstream(dir.path / "file") << "";
  EXPECT_FALSE(writeDeviceRecord(kIdentity, {9, 0}, (dir.path / "file" / "sub").string()));
  if (::geteuid() != 0) { // root writes through permissions
    fs::create_directory(dir.path / "ro");
    fs::permissions(dir.path / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    EXPECT_FALSE(writeDeviceRecord(kIdentity, {9, 0}, (dir.path / "ro").string()));
    EXPECT_TRUE(fs::is_empty(dir.path / "ro"));
    fs::permissions(dir.path / "ro", fs::perms::owner_all);
  }
}

TEST(DeviceRecord, DefaultsToTheUserCacheDirectory) {
  TempDir dir;
  const char *old = std::getenv("XDG_CACHE_HOME");
  std::string saved = old ? old : "";
  ::setenv("XDG_CACHE_HOME", dir.path.c_str(), 1);
  EXPECT_EQ(diskcache::userDirectory(), (dir.path / "ptxjit").string());
  ASSERT_TRUE(writeDeviceRecord(kIdentity, {9, 0}));
  EXPECT_TRUE(fs::exists(deviceRecordPath((dir.path / "ptxjit").string(), kIdentity)));
  EXPECT_EQ(readDeviceRecord(kIdentity), (RememberedCapability{9, 0}));
  if (old)
    ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  else
    ::unsetenv("XDG_CACHE_HOME");
}
