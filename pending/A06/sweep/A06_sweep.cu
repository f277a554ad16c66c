// A06 exploration: the double-buffered warp-tiled SGEMM of labs/A06/cuda/sgemm.cu as one template over
// its tiles and four switches, each config checked against cuBLAS (fp32, no TF32) on a random 4096^3
// problem and timed like today's kit's tutor::median_ms (3 warm-ups, 10 reps, L2 flushed, queue-ahead;
// restated below), beside cuBLAS.
// Built in NPARTS translation units (-DPART=i) so that nvcc runs in parallel.
//   FRAG: register double-buffering of the shared->register fragment loads (the next k's float4 reads
//         are issued before the current k's FMAs; the next stage's k = 0 right after the barrier).
//   AMAP: the A tile's global->shared mapping: 0 = as in the lab (a warp covers 8 rows x 4 float4 of k,
//         2-way conflicted transposed stores at BK = 16, 4-way at 32), 1 = a warp covers 16 rows x
//         2 float4 (one 32-byte sector per row; its transposed stores hit 32 banks at any BK; the
//         same mapping as 0 at BK = 8).
//   SWZ:  0 = row-major block order, G > 0 = grouped rasterization, G block-rows per group.
//   EDGE: 1 = bounds checks as in the lab, 0 = none (only valid on multiples of the tile; 4096 is).
#include "tutor_lab.cuh"

#include <cublas_v2.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#ifndef PART
#define PART 0
#endif
#ifndef NPARTS
#define NPARTS 1
#endif

constexpr int kPad = 4;
constexpr int kGroup = 32;

__device__ __forceinline__ float4 load4(const float* row, int col, int cols, bool aligned) {
  if (aligned && col + 3 < cols) return *reinterpret_cast<const float4*>(row + col);
  float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
  if (col + 0 < cols) v.x = row[col + 0];
  if (col + 1 < cols) v.y = row[col + 1];
  if (col + 2 < cols) v.z = row[col + 2];
  if (col + 3 < cols) v.w = row[col + 3];
  return v;
}
__device__ __forceinline__ void store4(float* row, int col, int cols, bool aligned, float4 v) {
  if (aligned && col + 3 < cols) {
    *reinterpret_cast<float4*>(row + col) = v;
    return;
  }
  if (col + 0 < cols) row[col + 0] = v.x;
  if (col + 1 < cols) row[col + 1] = v.y;
  if (col + 2 < cols) row[col + 2] = v.z;
  if (col + 3 < cols) row[col + 3] = v.w;
}
__device__ __forceinline__ void unpack(float4 v, float* r) {
  r[0] = v.x;
  r[1] = v.y;
  r[2] = v.z;
  r[3] = v.w;
}

