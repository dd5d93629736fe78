// A fake CUDA driver for tests of the runtime's start-up logic on machines without a GPU
// (loaded through PTXJIT_LIBCUDA). It exports every entry point runtime/Driver.h resolves; those
// the start-up path calls (cuInit, versions, device queries, the primary context, the current
// context) and the memory entry points below behave like a driver with one device of compute
// capability 9.0; every other entry point fails with CUDA_ERROR_NOT_SUPPORTED. cuda.h is
// deliberately not included: the definitions use the ABI-equivalent plain types (CUresult and
// CUdevice are int, handles are pointers).
//
// Control functions for tests (extern "C", found with dlsym):
//   fakeCudaHoldContext(1) makes cuDevicePrimaryCtxRetain block until fakeCudaHoldContext(0);
//   fakeCudaSetContextResult(code) makes it return `code` (0: success);
//   fakeCudaContextCalls() counts its calls; fakeCudaContextWaiting() is 1 while one is blocked;
//   fakeCudaContextReleases() counts cuDevicePrimaryCtxRelease_v2 calls.
//   fakeCudaHoldInit(n, ms) makes cuInit block until n callers wait in it at once, or until ms
//   milliseconds have passed (fakeCudaInitReleasedByCount() says which released them);
//   fakeCudaInitWaiting() counts the callers blocked, fakeCudaInitCalls() its calls and
//   fakeCudaInitThreads() the distinct threads that made them; fakeCudaSetInitResult(code)
//   makes it return `code`. cuCtxSetLimit and
//   cuCtxGetLimit keep CU_LIMIT_STACK_SIZE per context (1024 until set, at most 512 KiB).
// Memory (host memory as device memory): cuMemAlloc_v2/cuMemFree_v2 always work; the device
// reports memory pools, and cuDeviceGetDefaultMemPool, cuMemPoolSetAttribute, cuMemAllocAsync
// and cuMemFreeAsync work, only after fakeCudaSetMemoryPools(1). Then:
//   fakeCudaHoldPoolAllocation(1) makes cuMemAllocAsync block until fakeCudaHoldPoolAllocation(0)
//   (fakeCudaPoolAllocationWaiting() is 1 while one is blocked);
//   fakeCudaHoldPoolSetUp(1) makes cuDeviceGetDefaultMemPool block until fakeCudaHoldPoolSetUp(0)
//   (fakeCudaPoolSetUpWaiting() is 1 while one is blocked);
//   fakeCudaFailNextPoolAllocations(n) makes its next n calls return CUDA_ERROR_OUT_OF_MEMORY;
//   fakeCudaMemoryCalls(k) counts calls of cuMemAlloc (k = 0), cuMemFree (1), cuMemAllocAsync (2)
//   and cuMemFreeAsync (3).
// Events: cuEventCreate/Destroy/Record/Synchronize/Query and cuStreamWaitEvent work (work is
// always complete); cuEventElapsedTime_v2 gives the host time between the two records and
// fails with CUDA_ERROR_INVALID_HANDLE for an event created with CU_EVENT_DISABLE_TIMING or
// never recorded. Host memory: cuMemHostAlloc/cuMemFreeHost, cuMemAllocManaged, and
// cuMemHostRegister_v2/cuMemHostUnregister (registered ranges are tracked: registering one twice
// fails with CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, unregistering an unknown pointer with
// CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED); cuMemHostGetDevicePointer_v2 returns the host address.
// fakeCudaPinnedAsyncCopies(0) / (1) count the asynchronous copies to the device from, and to
// the host into, such pinned memory.
// Streams and graphs: cuStreamCreate/Destroy/Synchronize/Query work (work is done as it is
// submitted). cuMemsetD8Async is the one capturable operation: on a stream being captured it is
// recorded, else done at once (on host memory). cuStreamBeginCapture_v2 refuses the legacy
// default stream (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) and a stream already captured
// (CUDA_ERROR_ILLEGAL_STATE); a cuMemsetD8Async on the legacy default stream while a blocking
// stream (created with flags 0) is captured invalidates that capture and fails with
// CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, as the real driver does (so do cuMemAllocAsync and
// cuMemFreeAsync on the legacy stream then); cuStreamEndCapture then fails
// with CUDA_ERROR_STREAM_CAPTURE_INVALIDATED and a null graph (CUDA_ERROR_ILLEGAL_STATE when
// not capturing). cuGraphGetNodes counts the recorded operations, cuGraphInstantiateWithFlags
// copies them, cuGraphLaunch replays them in order. fakeCudaGraphCalls(k) counts calls of
// cuGraphLaunch (k = 0), cuGraphExecDestroy (1) and cuGraphDestroy (2). cuLaunchKernel on a
// captured stream records a kernel node (its packed buffer's bytes, when given one);
// cuStreamGetCaptureInfo_v3 gives the last recorded operation as the one dependency (node k of
// a capture is the handle k + 1); cuGraphExecKernelNodeSetParams_v2 on an instantiated graph's
// kernel node keeps the packed buffer it is given (CUDA_ERROR_INVALID_VALUE for another node, or
// for both forms or a mismatched function), which fakeCudaLastKernelNodeParams(out, cap) copies
// out (returning its size, and the node's index through fakeCudaLastKernelNodeIndex(); how the
// parameters were given through fakeCudaLastKernelNodeForm(): 0 none, 1 pointers, 2 a buffer).
// fakeCudaAcceptAnyPtx(1) makes cuModuleLoadDataEx load any image (for launches of compiled
// kernels, which then do nothing) instead of only the "// fake-ok" ones.
// cuDeviceGetUuid_v2 gives device d the UUID bytes 16 * d + k.
// Stream order: cuStreamGetFlags reports a stream's creation flags; fakeCudaOrderCount() counts
// cuStreamWaitEvent calls by which the legacy stream waits for an event last recorded on a
// non-blocking stream, and fakeCudaOrderStep(0) / (1) give the steps (one counter) of the last
// such join and of the last cuMemFree_v2 / cuMemFreeAsync.
// Several devices: fakeCudaSetDeviceCount(n) (1 to 8; 1 by default) exposes n devices, each with
// its own primary context (device 0 is "Fake GPU", device k "Fake GPU k"), compute capability
// 9.0 unless fakeCudaSetComputeCapability(d, major, minor) says otherwise, and
// fakeCudaContextRetains(d) counts cuDevicePrimaryCtxRetain calls for device d. Allocations
// remember the context current when made; fakeCudaForeignFrees() counts frees made while
// another context was current. cuDeviceCanAccessPeer answers fakeCudaSetPeerAccess(on) (0 by
// default); cuCtxEnablePeerAccess fails with CUDA_ERROR_PEER_ACCESS_UNSUPPORTED without it and
// fakeCudaPeerEnables() counts its successes; cuMemcpyPeer/cuMemcpyPeerAsync, cuMemcpyHtoD_v2
// and cuMemcpyDtoH_v2 (and their Async forms, done at once; cuCtxSynchronize has nothing to wait
// for) copy (host memory as device memory) and fakeCudaCopyCalls(k) counts
// peer copies (k = 0), host-to-device (1) and device-to-host (2) copies.
// Pointers: cuPointerGetAttribute answers CU_POINTER_ATTRIBUTE_CONTEXT, MEMORY_TYPE, IS_MANAGED
// and DEVICE_ORDINAL for any address inside memory from cuMemAlloc_v2 or cuMemAllocAsync
// (device memory of the device whose context was current), cuMemAllocManaged (device type,
// managed) and cuMemHostAlloc or cuMemHostRegister_v2 (host memory); the ordinal is that of the
// context current when the memory was allocated or registered. Any other address fails with
// CUDA_ERROR_INVALID_VALUE, as the real driver does for memory it does not know;
// fakeCudaPointerQueries() counts the calls.
// Modules: a PTX text starting with "// fake-ok" loads (any other is rejected, see below);
// fakeCudaModuleLoads(d) counts loads into device d's context, cuModuleGetFunction gives a
// function of the module, and cuLaunchKernel succeeds only in the context its module was loaded
// into (else CUDA_ERROR_INVALID_HANDLE), counted per device by fakeCudaLaunches(d);
// fakeCudaLastLaunchGrid() gives the x dimension of the last launch's grid.
// Occupancy: cuOccupancyMaxPotentialBlockSize suggests blocks of 1024 threads (or the caller's
// limit) and a grid of 1024; CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT is 1024 unless
// fakeCudaSetMultiprocessorCount(n) says otherwise (every other attribute is 1024 too).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

