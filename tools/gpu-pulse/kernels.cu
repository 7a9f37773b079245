// Load kernels for gpu-pulse. Every kernel computes something whose exact result is known, so a
// GPU that produces wrong answers under load is reported (like gpu-burn) instead of just
// looking busy. All inputs are small integers or halves, which every arithmetic used here
// represents and accumulates exactly, so checks compare with ==, not a tolerance.

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels.h"

namespace gpu_pulse {
namespace {

// First wrong value a kernel saw, plus how many there were.
struct Check {
  unsigned long long mismatches;
  unsigned long long index;
  double got;
  double want;
};

__device__ void Report(Check* check, unsigned long long index, double got, double want) {
  if (atomicAdd(&check->mismatches, 1ULL) == 0) {
    check->index = index;
    check->got = got;
    check->want = want;
  }
}

// ---- fp32 / fp64: independent FMA chains per thread -------------------------------------------

constexpr int kChains = 8;     // Independent chains hide FMA latency.
constexpr int kSample = 1024;  // Threads whose sums the host re-checks.
constexpr int kScalarThreads = 256;

__device__ __forceinline__ float Fma(float x, float a, float b) { return __fmaf_rn(x, a, b); }
__device__ __forceinline__ double Fma(double x, double a, double b) { return __fma_rn(x, a, b); }

// Chain start values depend on the thread and the launch's seed, so a stale or skipped result
// never matches.
__host__ __device__ inline uint32_t ChainStart(uint64_t thread, uint32_t seed, int chain) {
  return static_cast<uint32_t>((thread * 7 + seed + chain * 131) & 1023);
}

// x <- x * a + b with a == 1 and b == 0.5: after n steps x == x0 + n / 2 exactly (kept below
// 2^23 by the host's choice of n). a and b are arguments, so the compiler cannot fold the chain.
template <typename T>
__global__ void __launch_bounds__(kScalarThreads)
    FmaKernel(T a, T b, int iters, uint32_t seed, T* sample, Check* check) {
  const uint64_t thread = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  T x[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) x[c] = static_cast<T>(ChainStart(thread, seed, c));
#pragma unroll 4
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) x[c] = Fma(x[c], a, b);
  }
  T sum = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) {
    const T want = static_cast<T>(ChainStart(thread, seed, c)) + static_cast<T>(iters) * b;
    if (x[c] != want) Report(check, thread * kChains + c, x[c], want);
    sum += x[c];
  }
  if (thread < kSample) sample[thread] = sum;
}

// ---- tensor: WMMA 16x16x16, fp16 inputs, fp32 accumulators ------------------------------------

constexpr int kTile = 16;
constexpr int kTileElems = kTile * kTile;
constexpr int kTensorAccs = 8;  // Independent accumulators keep the tensor pipe fed.
constexpr int kTensorWarps = 4;
constexpr int kTensorThreads = kTensorWarps * 32;

// Every warp computes sum_k (C0 + iters * A*B) over kTensorAccs accumulators and compares it
// element by element with the host's reference; warp 0 also hands its tile back.
__global__ void __launch_bounds__(kTensorThreads)
    TensorKernel(const half* a_in, const half* b_in, const float* c0, const float* want, int iters,
                 float* sample, Check* check) {
  using namespace nvcuda;
  __shared__ float tile[kTensorWarps][kTileElems];
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const uint64_t global_warp = blockIdx.x * static_cast<uint64_t>(kTensorWarps) + warp;

  wmma::fragment<wmma::matrix_a, kTile, kTile, kTile, half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, kTile, kTile, kTile, half, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, kTile, kTile, kTile, float> acc[kTensorAccs];
  wmma::load_matrix_sync(a, a_in, kTile);
  wmma::load_matrix_sync(b, b_in, kTile);
#pragma unroll
  for (int k = 0; k < kTensorAccs; ++k)
    wmma::load_matrix_sync(acc[k], c0, kTile, wmma::mem_row_major);
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < kTensorAccs; ++k) wmma::mma_sync(acc[k], a, b, acc[k]);
  }
  // Accumulator fragments share one layout, so element-wise sums are element-wise on the tile.
