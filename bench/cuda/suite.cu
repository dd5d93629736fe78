// The CUDA C++ twins of bench/workloads.py's suite (issue 20): the same algorithms, block sizes
// and tiling as the Python kernels (REDUCE, MATMUL, HISTOGRAM, TRANSPOSE, JACOBI, NBODY,
// MONTE_CARLO_PI), no library calls. Built by bench/run.py as a shared library
//   nvcc -O3 -arch=sm_90 -std=c++17 -Xcompiler -fPIC -shared -I<checkout> suite.cu
//        <checkout>/runtime/Xoroshiro.cpp -o libcuda_suite.so
// and loaded with ctypes into ptxjit's benchmark worker, so that each timing sample of a
// ptxjit kernel is interleaved with one of its twin in the same process and the same (primary)
// context. Inputs are filled on the device (the pi generators' states on the host, as numba-cuda
// makes them); the Python side checks ptxjit's results, these are summarized by
// suite_checksum() for the report.
//
// C interface (no function throws or exits; errors: a null handle / negative result and
// suite_last_error()):
//   void *suite_open(const char *name, long n, long param)  n: the workload's size; param:
//       steps (jacobi), samples (pi), else 0
//   double suite_sample_ms(void *h, int inner)  milliseconds per unit of `inner` units
//       enqueued back to back between two CUDA events (one launch; jacobi: `param` launches)
//   double suite_checksum(void *h)             a summary of the last unit's output
//   double suite_copy_gbs(long bytes, int reps) device-to-device copy bandwidth, GB/s (median
//       of 7 timings of `reps` copies of `bytes`)
//   void suite_close(void *h)
#include "runtime/Xoroshiro.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

thread_local std::string lastError;

bool ok(cudaError_t err, const char *what) {
  if (err == cudaSuccess)
    return true;
  lastError = std::string(what) + ": " + cudaGetErrorString(err);
  return false;
}

// ---- kernels (mirror bench/workloads.py) ----

constexpr int kReduceBlock = 256, kReduceItems = 16;

__device__ float warpSum(float v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

__global__ void reduceSum(const float *x, long n, float *out) {
  __shared__ float warpSums[32];
  int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  float acc = 0.0f;
  for (long i = blockIdx.x * (long)blockDim.x + tid; i < n; i += (long)gridDim.x * blockDim.x)
    acc += x[i];
  acc = warpSum(acc);
  if (lane == 0)
    warpSums[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = 0.0f;
    if (lane < (int)blockDim.x / 32)
      acc = warpSums[lane];
    acc = warpSum(acc);
    if (lane == 0)
      atomicAdd(out, acc);
  }
}

constexpr int TPB = 16;

__global__ void fastMatmul(const float *A, const float *B, float *C, int n) {
  __shared__ float sA[TPB][TPB], sB[TPB][TPB];
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  int tx = threadIdx.x, ty = threadIdx.y;
  float tmp = 0.0f;
  for (int i = 0; i < (int)gridDim.x; ++i) {
    sA[ty][tx] = 0;
    sB[ty][tx] = 0;
    if (y < n && tx + i * TPB < n)
      sA[ty][tx] = A[(long)y * n + tx + i * TPB];
    if (x < n && ty + i * TPB < n)
      sB[ty][tx] = B[(long)(ty + i * TPB) * n + x];
    __syncthreads();
    for (int j = 0; j < TPB; ++j)
      tmp += sA[ty][j] * sB[j][tx];
    __syncthreads();
  }
  if (y < n && x < n)
    C[(long)y * n + x] = tmp;
}

constexpr int kHistItems = 64;

__global__ void histogram(const uint8_t *data, long n, unsigned *bins) {
  __shared__ unsigned local[256];
  int tid = threadIdx.x;
  local[tid] = 0;
  __syncthreads();
  for (long i = blockIdx.x * (long)blockDim.x + tid; i < n; i += (long)gridDim.x * blockDim.x)
    atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  atomicAdd(&bins[tid], local[tid]);
}

constexpr int TILE = 32, ROWS = 8;

__global__ void transpose(const float *a, float *out, int n) {
  __shared__ float tile[TILE][TILE + 1];
  int tx = threadIdx.x, ty = threadIdx.y;
  int x = blockIdx.x * TILE + tx, y = blockIdx.y * TILE + ty;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < n && y + j < n)
      tile[ty + j][tx] = a[(long)(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * TILE + tx;
  y = blockIdx.x * TILE + ty;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < n && y + j < n)
      out[(long)(y + j) * n + x] = tile[tx][ty + j];
}

__global__ void jacobiStep(const double *a, double *out, int n) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x > 0 && y > 0 && y < n - 1 && x < n - 1)
    out[(long)y * n + x] = 0.25 * (a[(long)(y - 1) * n + x] + a[(long)(y + 1) * n + x] +
                                   a[(long)y * n + x - 1] + a[(long)y * n + x + 1]);
}