// Never destroyed: destroying a condition variable that a thread waits on blocks, which would
// hide whether the runtime itself waits for its opener at exit.
std::mutex &gMutex = *new std::mutex;
std::condition_variable &gChanged = *new std::condition_variable;
bool gHold = false;
bool gWaiting = false;
bool gHoldInit = false;
int gInitReleaseCount = 0;
bool gInitReleasedByCount = false;
std::chrono::steady_clock::time_point gInitDeadline;
int gInitWaiting = 0;
int gInitCalls = 0;
int gInitResult = 0;
std::set<std::thread::id> &gInitThreads = *new std::set<std::thread::id>;
int gResult = 0;
int gCalls = 0;
int gContextObject = 0; // its address is the context handle
thread_local void *tCurrent = nullptr;
bool gPools = false;
bool gHoldPool = false;
bool gPoolWaiting = false;
bool gHoldPoolSetUp = false;
bool gPoolSetUpWaiting = false;
int gPoolFailures = 0;
int gMemoryCalls[4] = {0, 0, 0, 0};
int gPoolObject = 0; // its address is the pool handle

constexpr int kMaxFakeDevices = 8;
int gDeviceCount = 1;
int gContexts[kMaxFakeDevices] = {}; // their addresses are the devices' context handles
bool gPeer = false;
int gPeerEnables = 0;
int gCopyCalls[3] = {0, 0, 0};
int gForeignFrees = 0;
int gModuleLoads[kMaxFakeDevices] = {};
int gLaunches[kMaxFakeDevices] = {};
int gRetains[kMaxFakeDevices] = {};
int gCcMajor[kMaxFakeDevices] = {9, 9, 9, 9, 9, 9, 9, 9};
int gCcMinor[kMaxFakeDevices] = {};
std::map<unsigned long long, void *> &gAllocContext = *new std::map<unsigned long long, void *>;
std::map<void *, size_t> &gStackLimits = *new std::map<void *, size_t>; // cuCtxSetLimit
int gReleases = 0; // cuDevicePrimaryCtxRelease_v2 calls

// What cuPointerGetAttribute reports about a range of memory, by its start address.
struct FakePointer {
  size_t bytes;
  void *context; // current when it was allocated or registered
  unsigned type; // CU_MEMORYTYPE_HOST (1) or CU_MEMORYTYPE_DEVICE (2)
  bool managed;
};
std::map<unsigned long long, FakePointer> &gPointers =
    *new std::map<unsigned long long, FakePointer>;
int gPointerQueries = 0;

// Records (under gMutex) the memory `p` .. `p + bytes` for cuPointerGetAttribute.
void notePointer(const void *p, size_t bytes, unsigned type, bool managed) {
  gPointers[reinterpret_cast<unsigned long long>(p)] =
      FakePointer{bytes ? bytes : 1, tCurrent, type, managed};
}
void forgetPointer(const void *p) { gPointers.erase(reinterpret_cast<unsigned long long>(p)); }

struct FakeModule {
  void *context;
};
struct FakeFunction {
  FakeModule *module;
};

// The device whose context `ctx` is, or -1.
int deviceOf(void *ctx) {
  for (int d = 0; d < kMaxFakeDevices; ++d)
    if (ctx == &gContexts[d])
      return d;
  return -1;
}

std::set<void *> &gRegistered = *new std::set<void *>;

