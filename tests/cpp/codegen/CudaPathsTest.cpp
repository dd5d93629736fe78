// codegen/CudaPaths.h: where libdevice is looked for (numba-cuda's order), with fake toolkit
// layouts in a temporary directory and the environment variables set per test.
#include "codegen/CudaPaths.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

namespace fs = std::filesystem;
using namespace ptxjit::codegen;

namespace {

// Sets (or, with nullopt, unsets) an environment variable for the test's scope.
struct EnvVar {
  std::string name;
  std::optional<std::string> old;
  EnvVar(std::string n, std::optional<std::string> value) : name(std::move(n)) {
    if (const char *v = std::getenv(name.c_str()))
      old = v;
    if (value)
      ::setenv(name.c_str(), value->c_str(), 1);
    else
      ::unsetenv(name.c_str());
  }
  ~EnvVar() {
    if (old)
      ::setenv(name.c_str(), old->c_str(), 1);
    else
      ::unsetenv(name.c_str());
  }
};

class CudaPaths : public ::testing::Test {
protected:
  fs::path root;
  // Every variable the search reads, cleared so that the machine's own setting cannot leak in.
  EnvVar override_{"PTXJIT_LIBDEVICE", std::nullopt}, home_{"CUDA_HOME", std::nullopt},
      path_{"CUDA_PATH", std::nullopt}, conda_{"CONDA_PREFIX", std::nullopt};

  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "ptxjit-cudapaths-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root = tmpl;
    setPythonSearchPaths("", {});
  }
  void TearDown() override {
    setPythonSearchPaths("", {});
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  // Creates <root>/<dir>/nvvm/libdevice/libdevice.10.bc and returns its path.
  std::string makeLibdevice(const std::string &dir) {
    fs::path f = root / dir / "nvvm/libdevice/libdevice.10.bc";
    fs::create_directories(f.parent_path());
    std::ofstream(f) << "BC";
    return f.string();
  }
  std::string systemLibdevice() {
    std::error_code ec;
    const char *p = "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc";
    return fs::is_regular_file(p, ec) ? p : "";
  }
};

} // namespace

TEST_F(CudaPaths, OverrideIsTheOnlyCandidate) {
  std::string cuda = makeLibdevice("cuda");
  EnvVar home("CUDA_HOME", (root / "cuda").string());
  {
    EnvVar o("PTXJIT_LIBDEVICE", (root / "missing.bc").string());
    ASSERT_EQ(libdeviceCandidates().size(), 1u);
    EXPECT_EQ(libdeviceCandidates()[0].source, "PTXJIT_LIBDEVICE");
    // A wrong override is reported, not bypassed for CUDA_HOME's file.
    EXPECT_EQ(libdevicePath(), "");
    std::string msg = libdeviceNotFoundMessage();
    EXPECT_NE(msg.find((root / "missing.bc").string()), std::string::npos) << msg;
    EXPECT_NE(msg.find("PTXJIT_LIBDEVICE"), std::string::npos) << msg;
  }
  std::string other = makeLibdevice("other");
  EnvVar o("PTXJIT_LIBDEVICE", other);
  EXPECT_EQ(libdevicePath(), other);
}

TEST_F(CudaPaths, CudaHomeThenCudaPathThenSystem) {
  std::string viaPath = makeLibdevice("path");
  {
    EnvVar p("CUDA_PATH", (root / "path").string());
    EXPECT_EQ(libdevicePath(), viaPath);
    // CUDA_PATH is read only when CUDA_HOME is unset (numba-cuda's rule), even when
    // CUDA_HOME's toolkit has no libdevice.
    EnvVar h("CUDA_HOME", (root / "home").string());
    EXPECT_EQ(libdevicePath(), systemLibdevice());
    std::string viaHome = makeLibdevice("home");
    EXPECT_EQ(libdevicePath(), viaHome);
  }
  auto c = libdeviceCandidates();
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(c.back().path, "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc");
}

TEST_F(CudaPaths, CondaThenWheelThenCudaHome) {
  std::string home = makeLibdevice("home");
  EnvVar h("CUDA_HOME", (root / "home").string());
  // A wheel in a Python path directory: nvidia-cuda-nvcc-cu12's layout, then nvidia-nvvm 13's.
  fs::create_directories(root / "site");
  std::string cu13 = makeLibdevice("site/nvidia/cu13");
  setPythonSearchPaths((root / "venv").string(),
                       {"", (root / "nowhere").string(), (root / "site").string()});
  EXPECT_EQ(libdevicePath(), cu13);
  std::string nvcc = makeLibdevice("site/nvidia/cuda_nvcc");
  EXPECT_EQ(libdevicePath(), nvcc);
  // sys.prefix counts as a conda environment only with conda-meta/.
  std::string venv = makeLibdevice("venv");
  EXPECT_EQ(libdevicePath(), nvcc);
  fs::create_directories(root / "venv/conda-meta");
  EXPECT_EQ(libdevicePath(), venv);
  // $CONDA_PREFIX, for programs without Python, after sys.prefix.
  std::string env = makeLibdevice("env");
  EnvVar c("CONDA_PREFIX", (root / "env").string());
  EXPECT_EQ(libdevicePath(), venv);
  setPythonSearchPaths("", {});
  EXPECT_EQ(libdevicePath(), env);
}

TEST_F(CudaPaths, NotFoundNamesEveryPlace) {
  EnvVar h("CUDA_HOME", (root / "home").string());
  EnvVar c("CONDA_PREFIX", (root / "env").string());
  fs::create_directories(root / "site");
  setPythonSearchPaths("", {(root / "site").string()});
  std::string msg = libdeviceNotFoundMessage();
  for (const LibdeviceCandidate &cand : libdeviceCandidates()) {
    EXPECT_NE(msg.find(cand.path), std::string::npos) << cand.path << "\n" << msg;
    EXPECT_NE(msg.find(cand.source), std::string::npos) << cand.source << "\n" << msg;
  }
  EXPECT_EQ(libdeviceCandidates().size(), 5u); // conda, two wheels, CUDA_HOME, system
  EXPECT_NE(msg.find("PTXJIT_LIBDEVICE"), std::string::npos) << msg;
}