constexpr int NB_TILE = 256;

__global__ void nbody(const float *pos, float *acc, int n) {
  __shared__ float sh[NB_TILE][4];
  int tid = threadIdx.x, i = blockIdx.x * blockDim.x + tid;
  float px = pos[4 * i], py = pos[4 * i + 1], pz = pos[4 * i + 2];
  float ax = 0, ay = 0, az = 0;
  for (int t = 0; t < n / NB_TILE; ++t) {
    int j = t * NB_TILE + tid;
    for (int c = 0; c < 4; ++c)
      sh[tid][c] = pos[4 * j + c];
    __syncthreads();
    for (int k = 0; k < NB_TILE; ++k) {
      float dx = sh[k][0] - px, dy = sh[k][1] - py, dz = sh[k][2] - pz;
      float d2 = dx * dx + dy * dy + dz * dz + 1e-3f;
      float inv = 1.0f / sqrtf(d2);
      float s = sh[k][3] * inv * inv * inv;
      ax += dx * s;
      ay += dy * s;
      az += dz * s;
    }
    __syncthreads();
  }
  acc[3 * i] = ax;
  acc[3 * i + 1] = ay;
  acc[3 * i + 2] = az;
}

// xoroshiro128+ as numba-cuda's numba.cuda.random draws from it (xoroshiro128p_next and
// xoroshiro128p_uniform_float32): the generator's state is loaded from its slot in global memory
// and stored back on every draw, as the Python device functions do, and a draw is the top 53
// bits as a double in [0, 1), rounded to float. The states are made on the host by ptxjit's
// runtime/Xoroshiro.cpp (numba-cuda's initialization), so the twin draws the same numbers.

// The generators' seed: bench/workloads.py's PI_SEED.
constexpr uint64_t kPiSeed = 20261130;

__device__ uint64_t rotl64(uint64_t x, unsigned k) { return (x << k) | (x >> (64 - k)); }

__device__ float uniformFloat32(ptxjit::runtime::Xoroshiro128pState *states, long i) {
  uint64_t s0 = states[i].s0, s1 = states[i].s1;
  uint64_t result = s0 + s1;
  s1 ^= s0;
  states[i].s0 = rotl64(s0, 55) ^ s1 ^ (s1 << 14);
  states[i].s1 = rotl64(s1, 36);
  return (float)((double)(result >> 11) * (1.0 / 9007199254740992.0));
}

__global__ void monteCarloPi(long samples, ptxjit::runtime::Xoroshiro128pState *states,
                             unsigned long long *hits) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  long long count = 0;
  for (long k = 0; k < samples; ++k) {
    float x = uniformFloat32(states, i);
    float y = uniformFloat32(states, i);
    if (x * x + y * y <= 1.0f)
      count += 1;
  }
  for (int offset = 16; offset > 0; offset /= 2)
    count += __shfl_down_sync(0xffffffffu, count, offset);
  if (threadIdx.x % 32 == 0)
    atomicAdd(hits, (unsigned long long)count);
}

// Fills: non-trivial inputs made on the device (a hash of the index).
__global__ void fillUnit(float *p, long n, unsigned salt) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned h = (unsigned)i * 2654435761u + salt;
    h ^= h >> 15;
    p[i] = (h & 0xffffff) * (1.0f / (1 << 24));
  }
}

__global__ void fillBytes(uint8_t *p, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n)
    p[i] = i < n / 8 ? 7 : (uint8_t)(((unsigned)i * 2654435761u) >> 24);
}

__global__ void fillGrid(double *p, int n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < (long)n * n) {
    int y = (int)(i / n), x = (int)(i % n);
    p[i] = y == 0                                 ? 1.0
           : (y == n - 1 || x == 0 || x == n - 1) ? 0.0
                                                  : (double)((i * 7919) % 1000) / 1000.0;
  }
}

__global__ void fillBodies(float *p, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < 4 * n) {
    unsigned h = (unsigned)i * 2654435761u;
    h ^= h >> 13;
    float u = (h & 0xffffff) * (1.0f / (1 << 24));
    p[i] = i % 4 == 3 ? 0.5f + u : 2.0f * u - 1.0f;
  }
}

unsigned blocksFor(long n, int block) { return (unsigned)((n + block - 1) / block); }