struct FakeMemset {
  unsigned long long dst;
  unsigned char value;
  size_t n;
  // A kernel launch instead (cuLaunchKernel on a captured stream): its function and the bytes
  // of its packed parameter buffer (empty for the pointer form).
  void *kernel = nullptr;
  std::vector<unsigned char> params;
};

struct FakeStream {
  unsigned flags;
  bool capturing = false;
  bool invalidated = false;
  std::vector<FakeMemset> recorded;
};

struct FakeGraph {
  std::vector<FakeMemset> ops;
};

void doMemset(const FakeMemset &m) {
  if (!m.kernel)
    std::memset(reinterpret_cast<void *>(m.dst), m.value, m.n);
}

// cuLaunchKernel's `extra` keys (cuda.h's CU_LAUNCH_PARAM_*).
void *const kParamEnd = nullptr;
void *const kParamBuffer = reinterpret_cast<void *>(0x1);
void *const kParamBufferSize = reinterpret_cast<void *>(0x2);

// CUDA_KERNEL_NODE_PARAMS_v2's layout.
struct FakeKernelNodeParams {
  void *func;
  unsigned grid[3], block[3], sharedMem;
  void **kernelParams;
  void **extra;
  void *kern;
  void *ctx;
};

// The parameters the last cuGraphExecKernelNodeSetParams_v2 set (fakeCudaLastKernelNodeParams).
std::vector<unsigned char> &gLastNodeParams = *new std::vector<unsigned char>;
long gLastNodeIndex = -1;
int gLastNodeForm = 0; // 0 no parameters, 1 one pointer each, 2 a packed buffer

std::set<FakeStream *> &gStreams = *new std::set<FakeStream *>;
int gGraphCalls[3] = {0, 0, 0};

struct FakeEvent {
  bool timing;
  bool recorded = false;
  double ms = 0;
  void *stream = nullptr; // where it was last recorded
};

// Stream ordering (fakeCudaOrderCount / fakeCudaOrderStep): how many times the legacy stream
// waited for an event recorded on a non-blocking stream, and the step (a counter of these joins
// and of frees) of the last join and of the last free.
int gLegacyJoins = 0;
long gStep = 0, gLastJoinStep = 0, gLastFreeStep = 0;

constexpr int kNotSupported = 801;                         // CUDA_ERROR_NOT_SUPPORTED
constexpr int kInvalidHandle = 400;                        // CUDA_ERROR_INVALID_HANDLE
constexpr int kInvalidValue = 1;                           // CUDA_ERROR_INVALID_VALUE
constexpr int kIllegalState = 401;                         // CUDA_ERROR_ILLEGAL_STATE
constexpr int kCaptureUnsupported = 900;                   // CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
constexpr int kCaptureInvalidated = 901;                   // CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
constexpr int kCaptureImplicit = 906;                      // CUDA_ERROR_STREAM_CAPTURE_IMPLICIT
void *const kLegacyStream = reinterpret_cast<void *>(0x1); // CU_STREAM_LEGACY

// Work enqueued on the legacy default stream while a blocking stream (created with flags 0,
// which synchronizes with it) is captured: invalidates those captures, true if there were any
// (the work then fails with CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, as the real driver's does).
// Called with gMutex held.
bool legacyWorkBreaksCaptures(void *stream) {
  if (stream != nullptr && stream != kLegacyStream)
    return false;
  bool broke = false;
  for (FakeStream *s : gStreams)
    if (s->capturing && s->flags == 0) {
      s->invalidated = true;
      broke = true;
    }
  return broke;
}

std::atomic<int> gMultiprocessors{1024};  // fakeCudaSetMultiprocessorCount
std::atomic<unsigned> gLastLaunchGrid{0}; // fakeCudaLastLaunchGrid

} // namespace