template <int BM, int BN, int BK, int WM, int WN, int WMI, int WNI, int MINB, int FRAG, int AMAP, int SWZ, int EDGE>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * kGroup, MINB)
tiled(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
  constexpr int kThreads = (BM / WM) * (BN / WN) * kGroup;
  constexpr int SM = WM / WMI, SN = WN / WNI;
  constexpr int LM = SM / 4, LN = SN / 4;
  static_assert(LM * LN == kGroup, "a sub-tile is 32 lanes of 4 x 4");
  constexpr int kLoadA = BM * BK / 4 / kThreads, kLoadB = BK * BN / 4 / kThreads;
  static_assert(kLoadA * kThreads * 4 == BM * BK && kLoadB * kThreads * 4 == BK * BN, "tiles split evenly");
  static_assert(AMAP == 0 || (BM % 16 == 0 && BK % 8 == 0), "AMAP 1: 16 rows x 8 floats per warp");

  extern __shared__ float4 smem4[];
  float(*As)[BK][BM + kPad] = reinterpret_cast<float(*)[BK][BM + kPad]>(smem4);
  float(*Bs)[BK][BN] = reinterpret_cast<float(*)[BK][BN]>(reinterpret_cast<float*>(smem4) + 2 * BK * (BM + kPad));

  const int t = threadIdx.x, lane = t % kGroup, w = t / kGroup;
  const int wm = (w / (BN / WN)) * WM, wn = (w % (BN / WN)) * WN;
  const int lm = (lane / LN) * 4, ln = (lane % LN) * 4;
  int bx = blockIdx.x, by = blockIdx.y;
  if constexpr (SWZ > 0) {
    // Grouped order: consecutive blocks walk down SWZ block-rows of one block-column, then the next.
    const int gx = gridDim.x, gy = gridDim.y;
    const int id = by * gx + bx;
    const int per_group = SWZ * gx;
    const int g = id / per_group, first = g * SWZ;
    const int rows = min(gy - first, SWZ);
    by = first + (id % per_group) % rows;
    bx = (id % per_group) / rows;
  }
  const int m0 = by * BM, n0 = bx * BN;
  const bool vecA = K % 4 == 0, vecB = N % 4 == 0;

  auto a_rc = [&](int l, int& r, int& c) {
    const int idx = t + l * kThreads;
    if constexpr (AMAP == 0) {
      r = idx / (BK / 4), c = (idx % (BK / 4)) * 4;
    } else {
      // Pairs of lanes take one row's 8 floats (one 32-byte sector), 16 rows per warp.
      const int g = idx / kGroup, h = idx % kGroup;
      r = (g % (BM / 16)) * 16 + h / 2, c = ((g / (BM / 16)) * 2 + h % 2) * 4;
    }
  };

  float4 pa[kLoadA], pb[kLoadB];
  auto load_global = [&](int k0) {
#pragma unroll
    for (int l = 0; l < kLoadA; ++l) {
      int r, c;
      a_rc(l, r, c);
      if constexpr (EDGE)
        pa[l] = m0 + r < M ? load4(A + (size_t)(m0 + r) * K, k0 + c, K, vecA) : make_float4(0.f, 0.f, 0.f, 0.f);
      else
        pa[l] = *reinterpret_cast<const float4*>(A + (size_t)(m0 + r) * K + k0 + c);
    }
#pragma unroll
    for (int l = 0; l < kLoadB; ++l) {
      const int idx = t + l * kThreads, r = idx / (BN / 4), c = (idx % (BN / 4)) * 4;
      if constexpr (EDGE)
        pb[l] = k0 + r < K ? load4(B + (size_t)(k0 + r) * N, n0 + c, N, vecB) : make_float4(0.f, 0.f, 0.f, 0.f);
      else
        pb[l] = *reinterpret_cast<const float4*>(B + (size_t)(k0 + r) * N + n0 + c);
    }
  };
  auto store_shared = [&](int s) {
#pragma unroll
    for (int l = 0; l < kLoadA; ++l) {
      int r, c;
      a_rc(l, r, c);
      As[s][c + 0][r] = pa[l].x;
      As[s][c + 1][r] = pa[l].y;
      As[s][c + 2][r] = pa[l].z;
      As[s][c + 3][r] = pa[l].w;
    }
#pragma unroll
    for (int l = 0; l < kLoadB; ++l) {
      const int idx = t + l * kThreads, r = idx / (BN / 4), c = (idx % (BN / 4)) * 4;
      *reinterpret_cast<float4*>(&Bs[s][r][c]) = pb[l];
    }
  };

  float acc[4 * WMI][4 * WNI] = {};
  float a[2][4 * WMI], b[2][4 * WNI];
  auto load_frag = [&](int s, int k, int f) {
#pragma unroll
    for (int i = 0; i < WMI; ++i) unpack(*reinterpret_cast<const float4*>(&As[s][k][wm + i * SM + lm]), &a[f][4 * i]);
#pragma unroll
    for (int j = 0; j < WNI; ++j) unpack(*reinterpret_cast<const float4*>(&Bs[s][k][wn + j * SN + ln]), &b[f][4 * j]);
  };
  auto fma = [&](int f) {
#pragma unroll
    for (int x = 0; x < 4 * WMI; ++x)
#pragma unroll
      for (int y = 0; y < 4 * WNI; ++y) acc[x][y] += a[f][x] * b[f][y];
  };

  const int steps = (K + BK - 1) / BK;
  load_global(0);
  store_shared(0);
  __syncthreads();
  if constexpr (FRAG) {
    load_frag(0, 0, 0);
    for (int s = 0; s < steps; ++s) {
      const int cur = s % 2;
      const bool more = s + 1 < steps;
      if (more) load_global((s + 1) * BK);
#pragma unroll
      for (int k = 0; k < BK; ++k) {
        if (k + 1 < BK) {
          load_frag(cur, k + 1, (k + 1) % 2);
        } else if (more) {
          // Buffer cur ^ 1 was last read in step s - 1, before the barrier that ended it.
          store_shared(cur ^ 1);
          __syncthreads();
          load_frag(cur ^ 1, 0, 0);  // BK is even: the next step's k = 0 uses fragment 0
        }
        fma(k % 2);
      }
    }
  } else {
    for (int s = 0; s < steps; ++s) {
      const int cur = s % 2;
      if (s + 1 < steps) load_global((s + 1) * BK);
#pragma unroll
      for (int k = 0; k < BK; ++k) {
        load_frag(cur, k, 0);
        fma(0);
      }
      if (s + 1 < steps) store_shared(cur ^ 1);
      __syncthreads();
    }
  }

#pragma unroll
  for (int i = 0; i < WMI; ++i)
#pragma unroll
    for (int x = 0; x < 4; ++x) {
      const int row = m0 + wm + i * SM + lm + x;
      if (EDGE && row >= M) continue;
#pragma unroll
      for (int j = 0; j < WNI; ++j) {
        const float* v = &acc[4 * i + x][4 * j];
        if constexpr (EDGE)
          store4(C + (size_t)row * N, n0 + wn + j * SN + ln, N, vecB, make_float4(v[0], v[1], v[2], v[3]));
        else
          *reinterpret_cast<float4*>(C + (size_t)row * N + n0 + wn + j * SN + ln) = make_float4(v[0], v[1], v[2], v[3]);
      }
    }
}