#pragma unroll
  for (int k = 1; k < kTensorAccs; ++k) {
    for (int e = 0; e < acc[0].num_elements; ++e) acc[0].x[e] += acc[k].x[e];
  }
  wmma::store_matrix_sync(tile[warp], acc[0], kTile, wmma::mem_row_major);
  __syncwarp();
  for (int e = lane; e < kTileElems; e += 32) {
    const float got = tile[warp][e];
    if (got != want[e]) Report(check, global_warp * kTileElems + e, got, want[e]);
    if (global_warp == 0) sample[e] = got;
  }
}

// ---- memory: STREAM triad a = b + s * c over float4 -------------------------------------------

constexpr int kMemThreads = 256;

__host__ __device__ inline float TriadB(uint64_t i) { return static_cast<float>(i & 1023); }
__host__ __device__ inline float TriadC(uint64_t i) { return static_cast<float>(i % 7); }

__global__ void TriadInit(float* b, float* c, uint64_t n) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    b[i] = TriadB(i);
    c[i] = TriadC(i);
  }
}

__global__ void __launch_bounds__(kMemThreads)
    Triad(float4* __restrict__ a, const float4* __restrict__ b, const float4* __restrict__ c,
          float s, uint64_t n4) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const float4 x = b[i];
    const float4 y = c[i];
    a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
  }
}

// Recomputes the triad from the index alone (integer pipe), so it is independent of b and c.
__global__ void __launch_bounds__(kMemThreads)
    TriadVerify(const float4* __restrict__ a, float s, uint64_t n4, Check* check) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const float4 v = a[i];
    const float got[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const uint64_t e = i * 4 + j;
      const float want = TriadB(e) + s * TriadC(e);
      if (got[j] != want) Report(check, e, got[j], want);
    }
  }
}

// ---- host side ---------------------------------------------------------------------------------

std::string CudaError(const char* what, cudaError_t e) {
  return std::string(what) + " failed: " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
}