extern "C" {

void fakeCudaHoldContext(int hold) {
  std::lock_guard<std::mutex> lock(gMutex);
  gHold = hold != 0;
  gChanged.notify_all();
}
void fakeCudaHoldInit(int waiters, int ms) {
  std::lock_guard<std::mutex> lock(gMutex);
  gHoldInit = true;
  gInitReleaseCount = waiters;
  gInitReleasedByCount = false;
  gInitDeadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
}
int fakeCudaInitReleasedByCount() {
  std::lock_guard<std::mutex> lock(gMutex);
  return gInitReleasedByCount ? 1 : 0;
}
int fakeCudaInitWaiting() {
  std::lock_guard<std::mutex> lock(gMutex);
  return gInitWaiting;
}
int fakeCudaInitCalls() {
  std::lock_guard<std::mutex> lock(gMutex);
  return gInitCalls;
}
int fakeCudaInitThreads() {
  std::lock_guard<std::mutex> lock(gMutex);
  return static_cast<int>(gInitThreads.size());
}
void fakeCudaSetInitResult(int code) {
  std::lock_guard<std::mutex> lock(gMutex);
  gInitResult = code;
}
void fakeCudaSetContextResult(int code) {
  std::lock_guard<std::mutex> lock(gMutex);
  gResult = code;
}
int fakeCudaContextCalls() {
  std::lock_guard<std::mutex> lock(gMutex);
  return gCalls;
}
int fakeCudaContextReleases() {
  std::lock_guard<std::mutex> lock(gMutex);
  return gReleases;
}
int fakeCudaContextWaiting() {
  std::lock_guard<std::mutex> lock(gMutex);
  return gWaiting ? 1 : 0;
}

void fakeCudaSetMemoryPools(int on) {
  std::lock_guard<std::mutex> lock(gMutex);
  gPools = on != 0;
}
void fakeCudaHoldPoolAllocation(int hold) {
  std::lock_guard<std::mutex> lock(gMutex);
  gHoldPool = hold != 0;
  gChanged.notify_all();
}
void fakeCudaHoldPoolSetUp(int hold) {
  std::lock_guard<std::mutex> lock(gMutex);
  gHoldPoolSetUp = hold != 0;
  gChanged.notify_all();
}
int fakeCudaPoolSetUpWaiting() {
  std::lock_guard<std::mutex> lock(gMutex);
  return gPoolSetUpWaiting ? 1 : 0;
}
int fakeCudaPoolAllocationWaiting() {
  std::lock_guard<std::mutex> lock(gMutex);
  return gPoolWaiting ? 1 : 0;
}
void fakeCudaFailNextPoolAllocations(int n) {
  std::lock_guard<std::mutex> lock(gMutex);
  gPoolFailures = n;
}
void fakeCudaSetDeviceCount(int n) {
  std::lock_guard<std::mutex> lock(gMutex);
  gDeviceCount = n < 1 ? 1 : n > kMaxFakeDevices ? kMaxFakeDevices : n;
}
void fakeCudaSetComputeCapability(int device, int major, int minor) {
  std::lock_guard<std::mutex> lock(gMutex);
  if (device >= 0 && device < kMaxFakeDevices) {
    gCcMajor[device] = major;
    gCcMinor[device] = minor;
  }
}
int fakeCudaContextRetains(int device) {
  std::lock_guard<std::mutex> lock(gMutex);
  return device >= 0 && device < kMaxFakeDevices ? gRetains[device] : -1;
}
void fakeCudaSetPeerAccess(int on) {
  std::lock_guard<std::mutex> lock(gMutex);
  gPeer = on != 0;
}
int fakeCudaPeerEnables() {
  std::lock_guard<std::mutex> lock(gMutex);
  return gPeerEnables;
}
int fakeCudaCopyCalls(int which) {
  std::lock_guard<std::mutex> lock(gMutex);
  return gCopyCalls[which];
}
int fakeCudaForeignFrees() {
  std::lock_guard<std::mutex> lock(gMutex);
  return gForeignFrees;
}
int fakeCudaModuleLoads(int device) {
  std::lock_guard<std::mutex> lock(gMutex);
  return gModuleLoads[device];
}
int fakeCudaLaunches(int device) {
  std::lock_guard<std::mutex> lock(gMutex);
  return gLaunches[device];
}
int fakeCudaMemoryCalls(int which) {
  std::lock_guard<std::mutex> lock(gMutex);
  return which >= 0 && which < 4 ? gMemoryCalls[which] : -1;
}

int cuInit(unsigned) {
  std::unique_lock<std::mutex> lock(gMutex);
  ++gInitCalls;
  gInitThreads.insert(std::this_thread::get_id());
  ++gInitWaiting;
  if (gHoldInit && gInitWaiting >= gInitReleaseCount) {
    gHoldInit = false;
    gInitReleasedByCount = true;
    gChanged.notify_all();
  }
  if (!gChanged.wait_until(lock, gInitDeadline, [] { return !gHoldInit; }))
    gHoldInit = false; // the deadline released it
  gChanged.notify_all();
  --gInitWaiting;
  return gInitResult;
}
int cuDriverGetVersion(int *v) {
  *v = 13000;
  return 0;
}
// Unknown to this driver: the runtime falls back to its built-in names and texts.
int cuGetErrorName(int, const char **) { return kInvalidValue; }
int cuGetErrorString(int, const char **) { return kInvalidValue; }
int cuDeviceGetCount(int *n) {
  std::lock_guard<std::mutex> lock(gMutex);
  *n = gDeviceCount;
  return 0;
}
int cuDeviceGet(int *dev, int ordinal) {
  std::lock_guard<std::mutex> lock(gMutex);
  if (ordinal < 0 || ordinal >= gDeviceCount)
    return 101; // CUDA_ERROR_INVALID_DEVICE
  *dev = ordinal;
  return 0;
}
int cuDeviceGetName(char *buf, int len, int dev) {
  std::string name = dev == 0 ? "Fake GPU" : "Fake GPU " + std::to_string(dev);
  std::strncpy(buf, name.c_str(), static_cast<size_t>(len));
  return 0;
}
int cuDeviceGetAttribute(int *value, int attr, int dev) {
  switch (attr) {
  case 75: { // COMPUTE_CAPABILITY_MAJOR
    std::lock_guard<std::mutex> lock(gMutex);
    *value = dev >= 0 && dev < kMaxFakeDevices ? gCcMajor[dev] : 9;
    break;
  }
  case 76: { // COMPUTE_CAPABILITY_MINOR
    std::lock_guard<std::mutex> lock(gMutex);
    *value = dev >= 0 && dev < kMaxFakeDevices ? gCcMinor[dev] : 0;
    break;
  }
  case 16: // MULTIPROCESSOR_COUNT
    *value = gMultiprocessors.load();
    break;
  case 115: { // MEMORY_POOLS_SUPPORTED
    std::lock_guard<std::mutex> lock(gMutex);
    *value = gPools ? 1 : 0;
    break;
  }
  default:
    *value = 1024;
  }
  return 0;
}
// Device d's UUID bytes are 16 * d + k (k = 0..15): "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f"
// for device 0.
int cuDeviceGetUuid_v2(char *uuid, int dev) {
  for (int k = 0; k < 16; ++k)
    uuid[k] = static_cast<char>(16 * dev + k);
  return 0;
}
int cuDeviceTotalMem_v2(size_t *bytes, int) {
  *bytes = size_t(1) << 30;
  return 0;
}
int cuDevicePrimaryCtxRetain(void **ctx, int dev) {
  std::unique_lock<std::mutex> lock(gMutex);
  ++gCalls;
  if (dev >= 0 && dev < kMaxFakeDevices)
    ++gRetains[dev];
  gWaiting = true;
  gChanged.wait(lock, [] { return !gHold; });
  gWaiting = false;
  if (gResult != 0)
    return gResult;
  *ctx = dev == 0 ? static_cast<void *>(&gContextObject) : &gContexts[dev];
  return 0;
}
int cuDevicePrimaryCtxRelease_v2(int) {
  std::lock_guard<std::mutex> lock(gMutex);
  ++gReleases;
  return 0;
}
int cuCtxGetCurrent(void **ctx) {
  *ctx = tCurrent;
  return 0;
}
int cuCtxSetCurrent(void *ctx) {
  tCurrent = ctx;
  return 0;
}

int cuMemAlloc_v2(unsigned long long *ptr, size_t bytes) {
  std::lock_guard<std::mutex> lock(gMutex);
  ++gMemoryCalls[0];
  *ptr = reinterpret_cast<unsigned long long>(std::malloc(bytes ? bytes : 1));
  gAllocContext[*ptr] = tCurrent;
  notePointer(reinterpret_cast<void *>(*ptr), bytes, 2, false);
  return 0;
}
int cuMemFree_v2(unsigned long long ptr) {
  std::lock_guard<std::mutex> lock(gMutex);
  ++gMemoryCalls[1];
  gLastFreeStep = ++gStep;
  auto it = gAllocContext.find(ptr);
  if (it != gAllocContext.end()) {
    if (it->second != tCurrent)
      ++gForeignFrees;
    gAllocContext.erase(it);
  }
  forgetPointer(reinterpret_cast<void *>(ptr));
  std::free(reinterpret_cast<void *>(ptr));
  return 0;
}
int cuDeviceCanAccessPeer(int *can, int dev, int peer) {
  std::lock_guard<std::mutex> lock(gMutex);
  *can = gPeer && dev != peer ? 1 : 0;
  return 0;
}
int cuCtxEnablePeerAccess(void *peerCtx, unsigned) {
  std::lock_guard<std::mutex> lock(gMutex);
  if (!gPeer || peerCtx == tCurrent || !tCurrent)
    return 217; // CUDA_ERROR_PEER_ACCESS_UNSUPPORTED
  ++gPeerEnables;
  return 0;
}
int cuMemcpyPeer(unsigned long long dst, void *, unsigned long long src, void *, size_t n) {
  std::lock_guard<std::mutex> lock(gMutex);
  ++gCopyCalls[0];
  std::memcpy(reinterpret_cast<void *>(dst), reinterpret_cast<const void *>(src), n);
  return 0;
}
int cuMemcpyPeerAsync(unsigned long long dst, void *dctx, unsigned long long src, void *sctx,
                      size_t n, void *) {
  return cuMemcpyPeer(dst, dctx, src, sctx, n);
}
int cuMemcpyHtoD_v2(unsigned long long dst, const void *src, size_t n) {
  std::lock_guard<std::mutex> lock(gMutex);
  ++gCopyCalls[1];
  std::memcpy(reinterpret_cast<void *>(dst), src, n);
  return 0;
}
static int gPinnedAsyncCopies[2] = {0, 0}; // to the device, to the host

// Counts an asynchronous copy (`which`: 0 to the device, 1 to the host) whose host side `p` ..
// `p + n` lies in host memory from cuMemHostAlloc or cuMemHostRegister_v2.
static void notePinnedCopy(int which, const void *p, size_t n) {
  std::lock_guard<std::mutex> lock(gMutex);
  auto at = reinterpret_cast<unsigned long long>(p);
  auto it = gPointers.upper_bound(at);
  if (it == gPointers.begin())
    return;
  --it;
  if (it->second.type == 1 && at - it->first + n <= it->second.bytes)
    ++gPinnedAsyncCopies[which];
}

// Work is done as it is submitted: the asynchronous copies copy at once, and there is never any
// work to wait for.
int cuMemcpyHtoDAsync_v2(unsigned long long dst, const void *src, size_t n, void *) {
  notePinnedCopy(0, src, n);
  std::memcpy(reinterpret_cast<void *>(dst), src, n);
  return 0;
}
int cuMemcpyDtoHAsync_v2(void *dst, unsigned long long src, size_t n, void *) {
  notePinnedCopy(1, dst, n);
  std::memcpy(dst, reinterpret_cast<const void *>(src), n);
  return 0;
}
// fakeCudaPinnedAsyncCopies(0): asynchronous copies to the device from pinned host memory so far;
// (1): to pinned host memory.
int fakeCudaPinnedAsyncCopies(int which) {
  std::lock_guard<std::mutex> lock(gMutex);
  return gPinnedAsyncCopies[which];
}
int cuCtxSynchronize() { return 0; }
// Stack limits per context (CU_LIMIT_STACK_SIZE only, 1024 until set; at most 512 KiB, the
// driver's ceiling on current GPUs, else CUDA_ERROR_INVALID_VALUE).
int cuCtxSetLimit(int limit, size_t value) {
  std::lock_guard<std::mutex> lock(gMutex);
  if (!tCurrent)
    return 201; // CUDA_ERROR_INVALID_CONTEXT
  if (limit != 0)
    return 215; // CUDA_ERROR_UNSUPPORTED_LIMIT
  if (value > (size_t(512) << 10))
    return 1; // CUDA_ERROR_INVALID_VALUE
  gStackLimits[tCurrent] = value;
  return 0;
}
int cuCtxGetLimit(size_t *value, int limit) {
  std::lock_guard<std::mutex> lock(gMutex);
  if (!tCurrent)
    return 201;
  if (limit != 0)
    return 215;
  auto it = gStackLimits.find(tCurrent);
  *value = it == gStackLimits.end() ? 1024 : it->second;
  return 0;
}
int cuMemcpyDtoH_v2(void *dst, unsigned long long src, size_t n) {
  std::lock_guard<std::mutex> lock(gMutex);
  ++gCopyCalls[2];
  std::memcpy(dst, reinterpret_cast<const void *>(src), n);
  return 0;
}
int cuDeviceGetDefaultMemPool(void **pool, int) {
  std::unique_lock<std::mutex> lock(gMutex);
  if (!gPools)
    return kNotSupported;
  gPoolSetUpWaiting = true;
  gChanged.wait(lock, [] { return !gHoldPoolSetUp; });
  gPoolSetUpWaiting = false;
  *pool = &gPoolObject;
  return 0;
}
int cuMemPoolSetAttribute(void *pool, int, void *) {
  return pool == &gPoolObject ? 0 : kInvalidValue;
}
int cuMemAllocAsync(unsigned long long *ptr, size_t bytes, void *stream) {
  std::unique_lock<std::mutex> lock(gMutex);
  if (!gPools)
    return kNotSupported;
  ++gMemoryCalls[2];
  gPoolWaiting = true;
  gChanged.wait(lock, [] { return !gHoldPool; });
  gPoolWaiting = false;
  if (legacyWorkBreaksCaptures(stream))
    return kCaptureImplicit;
  if (gPoolFailures > 0) {
    --gPoolFailures;
    return 2; // CUDA_ERROR_OUT_OF_MEMORY
  }
  *ptr = reinterpret_cast<unsigned long long>(std::malloc(bytes ? bytes : 1));
  notePointer(reinterpret_cast<void *>(*ptr), bytes, 2, false);
  return 0;
}
int cuMemFreeAsync(unsigned long long ptr, void *stream) {
  std::lock_guard<std::mutex> lock(gMutex);
  if (!gPools)
    return kNotSupported;
  if (legacyWorkBreaksCaptures(stream))
    return kCaptureImplicit;
  ++gMemoryCalls[3];
  gLastFreeStep = ++gStep;
  forgetPointer(reinterpret_cast<void *>(ptr));
  std::free(reinterpret_cast<void *>(ptr));
  return 0;
}

int cuEventCreate(void **event, unsigned flags) {
  *event = new FakeEvent{(flags & 0x2) == 0}; // CU_EVENT_DISABLE_TIMING
  return 0;
}
int cuEventDestroy_v2(void *event) {
  delete static_cast<FakeEvent *>(event);
  return 0;
}
int cuEventRecord(void *event, void *stream) {
  auto *e = static_cast<FakeEvent *>(event);
  e->recorded = true;
  e->stream = stream;
  e->ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
  return 0;
}
int cuEventSynchronize(void *) { return 0; }
int cuEventQuery(void *) { return 0; }
int cuStreamWaitEvent(void *stream, void *event, unsigned) {
  std::lock_guard<std::mutex> lock(gMutex);
  auto *from = static_cast<FakeStream *>(static_cast<FakeEvent *>(event)->stream);
  if ((stream == nullptr || stream == kLegacyStream) && from && gStreams.count(from) &&
      (from->flags & 1) != 0) { // CU_STREAM_NON_BLOCKING
    ++gLegacyJoins;
    gLastJoinStep = ++gStep;
  }
  return 0;
}
int cuStreamGetFlags(void *stream, unsigned *flags) {
  std::lock_guard<std::mutex> lock(gMutex);
  auto *s = static_cast<FakeStream *>(stream);
  if (!gStreams.count(s))
    return kInvalidHandle;
  *flags = s->flags;
  return 0;
}
// fakeCudaOrderCount(): legacy-stream joins of non-blocking streams so far.
int fakeCudaOrderCount() {
  std::lock_guard<std::mutex> lock(gMutex);
  return gLegacyJoins;
}
// fakeCudaOrderStep(0): the step of the last join; (1): of the last cuMemFree/cuMemFreeAsync.
long fakeCudaOrderStep(int which) {
  std::lock_guard<std::mutex> lock(gMutex);
  return which == 0 ? gLastJoinStep : gLastFreeStep;
}
int cuEventElapsedTime_v2(float *ms, void *start, void *stop) {
  auto *a = static_cast<FakeEvent *>(start);
  auto *b = static_cast<FakeEvent *>(stop);
  if (!a->timing || !b->timing || !a->recorded || !b->recorded)
    return kInvalidHandle;
  *ms = static_cast<float>(b->ms - a->ms);
  return 0;
}

int cuMemHostAlloc(void **p, size_t bytes, unsigned) {
  std::lock_guard<std::mutex> lock(gMutex);
  *p = std::malloc(bytes ? bytes : 1);
  notePointer(*p, bytes, 1, false);
  return 0;
}
int cuMemFreeHost(void *p) {
  std::lock_guard<std::mutex> lock(gMutex);
  forgetPointer(p);
  std::free(p);
  return 0;
}
int cuMemAllocManaged(unsigned long long *ptr, size_t bytes, unsigned) {
  std::lock_guard<std::mutex> lock(gMutex);
  *ptr = reinterpret_cast<unsigned long long>(std::malloc(bytes ? bytes : 1));
  notePointer(reinterpret_cast<void *>(*ptr), bytes, 2, true);
  return 0;
}
int cuMemHostGetDevicePointer_v2(unsigned long long *dptr, void *p, unsigned) {
  *dptr = reinterpret_cast<unsigned long long>(p);
  return 0;
}
int cuMemHostRegister_v2(void *p, size_t bytes, unsigned) {
  std::lock_guard<std::mutex> lock(gMutex);
  if (!gRegistered.insert(p).second)
    return 712; // CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED
  notePointer(p, bytes, 1, false);
  return 0;
}
int cuMemHostUnregister(void *p) {
  std::lock_guard<std::mutex> lock(gMutex);
  if (!gRegistered.erase(p))
    return 713; // CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED
  forgetPointer(p);
  return 0;
}
int cuPointerGetAttribute(void *data, int attribute, unsigned long long ptr) {
  std::lock_guard<std::mutex> lock(gMutex);
  ++gPointerQueries;
  auto it = gPointers.upper_bound(ptr);
  if (it == gPointers.begin())
    return kInvalidValue;
  --it;
  if (ptr - it->first >= it->second.bytes)
    return kInvalidValue;
  const FakePointer &p = it->second;
  switch (attribute) {
  case 1: // CU_POINTER_ATTRIBUTE_CONTEXT
    *static_cast<void **>(data) = p.context;
    return 0;
  case 2: // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
    *static_cast<unsigned *>(data) = p.type;
    return 0;
  case 8: // CU_POINTER_ATTRIBUTE_IS_MANAGED
    *static_cast<unsigned *>(data) = p.managed ? 1 : 0;
    return 0;
  case 9: // CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
    *static_cast<int *>(data) = p.context == &gContextObject ? 0 : deviceOf(p.context);
    return 0;
  default:
    return kNotSupported;
  }
}
int fakeCudaPointerQueries() {
  std::lock_guard<std::mutex> lock(gMutex);
  return gPointerQueries;
}

int fakeCudaGraphCalls(int which) {
  std::lock_guard<std::mutex> lock(gMutex);
  return which >= 0 && which < 3 ? gGraphCalls[which] : -1;
}

int cuStreamCreate(void **stream, unsigned flags) {
  std::lock_guard<std::mutex> lock(gMutex);
  auto *s = new FakeStream{flags};
  gStreams.insert(s);
  *stream = s;
  return 0;
}
int cuStreamDestroy_v2(void *stream) {
  std::lock_guard<std::mutex> lock(gMutex);
  if (!gStreams.erase(static_cast<FakeStream *>(stream)))
    return kInvalidHandle;
  delete static_cast<FakeStream *>(stream);
  return 0;
}
int cuStreamSynchronize(void *) { return 0; }
int cuStreamQuery(void *) { return 0; }

int cuMemsetD8Async(unsigned long long dst, unsigned char value, size_t n, void *stream) {
  std::lock_guard<std::mutex> lock(gMutex);
  if (stream == nullptr || stream == kLegacyStream) {
    if (legacyWorkBreaksCaptures(stream))
      return kCaptureImplicit;
  } else {
    auto *s = static_cast<FakeStream *>(stream);
    if (!gStreams.count(s))
      return kInvalidHandle;
    if (s->capturing) {
      s->recorded.push_back({dst, value, n});
      return 0;
    }
  }
  doMemset({dst, value, n});
  return 0;
}

int cuStreamBeginCapture_v2(void *stream, int) {
  std::lock_guard<std::mutex> lock(gMutex);
  if (stream == nullptr || stream == kLegacyStream)
    return kCaptureUnsupported;
  auto *s = static_cast<FakeStream *>(stream);
  if (!gStreams.count(s))
    return kInvalidHandle;
  if (s->capturing)
    return kIllegalState;
  s->capturing = true;
  s->invalidated = false;
  s->recorded.clear();
  return 0;
}
int cuStreamIsCapturing(void *stream, int *status) {
  std::lock_guard<std::mutex> lock(gMutex);
  auto *s = static_cast<FakeStream *>(stream);
  *status = 0; // CU_STREAM_CAPTURE_STATUS_NONE
  if (gStreams.count(s) && s->capturing)
    *status = s->invalidated ? 2 : 1; // INVALIDATED : ACTIVE
  return 0;
}
int cuStreamEndCapture(void *stream, void **graph) {
  std::lock_guard<std::mutex> lock(gMutex);
  *graph = nullptr;
  auto *s = static_cast<FakeStream *>(stream);
  if (!gStreams.count(s) || !s->capturing)
    return kIllegalState;
  s->capturing = false;
  if (s->invalidated)
    return kCaptureInvalidated;
  *graph = new FakeGraph{std::move(s->recorded)};
  s->recorded.clear();
  return 0;
}
int cuStreamGetCaptureInfo_v3(void *stream, int *status, unsigned long long *id, void **graph,
                              void *const **deps, const void **edges, size_t *count) {
  std::lock_guard<std::mutex> lock(gMutex);
  static thread_local void *dep = nullptr; // the array the driver hands out
  auto *s = static_cast<FakeStream *>(stream);
  *status = 0;
  if (id)
    *id = 0;
  if (graph)
    *graph = nullptr;
  if (edges)
    *edges = nullptr;
  size_t n = 0;
  if (stream != nullptr && stream != kLegacyStream && gStreams.count(s) && s->capturing) {
    *status = s->invalidated ? 2 : 1;
    n = s->recorded.empty() ? 0 : 1;
    dep = reinterpret_cast<void *>(s->recorded.size());
  }
  if (deps)
    *deps = n ? &dep : nullptr;
  if (count)
    *count = n;
  return 0;
}
int cuGraphExecKernelNodeSetParams_v2(void *exec, void *node, const FakeKernelNodeParams *p) {
  std::lock_guard<std::mutex> lock(gMutex);
  auto &ops = static_cast<FakeGraph *>(exec)->ops;
  size_t k = reinterpret_cast<size_t>(node);
  if (k == 0 || k > ops.size() || !ops[k - 1].kernel || p->func != ops[k - 1].kernel ||
      (p->kernelParams && p->extra))
    return kInvalidValue;
  gLastNodeIndex = static_cast<long>(k - 1);
  gLastNodeForm = p->extra ? 2 : p->kernelParams ? 1 : 0;
  gLastNodeParams.clear();
  if (p->extra) {
    const unsigned char *buf = nullptr;
    size_t bytes = 0;
    for (void **e = p->extra; *e != kParamEnd; e += 2) {
      if (*e == kParamBuffer)
        buf = static_cast<const unsigned char *>(e[1]);
      else if (*e == kParamBufferSize)
        bytes = *static_cast<size_t *>(e[1]);
    }
    gLastNodeParams.assign(buf, buf + bytes);
  }
  ops[k - 1].params = gLastNodeParams;
  return 0;
}
size_t fakeCudaLastKernelNodeParams(unsigned char *out, size_t cap) {
  std::lock_guard<std::mutex> lock(gMutex);
  std::memcpy(out, gLastNodeParams.data(), std::min(cap, gLastNodeParams.size()));
  return gLastNodeParams.size();
}
long fakeCudaLastKernelNodeIndex() {
  std::lock_guard<std::mutex> lock(gMutex);
  return gLastNodeIndex;
}
int fakeCudaLastKernelNodeForm() {
  std::lock_guard<std::mutex> lock(gMutex);
  return gLastNodeForm;
}
int cuGraphGetNodes(void *graph, void **nodes, size_t *count) {
  if (nodes)
    return kNotSupported; // the runtime only counts them
  *count = static_cast<FakeGraph *>(graph)->ops.size();
  return 0;
}
int cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long) {
  *exec = new FakeGraph{static_cast<FakeGraph *>(graph)->ops};
  return 0;
}
int cuGraphLaunch(void *exec, void *) {
  std::lock_guard<std::mutex> lock(gMutex);
  ++gGraphCalls[0];
  for (const FakeMemset &m : static_cast<FakeGraph *>(exec)->ops)
    doMemset(m);
  return 0;
}
int cuGraphExecDestroy(void *exec) {
  std::lock_guard<std::mutex> lock(gMutex);
  ++gGraphCalls[1];
  delete static_cast<FakeGraph *>(exec);
  return 0;
}
int cuGraphDestroy(void *graph) {
  std::lock_guard<std::mutex> lock(gMutex);
  ++gGraphCalls[2];
  delete static_cast<FakeGraph *>(graph);
  return 0;
}