using Launch = void (*)(const float*, const float*, float*, int, int, int);
struct Config {
  std::string name;
  Launch launch;
  bool edge;  // bounds-checked: also checked on ragged shapes
};
std::vector<Config> configs;

template <int BM, int BN, int BK, int WM, int WN, int WMI, int WNI, int MINB, int FRAG, int AMAP, int SWZ, int EDGE>
void launch_cfg(const float* A, const float* B, float* C, int M, int N, int K) {
  constexpr int threads = (BM / WM) * (BN / WN) * kGroup;
  constexpr int smem = 2 * BK * (BM + kPad + BN) * (int)sizeof(float);
  auto kernel = tiled<BM, BN, BK, WM, WN, WMI, WNI, MINB, FRAG, AMAP, SWZ, EDGE>;
  static bool opted_in = false;
  if (!opted_in) {
    TUTOR_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    opted_in = true;
  }
  kernel<<<dim3((N + BN - 1) / BN, (M + BM - 1) / BM), threads, smem>>>(A, B, C, M, N, K);
}

template <int IDX, int BM, int BN, int BK, int WM, int WN, int WMI, int WNI, int MINB, int FRAG, int AMAP, int SWZ, int EDGE>
void add() {
  if constexpr (IDX % NPARTS == PART) {
    char name[160];
    std::snprintf(name, sizeof name, "c%02d_%dx%dx%d_w%dx%d_t%dx%d_thr%d_b%d_frag%d_amap%d_swz%d_edge%d", IDX, BM, BN, BK, WM, WN,
                  4 * WMI, 4 * WNI, (BM / WM) * (BN / WN) * kGroup, MINB, FRAG, AMAP, SWZ, EDGE);
    configs.push_back({name, launch_cfg<BM, BN, BK, WM, WN, WMI, WNI, MINB, FRAG, AMAP, SWZ, EDGE>, EDGE != 0});
  }
}