#define PULSE_CUDA(call)                                      \
  do {                                                        \
    cudaError_t e_ = (call);                                  \
    if (e_ != cudaSuccess) return Fail(CudaError(#call, e_)); \
  } while (0)

using Clock = std::chrono::steady_clock;

class Load final : public DeviceLoad {
 public:
  Load(int device, Mode mode, double target_seconds, double memory_gib)
      : device_(device), mode_(mode), target_(target_seconds), memory_gib_(memory_gib) {}

  ~Load() override {
    // Errors are ignored here: after a failed kernel the context may be unusable, and nothing
    // useful can be done about a failed free on the way out.
    for (void* p : {static_cast<void*>(check_), static_cast<void*>(sample_), bufs_[0], bufs_[1],
                    bufs_[2], bufs_[3], bufs_[4]}) {
      if (p != nullptr) cudaFree(p);
    }
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  bool Init(std::string* error) {
    BatchResult r = Setup();
    if (r.status != BatchStatus::kOk) {
      *error = r.message;
      return false;
    }
    return true;
  }

  std::string Description() const override {
    char buf[256];
    if (mode_ == Mode::kMemory) {
      std::snprintf(buf, sizeof(buf), "%s, triad over 3 x %.2f GiB", name_.c_str(),
                    static_cast<double>(n_) * 4 / (1ull << 30));
    } else {
      std::snprintf(buf, sizeof(buf), "%s, %d SMs", name_.c_str(), sms_);
    }
    return buf;
  }

  BatchResult RunBatch() override {
    const auto t0 = Clock::now();
    BatchResult r;
    switch (mode_) {
      case Mode::kFp32:
        r = ScalarBatch<float>(1 << 16);
        break;
      case Mode::kFp64:
        r = ScalarBatch<double>(1 << 14);
        break;
      case Mode::kTensor:
        r = TensorBatch();
        break;
      case Mode::kMemory:
        r = MemoryBatch();
        break;
    }
    if (r.status != BatchStatus::kOk) return r;
    r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    // Steer the next batch towards the target time; clamped so one odd batch (a clock ramp,
    // a preemption) cannot swing it far.
    const double scale = std::clamp(target_ / std::max(r.seconds, 1e-6), 0.25, 4.0);
    size_ = std::max<double>(min_size_, std::min<double>(size_ * scale, max_size_));
    ++batches_;
    return r;
  }

 private:
  static BatchResult Fail(std::string message, BatchStatus status = BatchStatus::kCudaError) {
    BatchResult r;
    r.status = status;
    r.message = std::move(message);
    return r;
  }

  BatchResult Setup() {
    PULSE_CUDA(cudaSetDevice(device_));
    cudaDeviceProp prop;
    PULSE_CUDA(cudaGetDeviceProperties(&prop, device_));
    name_ = prop.name;
    sms_ = prop.multiProcessorCount;
    PULSE_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    PULSE_CUDA(cudaMalloc(reinterpret_cast<void**>(&check_), sizeof(Check)));
    PULSE_CUDA(cudaMalloc(reinterpret_cast<void**>(&sample_), kSample * sizeof(double)));
    switch (mode_) {
      case Mode::kFp32:
      case Mode::kFp64:
        // size_ counts blocks; start with a few per SM and let RunBatch find the target time.
        size_ = min_size_ = sms_;
        size_ *= 4;
        max_size_ = 1u << 30;
        break;
      case Mode::kTensor:
        PULSE_CUDA(cudaMalloc(&bufs_[0], kTileElems * sizeof(half)));
        PULSE_CUDA(cudaMalloc(&bufs_[1], kTileElems * sizeof(half)));
        PULSE_CUDA(cudaMalloc(&bufs_[2], kTileElems * sizeof(float)));
        PULSE_CUDA(cudaMalloc(&bufs_[3], kTileElems * sizeof(float)));
        size_ = min_size_ = sms_;
        size_ *= 8;
        max_size_ = 1u << 30;
        break;
      case Mode::kMemory: {
        // Three arrays share the budget; a multiple of 4 floats keeps float4 access aligned.
        n_ = static_cast<uint64_t>(memory_gib_ * (1ull << 30) / 3 / sizeof(float)) & ~3ull;
        if (n_ < 4096) return Fail("--memory-gib is too small");
        for (int i = 0; i < 3; ++i) PULSE_CUDA(cudaMalloc(&bufs_[i], n_ * sizeof(float)));
        TriadInit<<<sms_ * 8, kMemThreads, 0, stream_>>>(static_cast<float*>(bufs_[1]),
                                                         static_cast<float*>(bufs_[2]), n_);
        PULSE_CUDA(cudaGetLastError());
        PULSE_CUDA(cudaStreamSynchronize(stream_));
        size_ = min_size_ = 1;  // size_ counts triad launches per batch.
        max_size_ = 100000;
        break;
      }
    }
    return {};
  }

  BatchResult StartCheck() {
    PULSE_CUDA(cudaMemsetAsync(check_, 0, sizeof(Check), stream_));
    return {};
  }

  // Waits for the batch and reads back the device-side check.
  BatchResult FinishCheck(Check* check) {
    PULSE_CUDA(cudaGetLastError());
    PULSE_CUDA(cudaMemcpyAsync(check, check_, sizeof(Check), cudaMemcpyDeviceToHost, stream_));
    PULSE_CUDA(cudaStreamSynchronize(stream_));
    return {};
  }

  static BatchResult Mismatch(const char* what, const Check& c) {
    char buf[256];
    std::snprintf(buf, sizeof(buf),
                  "%s: %llu wrong values, first at element %llu: got %.17g, want %.17g", what,
                  c.mismatches, c.index, c.got, c.want);
    return Fail(buf, BatchStatus::kMismatch);
  }

  template <typename T>
  BatchResult ScalarBatch(int iters) {
    const uint32_t seed = static_cast<uint32_t>(batches_ * 2654435761u);
    const unsigned blocks = static_cast<unsigned>(size_);
    const T b = static_cast<T>(0.5);
    if (auto r = StartCheck(); r.status != BatchStatus::kOk) return r;
    FmaKernel<T><<<blocks, kScalarThreads, 0, stream_>>>(static_cast<T>(1), b, iters, seed,
                                                         static_cast<T*>(sample_), check_);
    Check check;
    if (auto r = FinishCheck(&check); r.status != BatchStatus::kOk) return r;
    if (check.mismatches != 0) return Mismatch(sizeof(T) == 4 ? "fp32 FMA" : "fp64 FMA", check);
    // Independent re-check of a slice on the CPU.
    std::vector<T> sample(kSample);
    PULSE_CUDA(cudaMemcpy(sample.data(), sample_, kSample * sizeof(T), cudaMemcpyDeviceToHost));
    for (uint64_t t = 0; t < kSample; ++t) {
      double want = 0;
      for (int c = 0; c < kChains; ++c) want += ChainStart(t, seed, c) + 0.5 * iters;
      if (static_cast<double>(sample[t]) != want) {
        return Mismatch("FMA sample vs CPU", Check{1, t, static_cast<double>(sample[t]), want});
      }
    }
    BatchResult r;
    r.work = 2.0 * kChains * iters * static_cast<double>(blocks) * kScalarThreads;
    r.kernels = 1;
    return r;
  }

  BatchResult TensorBatch() {
    constexpr int kIters = 2048;
    const uint32_t seed = static_cast<uint32_t>(batches_);
    // Entries 0..3: every product and partial sum is a small integer, exact in fp16 x fp16 -> fp32.
    // Max per element: 8 * (3 + 2048 * 16 * 9) < 2^24.
    std::vector<half> a(kTileElems), b(kTileElems);
    std::vector<float> af(kTileElems), bf(kTileElems), c0(kTileElems), want(kTileElems);
    for (int i = 0; i < kTileElems; ++i) {
      af[i] = static_cast<float>((i * 5 + seed) % 4);
      bf[i] = static_cast<float>((i * 3 + seed / 4 + 1) % 4);
      c0[i] = static_cast<float>((i + seed) % 4);
      a[i] = __float2half(af[i]);
      b[i] = __float2half(bf[i]);
    }
    for (int row = 0; row < kTile; ++row) {
      for (int col = 0; col < kTile; ++col) {
        double dot = 0;  // A is row-major, B column-major (element (k, col) at col * 16 + k).
        for (int k = 0; k < kTile; ++k) dot += af[row * kTile + k] * bf[col * kTile + k];
        want[row * kTile + col] =
            static_cast<float>(kTensorAccs * (c0[row * kTile + col] + kIters * dot));
      }
    }
    PULSE_CUDA(cudaMemcpyAsync(bufs_[0], a.data(), kTileElems * sizeof(half),
                               cudaMemcpyHostToDevice, stream_));
    PULSE_CUDA(cudaMemcpyAsync(bufs_[1], b.data(), kTileElems * sizeof(half),
                               cudaMemcpyHostToDevice, stream_));
    PULSE_CUDA(cudaMemcpyAsync(bufs_[2], c0.data(), kTileElems * sizeof(float),
                               cudaMemcpyHostToDevice, stream_));
    PULSE_CUDA(cudaMemcpyAsync(bufs_[3], want.data(), kTileElems * sizeof(float),
                               cudaMemcpyHostToDevice, stream_));
    if (auto r = StartCheck(); r.status != BatchStatus::kOk) return r;
    const unsigned blocks = static_cast<unsigned>(size_);
    TensorKernel<<<blocks, kTensorThreads, 0, stream_>>>(
        static_cast<const half*>(bufs_[0]), static_cast<const half*>(bufs_[1]),
        static_cast<const float*>(bufs_[2]), static_cast<const float*>(bufs_[3]), kIters,
        static_cast<float*>(sample_), check_);
    Check check;
    if (auto r = FinishCheck(&check); r.status != BatchStatus::kOk) return r;
    if (check.mismatches != 0) return Mismatch("tensor WMMA", check);
    std::vector<float> sample(kTileElems);
    PULSE_CUDA(
        cudaMemcpy(sample.data(), sample_, kTileElems * sizeof(float), cudaMemcpyDeviceToHost));
    for (int e = 0; e < kTileElems; ++e) {
      if (sample[e] != want[e])
        return Mismatch("WMMA tile vs CPU",
                        Check{1, static_cast<unsigned long long>(e), sample[e], want[e]});
    }
    BatchResult r;
    r.work = 2.0 * kTile * kTile * kTile * kTensorAccs * kIters * static_cast<double>(blocks) *
             kTensorWarps;
    r.kernels = 1;
    return r;
  }

  BatchResult MemoryBatch() {
    const int launches = static_cast<int>(size_);
    const uint64_t n4 = n_ / 4;
    const unsigned blocks = static_cast<unsigned>(sms_ * 8);
    auto* a = static_cast<float4*>(bufs_[0]);
    float s = 1;
    if (auto r = StartCheck(); r.status != BatchStatus::kOk) return r;
    for (int i = 0; i < launches; ++i) {
      // s changes every launch, so each launch's output differs from the previous one's.
      s = static_cast<float>(1 + (batches_ + i) % 8);
      Triad<<<blocks, kMemThreads, 0, stream_>>>(a, static_cast<const float4*>(bufs_[1]),
                                                 static_cast<const float4*>(bufs_[2]), s, n4);
    }
    TriadVerify<<<blocks, kMemThreads, 0, stream_>>>(a, s, n4, check_);
    Check check;
    if (auto r = FinishCheck(&check); r.status != BatchStatus::kOk) return r;
    if (check.mismatches != 0) return Mismatch("memory triad", check);
    // CPU re-check of a slice that moves through the array from batch to batch.
    constexpr uint64_t kSlice = 1024;
    const uint64_t offset = (batches_ * 1000003ull * kSlice) % (n_ - kSlice) & ~3ull;
    std::vector<float> slice(kSlice);
    PULSE_CUDA(cudaMemcpy(slice.data(), static_cast<float*>(bufs_[0]) + offset,
                          kSlice * sizeof(float), cudaMemcpyDeviceToHost));
    for (uint64_t i = 0; i < kSlice; ++i) {
      const float want = TriadB(offset + i) + s * TriadC(offset + i);
      if (slice[i] != want)
        return Mismatch("triad slice vs CPU", Check{1, offset + i, slice[i], want});
    }
    BatchResult r;
    // Triad reads b and c and writes a; the verify pass reads a once more.
    r.work = (3.0 * launches + 1.0) * static_cast<double>(n_) * sizeof(float);
    r.kernels = launches + 1;
    return r;
  }

  const int device_;
  const Mode mode_;
  const double target_;
  const double memory_gib_;
  std::string name_;
  int sms_ = 0;
  cudaStream_t stream_ = nullptr;
  Check* check_ = nullptr;
  void* sample_ = nullptr;
  void* bufs_[5] = {};
  uint64_t n_ = 0;  // Floats per memory-mode array.
  double size_ = 1, min_size_ = 1, max_size_ = 1;
  uint64_t batches_ = 0;
};

}  // namespace

int CudaDeviceCount(std::string* error) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    *error = CudaError("cudaGetDeviceCount", e);
    return 0;
  }
  if (count == 0) *error = "cudaGetDeviceCount reported 0 devices";
  return count;
}

std::unique_ptr<DeviceLoad> CreateDeviceLoad(int device, Mode mode, double target_seconds,
                                             double memory_gib, std::string* error) {
  auto load = std::make_unique<Load>(device, mode, target_seconds, memory_gib);
  if (!load->Init(error)) return nullptr;
  return load;
}

}  // namespace gpu_pulse