// Module loads and the linker reject every input, writing a line into the error log buffer the
// caller passed (CU_JIT_ERROR_LOG_BUFFER = 5), so that tests see the log reach the CudaError.
constexpr int kInvalidPtx = 218; // CUDA_ERROR_INVALID_PTX
void writeErrorLog(unsigned n, const int *options, void **values, const char *text) {
  for (unsigned k = 0; k < n; ++k)
    if (options[k] == 5)
      std::strcpy(static_cast<char *>(values[k]), text);
}
void **gLinkValues = nullptr;
const int *gLinkOptions = nullptr;
unsigned gLinkOptionCount = 0;
std::atomic<bool> gAcceptAnyPtx{false}; // fakeCudaAcceptAnyPtx

void fakeCudaAcceptAnyPtx(int on) { gAcceptAnyPtx = on != 0; }

int cuModuleLoadDataEx(void **module, const void *image, unsigned n, const int *options,
                       void **values) {
  if (std::strncmp(static_cast<const char *>(image), "// fake-ok", 10) == 0 || gAcceptAnyPtx) {
    std::lock_guard<std::mutex> lock(gMutex);
    int dev = deviceOf(tCurrent);
    if (tCurrent == &gContextObject)
      dev = 0;
    if (dev < 0)
      return 201; // CUDA_ERROR_INVALID_CONTEXT
    ++gModuleLoads[dev];
    *module = new FakeModule{tCurrent};
    return 0;
  }
  *module = nullptr;
  writeErrorLog(n, options, values, "fake: module rejected");
  return kInvalidPtx;
}
int cuLinkCreate_v2(unsigned n, const int *options, void **values, void **state) {
  gLinkOptionCount = n;
  gLinkOptions = options;
  gLinkValues = values;
  *state = &gLinkValues;
  return 0;
}
int cuLinkAddData_v2(void *, int, void *, size_t, const char *, unsigned, void *, void *) {
  writeErrorLog(gLinkOptionCount, gLinkOptions, gLinkValues, "fake: link input rejected");
  return kInvalidPtx;
}
int cuLinkComplete(void *, void **, size_t *) { return kInvalidPtx; }
int cuLinkDestroy(void *) { return 0; }
int cuModuleUnload(void *module) {
  delete static_cast<FakeModule *>(module);
  return 0;
}
int cuModuleGetFunction(void **fn, void *module, const char *) {
  *fn = new FakeFunction{static_cast<FakeModule *>(module)}; // leaked: the runtime caches it
  return 0;
}
int cuLaunchKernel(void *fn, unsigned gridX, unsigned, unsigned, unsigned, unsigned, unsigned,
                   unsigned, void *stream, void **, void **extra) {
  std::lock_guard<std::mutex> lock(gMutex);
  gLastLaunchGrid = gridX;
  void *ctx = static_cast<FakeFunction *>(fn)->module->context;
  if (ctx != tCurrent)
    return kInvalidHandle;
  if (auto *s = static_cast<FakeStream *>(stream); gStreams.count(s) && s->capturing) {
    FakeMemset op{0, 0, 0, fn, {}};
    for (void **e = extra; e && *e != kParamEnd; e += 2)
      if (*e == kParamBuffer) {
        const auto *buf = static_cast<const unsigned char *>(e[1]);
        size_t bytes = 0;
        for (void **f = extra; *f != kParamEnd; f += 2)
          if (*f == kParamBufferSize)
            bytes = *static_cast<size_t *>(f[1]);
        op.params.assign(buf, buf + bytes);
      }
    s->recorded.push_back(std::move(op));
    return 0;
  }
  ++gLaunches[ctx == &gContextObject ? 0 : deviceOf(ctx)];
  return 0;
}

#define FAKE_UNSUPPORTED(name)                                                                     \
  int name() { return kNotSupported; }
FAKE_UNSUPPORTED(cuMemGetInfo_v2)
FAKE_UNSUPPORTED(cuMemcpyDtoD_v2)
FAKE_UNSUPPORTED(cuMemcpyDtoDAsync_v2)
FAKE_UNSUPPORTED(cuMemsetD8_v2)
FAKE_UNSUPPORTED(cuFuncGetAttribute)
FAKE_UNSUPPORTED(cuFuncSetAttribute)
#undef FAKE_UNSUPPORTED

void fakeCudaSetMultiprocessorCount(int n) { gMultiprocessors = n; }
unsigned fakeCudaLastLaunchGrid() { return gLastLaunchGrid.load(); }

// Every kernel fills the fake device with blocks of 1024 threads, or of the caller's limit:
// enough for the ufunc loops' launch shapes (ufunc/Loops.cpp).
int cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, void *, void *, size_t,
                                     int blockSizeLimit) {
  *blockSize = blockSizeLimit > 0 && blockSizeLimit < 1024 ? blockSizeLimit : 1024;
  *minGridSize = 1024;
  return 0;
}

} // extern "C"