// IDX, BM, BN, BK, WM, WN, WMI, WNI, MINB, FRAG, AMAP, SWZ, EDGE
void add_all() {
  // The lab's current best and its 1-switch neighbours.
  add<0, 128, 256, 16, 64, 64, 2, 4, 1, 0, 0, 0, 1>();  // = lab cand_128x256x16_w64x64_b1
  add<1, 128, 256, 16, 64, 64, 2, 4, 1, 1, 0, 0, 1>();
  add<2, 128, 256, 16, 64, 64, 2, 4, 1, 0, 1, 0, 1>();
  add<3, 128, 256, 16, 64, 64, 2, 4, 1, 0, 0, 8, 1>();
  add<4, 128, 256, 16, 64, 64, 2, 4, 1, 0, 0, 0, 0>();
  // Combined switches on 128 x 256 x 16.
  add<5, 128, 256, 16, 64, 64, 2, 4, 1, 1, 1, 0, 1>();
  add<6, 128, 256, 16, 64, 64, 2, 4, 1, 1, 1, 8, 1>();
  add<7, 128, 256, 16, 64, 64, 2, 4, 1, 1, 1, 0, 0>();
  add<8, 128, 256, 16, 64, 64, 2, 4, 1, 1, 1, 8, 0>();
  add<9, 128, 256, 16, 64, 64, 2, 4, 1, 1, 0, 8, 1>();
  add<10, 128, 256, 16, 64, 64, 2, 4, 1, 1, 1, 16, 1>();
  add<11, 128, 256, 16, 64, 64, 2, 4, 1, 1, 1, 4, 1>();
  // Warp tile 32 x 128 / 128 x 32 shapes of the same block tile (same 8 x 16 thread tile).
  add<12, 128, 256, 16, 32, 128, 1, 8, 1, 1, 1, 0, 1>();
  add<13, 128, 256, 16, 64, 64, 4, 2, 1, 1, 1, 0, 1>();  // 16 x 8 thread tile
  // 256 x 128 x 16.
  add<14, 256, 128, 16, 64, 64, 2, 4, 1, 1, 1, 0, 1>();
  add<15, 256, 128, 16, 64, 64, 4, 2, 1, 1, 1, 0, 1>();
  add<16, 256, 128, 16, 64, 64, 2, 4, 1, 0, 0, 0, 1>();
  // BK = 8 and BK = 32 with the switches.
  add<17, 128, 256, 8, 64, 64, 2, 4, 1, 1, 1, 0, 1>();
  add<18, 128, 256, 8, 64, 64, 2, 4, 1, 1, 0, 0, 1>();
  add<19, 128, 256, 32, 64, 64, 2, 4, 1, 1, 1, 0, 1>();
  add<20, 128, 256, 32, 64, 64, 2, 4, 1, 0, 1, 0, 1>();
  // 128 x 128 tiles, 8 x 8 per thread, 256 threads, two blocks per SM.
  add<21, 128, 128, 16, 64, 32, 2, 2, 2, 1, 1, 0, 1>();
  add<22, 128, 128, 8, 64, 32, 2, 2, 2, 1, 1, 0, 1>();
  add<23, 128, 128, 16, 64, 32, 2, 2, 1, 1, 1, 0, 1>();
  add<24, 128, 128, 8, 64, 32, 2, 2, 2, 0, 0, 0, 1>();  // = lab double_buffered
  add<25, 128, 128, 16, 32, 64, 2, 2, 2, 1, 1, 0, 1>();
  // 128 x 128 tiles, 8 x 16 per thread, 128 threads, two blocks per SM.
  add<26, 128, 128, 16, 64, 64, 2, 4, 2, 1, 1, 0, 1>();
  add<27, 128, 128, 8, 64, 64, 2, 4, 2, 1, 1, 0, 1>();
  add<28, 128, 128, 16, 64, 64, 2, 4, 2, 0, 0, 0, 1>();
  add<29, 128, 128, 16, 64, 64, 4, 2, 2, 1, 1, 0, 1>();
  add<30, 128, 128, 32, 64, 64, 2, 4, 2, 1, 1, 0, 1>();
  // 256 x 128 / 128 x 256 with 8 x 8 per thread, 512 threads, one block per SM (128 registers).
  add<31, 128, 256, 16, 64, 32, 2, 2, 1, 1, 1, 0, 1>();
  add<32, 256, 128, 16, 64, 32, 2, 2, 1, 1, 1, 0, 1>();
  add<33, 128, 256, 16, 32, 64, 2, 2, 1, 1, 1, 0, 1>();
  // 64 x 256 / 256 x 64 with 128 threads.
  add<34, 64, 256, 16, 64, 64, 2, 4, 2, 1, 1, 0, 1>();
  add<35, 256, 64, 16, 64, 64, 2, 4, 2, 1, 1, 0, 1>();
  // Grouped rasterization on the smaller tiles.
  add<36, 128, 128, 16, 64, 64, 2, 4, 2, 1, 1, 8, 1>();
  add<37, 128, 128, 16, 64, 32, 2, 2, 2, 1, 1, 8, 1>();
  // Unchecked versions of the smaller tiles.
  add<38, 128, 128, 16, 64, 64, 2, 4, 2, 1, 1, 0, 0>();
  add<39, 256, 128, 16, 64, 64, 2, 4, 1, 1, 1, 0, 0>();
}