struct Suite {
  std::string name;
  long n = 0, param = 0;
  std::vector<void *> buffers;
  cudaEvent_t start = nullptr, stop = nullptr;

  template <typename T> T *alloc(long count) {
    void *p = nullptr;
    if (!ok(cudaMalloc(&p, count * sizeof(T)), "cudaMalloc"))
      return nullptr;
    buffers.push_back(p);
    return static_cast<T *>(p);
  }
  ~Suite() {
    for (void *p : buffers)
      cudaFree(p);
    if (start)
      cudaEventDestroy(start);
    if (stop)
      cudaEventDestroy(stop);
  }
  bool setUp();
  void unit();
  double checksum();
};

bool Suite::setUp() {
  if (!ok(cudaEventCreate(&start), "cudaEventCreate") ||
      !ok(cudaEventCreate(&stop), "cudaEventCreate"))
    return false;
  if (name == "reduce") {
    float *x = alloc<float>(n), *out = alloc<float>(1);
    if (!x || !out)
      return false;
    fillUnit<<<blocksFor(n, 256), 256>>>(x, n, 1);
    return ok(cudaMemset(out, 0, sizeof(float)), "cudaMemset");
  }
  if (name == "matmul") {
    float *a = alloc<float>(n * n), *b = alloc<float>(n * n), *c = alloc<float>(n * n);
    if (!a || !b || !c)
      return false;
    fillUnit<<<blocksFor(n * n, 256), 256>>>(a, n * n, 2);
    fillUnit<<<blocksFor(n * n, 256), 256>>>(b, n * n, 3);
    return true;
  }
  if (name == "histogram") {
    uint8_t *d = alloc<uint8_t>(n);
    unsigned *bins = alloc<unsigned>(256);
    if (!d || !bins)
      return false;
    fillBytes<<<blocksFor(n, 256), 256>>>(d, n);
    return ok(cudaMemset(bins, 0, 256 * sizeof(unsigned)), "cudaMemset");
  }
  if (name == "transpose") {
    float *a = alloc<float>(n * n), *o = alloc<float>(n * n);
    if (!a || !o)
      return false;
    fillUnit<<<blocksFor(n * n, 256), 256>>>(a, n * n, 6);
    return true;
  }
  if (name == "jacobi") {
    double *a = alloc<double>(n * n), *b = alloc<double>(n * n);
    if (!a || !b)
      return false;
    fillGrid<<<blocksFor(n * n, 256), 256>>>(a, (int)n);
    fillGrid<<<blocksFor(n * n, 256), 256>>>(b, (int)n);
    return true;
  }
  if (name == "nbody") {
    if (n % NB_TILE) {
      lastError = "nbody: n must be a multiple of 256";
      return false;
    }
    float *p = alloc<float>(4 * n), *a = alloc<float>(3 * n);
    if (!p || !a)
      return false;
    fillBodies<<<blocksFor(4 * n, 256), 256>>>(p, n);
    return true;
  }
  if (name == "pi") {
    if (n % 256) {
      lastError = "pi: threads must be a multiple of 256";
      return false;
    }
    auto *states = alloc<ptxjit::runtime::Xoroshiro128pState>(n);
    auto *hits = alloc<unsigned long long>(1);
    if (!states || !hits)
      return false;
    std::vector<ptxjit::runtime::Xoroshiro128pState> first(n);
    ptxjit::runtime::initXoroshiro128pStates(first.data(), first.size(), kPiSeed, 0);
    return ok(cudaMemcpy(states, first.data(), n * sizeof(first[0]), cudaMemcpyHostToDevice),
              "cudaMemcpy") &&
           ok(cudaMemset(hits, 0, sizeof(*hits)), "cudaMemset");
  }
  lastError = "unknown workload " + name;
  return false;
}