// The timer of today's kit (labs/common tutor::times_ms), restated here so that this file builds
// with either version of the kit header: the L2 overwritten before every run outside its window,
// a spinning kernel holding the stream while all runs are enqueued, one event pair per run, the
// median of the runs (the mean of the middle two for an even count).
__global__ void sweep_hold(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}
void sweep_flush() {
  static void* buf = nullptr;
  static size_t bytes = 0;
  if (!buf) {
    int dev = 0, l2 = 0;
    TUTOR_CHECK(cudaGetDevice(&dev));
    TUTOR_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    bytes = 2 * (size_t)(l2 > 0 ? l2 : 128 << 20);
    TUTOR_CHECK(cudaMalloc(&buf, bytes));
  }
  TUTOR_CHECK(cudaMemsetAsync(buf, 0, bytes));
}
template <class F>
double sweep_median_ms(F&& launch, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) {
    sweep_flush();
    launch();
  }
  TUTOR_CHECK(cudaDeviceSynchronize());
  std::vector<cudaEvent_t> a(reps), b(reps);
  for (int i = 0; i < reps; ++i) {
    TUTOR_CHECK(cudaEventCreate(&a[i]));
    TUTOR_CHECK(cudaEventCreate(&b[i]));
  }
  sweep_hold<<<1, 1>>>((long long)(20.0 * 2e6));  // 20 ms: longer than enqueueing 10 runs
  for (int i = 0; i < reps; ++i) {
    sweep_flush();
    TUTOR_CHECK(cudaEventRecord(a[i]));
    launch();
    TUTOR_CHECK(cudaEventRecord(b[i]));
  }
  TUTOR_CHECK(cudaDeviceSynchronize());
  std::vector<float> t(reps);
  for (int i = 0; i < reps; ++i) {
    TUTOR_CHECK(cudaEventElapsedTime(&t[i], a[i], b[i]));
    TUTOR_CHECK(cudaEventDestroy(a[i]));
    TUTOR_CHECK(cudaEventDestroy(b[i]));
  }
  std::sort(t.begin(), t.end());
  return reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
}

#define BLAS_CHECK(call)                                                        \
  do {                                                                          \
    cublasStatus_t st = (call);                                                 \
    if (st != CUBLAS_STATUS_SUCCESS) {                                          \
      std::fprintf(stderr, "cublas error %d at line %d\n", (int)st, __LINE__); \
      std::exit(2);                                                             \
    }                                                                           \
  } while (0)

int main() {
  const int M = 4096, N = 4096, K = 4096;
  add_all();
  const size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
  std::vector<float> hA(na), hB(nb), ref(nc), got(nc);  // ref: cuBLAS at 4096^3
  tutor::fill_random(hA, 1);
  tutor::fill_random(hB, 2);
  float *A, *B, *C;
  TUTOR_CHECK(cudaMalloc(&A, na * 4));
  TUTOR_CHECK(cudaMalloc(&B, nb * 4));
  TUTOR_CHECK(cudaMalloc(&C, nc * 4));
  TUTOR_CHECK(cudaMemcpy(A, hA.data(), na * 4, cudaMemcpyHostToDevice));
  TUTOR_CHECK(cudaMemcpy(B, hB.data(), nb * 4, cudaMemcpyHostToDevice));
  cublasHandle_t h;
  BLAS_CHECK(cublasCreate(&h));
  BLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
  const float one = 1.f, zero = 0.f;
  auto blas = [&] { BLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, N, A, K, &zero, C, N)); };
  blas();
  TUTOR_CHECK(cudaDeviceSynchronize());
  TUTOR_CHECK(cudaMemcpy(ref.data(), C, nc * 4, cudaMemcpyDeviceToHost));
  const double flops = 2.0 * M * N * K;
  const double blas_ms0 = sweep_median_ms(blas, 3, 10);
  std::printf("part %d: cublas %.3f ms %.2f TFLOP/s\n", PART, blas_ms0, flops / (blas_ms0 * 1e9));
  // Largest |got - ref| / max(1, |ref|) of a launch on the leading m x n x k corner of the buffers (read as
  // m x k and k x n row-major matrices), against cuBLAS on the same; infinity if any output is not finite.
  std::vector<float> small_ref(nc);
  auto max_err = [&](Launch launch, int m, int n, int k, const std::vector<float>* full_ref) {
    const size_t cnt = (size_t)m * n;
    const std::vector<float>* r = full_ref;
    if (!r) {
      BLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, B, n, A, k, &zero, C, n));
      TUTOR_CHECK(cudaMemcpy(small_ref.data(), C, cnt * 4, cudaMemcpyDeviceToHost));
      r = &small_ref;
    }
    TUTOR_CHECK(cudaMemset(C, 0xff, nc * 4));
    launch(A, B, C, m, n, k);
    TUTOR_CHECK(cudaGetLastError());
    TUTOR_CHECK(cudaDeviceSynchronize());
    TUTOR_CHECK(cudaMemcpy(got.data(), C, nc * 4, cudaMemcpyDeviceToHost));
    double e = 0;
    for (size_t i = 0; i < cnt; ++i) {
      if (!std::isfinite(got[i])) return (double)INFINITY;
      e = std::max(e, std::fabs((double)got[i] - (*r)[i]) / std::max(1.0, std::fabs((double)(*r)[i])));
    }
    for (size_t i = cnt; i < nc; ++i)  // nothing written past the m x n output
      if (!std::isnan(got[i])) return (double)INFINITY;
    return e;
  };
  std::vector<std::pair<std::string, double>> res;
  for (const Config& c : configs) {
    double max_rel = max_err(c.launch, M, N, K, &ref);
    if (c.edge)
      for (auto [m, n, k] : {std::array<int, 3>{260, 196, 132}, {127, 129, 131}, {1000, 777, 1031}, {33, 4096, 7}})
        max_rel = std::max(max_rel, max_err(c.launch, m, n, k, nullptr));
    const bool bad = !(max_rel <= 1e-3);
    auto run = [&] { c.launch(A, B, C, M, N, K); };
    const double ms = sweep_median_ms(run, 3, 10);
    res.push_back({c.name, ms});
    std::printf("%s ms %.4f TFLOP/s %.2f max_rel_err %.2e %s\n", c.name.c_str(), ms, flops / (ms * 1e9), max_rel,
                bad || max_rel > 1e-3 ? "WRONG" : "ok");
    std::fflush(stdout);
  }
  const double blas_ms1 = sweep_median_ms(blas, 3, 10);
  const double blas_ms = std::min(blas_ms0, blas_ms1);
  std::printf("part %d: cublas again %.3f ms; ceiling %.2f TFLOP/s\n", PART, blas_ms1, flops / (blas_ms * 1e9));
  for (auto& [n, ms] : res) std::printf("RATIO %s %.2f TFLOP/s %.1f%% of cuBLAS\n", n.c_str(), flops / (ms * 1e9), 100.0 * blas_ms / ms);
  return 0;
}