// One timed unit, the same launches as workloads.make_case's run().
void Suite::unit() {
  auto f = [&](int i) { return static_cast<float *>(buffers[i]); };
  if (name == "reduce") {
    unsigned grid = (unsigned)std::max(1L, n / (kReduceBlock * kReduceItems));
    reduceSum<<<grid, kReduceBlock>>>(f(0), n, f(1));
  } else if (name == "matmul") {
    unsigned tiles = (unsigned)((n + TPB - 1) / TPB);
    fastMatmul<<<dim3(tiles, tiles), dim3(TPB, TPB)>>>(f(0), f(1), f(2), (int)n);
  } else if (name == "histogram") {
    unsigned grid = (unsigned)std::max(1L, n / (256 * kHistItems));
    histogram<<<grid, 256>>>(static_cast<uint8_t *>(buffers[0]), n,
                             static_cast<unsigned *>(buffers[1]));
  } else if (name == "transpose") {
    unsigned tiles = (unsigned)((n + TILE - 1) / TILE);
    transpose<<<dim3(tiles, tiles), dim3(TILE, ROWS)>>>(f(0), f(1), (int)n);
  } else if (name == "jacobi") {
    auto *a = static_cast<double *>(buffers[0]), *b = static_cast<double *>(buffers[1]);
    dim3 grid((unsigned)((n + 31) / 32), (unsigned)((n + 7) / 8));
    for (long s = 0; s < param; ++s)
      if (s % 2 == 0)
        jacobiStep<<<grid, dim3(32, 8)>>>(a, b, (int)n);
      else
        jacobiStep<<<grid, dim3(32, 8)>>>(b, a, (int)n);
  } else if (name == "nbody") {
    nbody<<<(unsigned)(n / NB_TILE), NB_TILE>>>(f(0), f(1), (int)n);
  } else if (name == "pi") {
    monteCarloPi<<<(unsigned)(n / 256), 256>>>(
        param, static_cast<ptxjit::runtime::Xoroshiro128pState *>(buffers[0]),
        static_cast<unsigned long long *>(buffers[1]));
  }
}

double Suite::checksum() {
  if (!ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize"))
    return NAN;
  // the first element of the output: enough to see that the twin computed something
  int which = name == "matmul" ? 2 : 1;
  double v = 0;
  if (name == "pi") {
    unsigned long long h = 0;
    ok(cudaMemcpy(&h, buffers[1], sizeof h, cudaMemcpyDeviceToHost), "cudaMemcpy");
    v = (double)h;
  } else if (name == "histogram") {
    unsigned h = 0;
    ok(cudaMemcpy(&h, buffers[1], sizeof h, cudaMemcpyDeviceToHost), "cudaMemcpy");
    v = h;
  } else if (name == "jacobi") {
    double d = 0;
    ok(cudaMemcpy(&d, static_cast<double *>(buffers[1]) + n + 1, sizeof d, cudaMemcpyDeviceToHost),
       "cudaMemcpy");
    v = d;
  } else {
    float x = 0;
    ok(cudaMemcpy(&x, buffers[which], sizeof x, cudaMemcpyDeviceToHost), "cudaMemcpy");
    v = x;
  }
  return v;
}

} // namespace

extern "C" {

const char *suite_last_error() { return lastError.c_str(); }

void *suite_open(const char *name, long n, long param) {
  if (!name || n < 1) {
    lastError = "suite_open: null name or n < 1";
    return nullptr;
  }
  auto *s = new Suite;
  s->name = name;
  s->n = n;
  s->param = param;
  if (!s->setUp() || !ok(cudaDeviceSynchronize(), "set-up")) {
    delete s;
    return nullptr;
  }
  return s;
}

double suite_sample_ms(void *h, int inner) {
  auto *s = static_cast<Suite *>(h);
  if (!s || inner < 1) {
    lastError = "suite_sample_ms: null handle or inner < 1";
    return -1;
  }
  if (!ok(cudaEventRecord(s->start), "cudaEventRecord"))
    return -1;
  for (int i = 0; i < inner; ++i)
    s->unit();
  float ms = 0;
  if (!ok(cudaEventRecord(s->stop), "cudaEventRecord") ||
      !ok(cudaEventSynchronize(s->stop), "cudaEventSynchronize") ||
      !ok(cudaGetLastError(), "launch") ||
      !ok(cudaEventElapsedTime(&ms, s->start, s->stop), "cudaEventElapsedTime"))
    return -1;
  return static_cast<double>(ms) / inner;
}

double suite_checksum(void *h) {
  auto *s = static_cast<Suite *>(h);
  return s ? s->checksum() : NAN;
}

double suite_copy_gbs(long bytes, int reps) {
  void *a = nullptr, *b = nullptr;
  if (!ok(cudaMalloc(&a, bytes), "cudaMalloc") || !ok(cudaMalloc(&b, bytes), "cudaMalloc"))
    return -1;
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<double> per;
  for (int r = 0; r < 8; ++r) { // the first is a warm-up
    cudaEventRecord(start);
    for (int i = 0; i < reps; ++i)
      cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    if (r > 0)
      per.push_back(ms / reps);
  }
  bool good = ok(cudaGetLastError(), "copy");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(a);
  cudaFree(b);
  if (!good)
    return -1;
  std::sort(per.begin(), per.end());
  return 2.0 * bytes / (per[per.size() / 2] * 1e6);
}

void suite_close(void *h) { delete static_cast<Suite *>(h); }

} // extern "C"
