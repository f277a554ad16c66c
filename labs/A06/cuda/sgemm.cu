// A06 sgemm: C = A B in fp32, where A is M x K, B is K x N and C is M x N, all row-major.
// A ladder of eight kernels, one change at a time, then a templated kernel tuned in the run itself,
// each timed beside the vendor BLAS (cuBLAS, tensor cores off) in the same run.
// "Warp" below means NVIDIA's 32 lanes; AMD's wavefront has 64 (tutor::kWarpSize).
//   build: nvcc -O3 -std=c++17 -arch=sm_90a -I labs/common/cuda labs/A06/cuda/sgemm.cu -o sgemm -lcublas  // vendor-specific
//   run:   ./sgemm            checks every kernel on odd shapes against an fp64 reference kernel
//          ./sgemm --bench    FLOP/s of each kernel at 4096 x 4096 x 4096 (--m, --n, --k to change)
#include "tutor_lab.cuh"  // vendor-specific

#include <array>

#if __has_include(<cublas_v2.h>)  // vendor-specific
#include <cublas_v2.h>  // vendor-specific
#define SGEMM_HAVE_BLAS 1
#else
#define SGEMM_HAVE_BLAS 0
#endif

unsigned blocks(int n, int per_block) { return (unsigned)((n + per_block - 1) / per_block); }

// ---------------------------------------------------------------- 1. naive
// One thread per element of C. threadIdx.x runs down a column of C (rows i), so the 32 lanes of a
// warp read A[i][k] from 32 rows K floats apart and write C 32 rows apart: nothing coalesces.
constexpr int kNaiveX = tutor::kWarpSize;
constexpr int kNaiveY = 256 / tutor::kWarpSize;

__global__ void naive(const float* A, const float* B, float* C, int M, int N, int K) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= M || j >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += A[(size_t)i * K + k] * B[(size_t)k * N + j];
  C[(size_t)i * N + j] = acc;
}

// ---------------------------------------------------------------- 2. coalesced
// The same arithmetic with threadIdx.x along a row of C: a warp reads 32 neighbouring floats of a
// row of B (128 bytes, 4 sectors), one A[i][k] for all lanes (a broadcast), and writes 128 bytes.
__global__ void coalesced(const float* A, const float* B, float* C, int M, int N, int K) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  const int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= M || j >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += A[(size_t)i * K + k] * B[(size_t)k * N + j];
  C[(size_t)i * N + j] = acc;
}

// ---------------------------------------------------------------- 3. shared-memory tiles
// A 32 x 32 block computes a 32 x 32 tile of C. Per step of 32 along K it copies a 32 x 32 tile
// of A and of B into shared memory once, and each of them is then read 32 times from there:
// global traffic falls 32-fold. Elements past an edge of A or B are stored as zeros.
constexpr int kTile = 32;

__global__ void smem_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[kTile][kTile];
  __shared__ float Bs[kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int i = blockIdx.y * kTile + ty, j = blockIdx.x * kTile + tx;
  float acc = 0.f;
  for (int k0 = 0; k0 < K; k0 += kTile) {
    As[ty][tx] = (i < M && k0 + tx < K) ? A[(size_t)i * K + k0 + tx] : 0.f;
    Bs[ty][tx] = (k0 + ty < K && j < N) ? B[(size_t)(k0 + ty) * N + j] : 0.f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kTile; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (i < M && j < N) C[(size_t)i * N + j] = acc;
}

// ---------------------------------------------------------------- 4. 1-D register blocking
// A 64 x 64 tile of C, K-steps of 8, 512 threads: each thread computes 8 elements of one column.
// Per k it reads one float of B from shared memory into a register and uses it 8 times.
constexpr int k1M = 64, k1N = 64, k1K = 8, k1T = 8;
constexpr int k1Threads = k1M * k1N / k1T;

__global__ void __launch_bounds__(k1Threads) reg_1d(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[k1M][k1K];
  __shared__ float Bs[k1K][k1N];
  const int t = threadIdx.x;
  const int tc = t % k1N, tr = t / k1N;  // this thread's column, and its group of k1T rows
  const int m0 = blockIdx.y * k1M, n0 = blockIdx.x * k1N;
  const int ar = t / k1K, ac = t % k1K;  // the element of the A tile this thread copies
  const int br = t / k1N, bc = t % k1N;  // and of the B tile
  float acc[k1T] = {};
  for (int k0 = 0; k0 < K; k0 += k1K) {
    As[ar][ac] = (m0 + ar < M && k0 + ac < K) ? A[(size_t)(m0 + ar) * K + k0 + ac] : 0.f;
    Bs[br][bc] = (k0 + br < K && n0 + bc < N) ? B[(size_t)(k0 + br) * N + n0 + bc] : 0.f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < k1K; ++k) {
      const float b = Bs[k][tc];
#pragma unroll
      for (int r = 0; r < k1T; ++r) acc[r] += As[tr * k1T + r][k] * b;
    }
    __syncthreads();
  }
  const int j = n0 + tc;
#pragma unroll
  for (int r = 0; r < k1T; ++r) {
    const int i = m0 + tr * k1T + r;
    if (i < M && j < N) C[(size_t)i * N + j] = acc[r];
  }
}

// ---------------------------------------------------------------- 5. 2-D register blocking
// A 128 x 128 tile, K-steps of 8, 256 threads: each thread computes an 8 x 8 block of C. Per k it
// loads 8 floats of A and 8 of B into registers and does their 64-FMA outer product.
constexpr int k2M = 128, k2N = 128, k2K = 8, k2T = 8;
constexpr int k2Threads = k2M * k2N / (k2T * k2T);

__global__ void __launch_bounds__(k2Threads) reg_2d(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[k2M][k2K];
  __shared__ float Bs[k2K][k2N];
  const int t = threadIdx.x;
  const int tr = t / (k2N / k2T), tc = t % (k2N / k2T);  // this thread's 8 x 8 block of the tile
  const int m0 = blockIdx.y * k2M, n0 = blockIdx.x * k2N;
  float acc[k2T][k2T] = {};
  float a[k2T], b[k2T];
  for (int k0 = 0; k0 < K; k0 += k2K) {
    for (int l = t; l < k2M * k2K; l += k2Threads) {
      const int r = l / k2K, c = l % k2K;
      As[r][c] = (m0 + r < M && k0 + c < K) ? A[(size_t)(m0 + r) * K + k0 + c] : 0.f;
    }
    for (int l = t; l < k2K * k2N; l += k2Threads) {
      const int r = l / k2N, c = l % k2N;
      Bs[r][c] = (k0 + r < K && n0 + c < N) ? B[(size_t)(k0 + r) * N + n0 + c] : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < k2K; ++k) {
#pragma unroll
      for (int x = 0; x < k2T; ++x) a[x] = As[tr * k2T + x][k];
#pragma unroll
      for (int y = 0; y < k2T; ++y) b[y] = Bs[k][tc * k2T + y];
#pragma unroll
      for (int x = 0; x < k2T; ++x)
#pragma unroll
        for (int y = 0; y < k2T; ++y) acc[x][y] += a[x] * b[y];
    }
    __syncthreads();
  }
#pragma unroll
  for (int x = 0; x < k2T; ++x)
#pragma unroll
    for (int y = 0; y < k2T; ++y) {
      const int i = m0 + tr * k2T + x, j = n0 + tc * k2T + y;
      if (i < M && j < N) C[(size_t)i * N + j] = acc[x][y];
    }
}

// ---------------------------------------------------------------- float4 tile loads and stores
// A 16-byte load needs a 16-byte aligned address: a row of A starts on one only if K % 4 == 0, a
// row of B or C only if N % 4 == 0 (cudaMalloc's base is aligned). Otherwise, and on the ragged
// edge of a tile, the four floats are read one by one, those past the edge as zeros.
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

// One 16-byte shared-memory read, spread over four registers.
__device__ __forceinline__ void unpack(float4 v, float* r) {
  r[0] = v.x;
  r[1] = v.y;
  r[2] = v.z;
  r[3] = v.w;
}

// ---------------------------------------------------------------- 6. vectorized
// reg_2d's tile with 16-byte accesses: each thread loads one float4 of A and one of B per K-step.
// The A tile is stored transposed, As[k][m], so that a thread's 8 values of A for one k are
// contiguous and come back as two float4 reads instead of eight scalar ones. Its row pitch of
// 128 + 4 floats keeps the transposing stores free of bank conflicts: word [k][m] is in bank
// (4k + m) % 32, and a warp's 32 stores (16 rows m, k four apart) hit 32 different banks.
constexpr int kPad = 4;

__global__ void __launch_bounds__(k2Threads) vectorized(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ __align__(16) float As[k2K][k2M + kPad];
  __shared__ __align__(16) float Bs[k2K][k2N];
  const int t = threadIdx.x;
  const int tr = t / (k2N / k2T), tc = t % (k2N / k2T);
  const int m0 = blockIdx.y * k2M, n0 = blockIdx.x * k2N;
  const bool vecA = K % 4 == 0, vecB = N % 4 == 0;
  const int ar = t / (k2K / 4), ac = (t % (k2K / 4)) * 4;  // one float4 of the 128 x 8 A tile
  const int br = t / (k2N / 4), bc = (t % (k2N / 4)) * 4;  // one float4 of the 8 x 128 B tile
  float acc[k2T][k2T] = {};
  float a[k2T], b[k2T];
  for (int k0 = 0; k0 < K; k0 += k2K) {
    const float4 va = m0 + ar < M ? load4(A + (size_t)(m0 + ar) * K, k0 + ac, K, vecA) : make_float4(0.f, 0.f, 0.f, 0.f);
    const float4 vb = k0 + br < K ? load4(B + (size_t)(k0 + br) * N, n0 + bc, N, vecB) : make_float4(0.f, 0.f, 0.f, 0.f);
    As[ac + 0][ar] = va.x;
    As[ac + 1][ar] = va.y;
    As[ac + 2][ar] = va.z;
    As[ac + 3][ar] = va.w;
    *reinterpret_cast<float4*>(&Bs[br][bc]) = vb;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < k2K; ++k) {
#pragma unroll
      for (int x = 0; x < k2T; x += 4) unpack(*reinterpret_cast<const float4*>(&As[k][tr * k2T + x]), &a[x]);
#pragma unroll
      for (int y = 0; y < k2T; y += 4) unpack(*reinterpret_cast<const float4*>(&Bs[k][tc * k2T + y]), &b[y]);
#pragma unroll
      for (int x = 0; x < k2T; ++x)
#pragma unroll
        for (int y = 0; y < k2T; ++y) acc[x][y] += a[x] * b[y];
    }
    __syncthreads();
  }
#pragma unroll
  for (int x = 0; x < k2T; ++x) {
    const int i = m0 + tr * k2T + x;
    if (i >= M) continue;
#pragma unroll
    for (int y = 0; y < k2T; y += 4)
      store4(C + (size_t)i * N, n0 + tc * k2T + y, N, vecB, make_float4(acc[x][y], acc[x][y + 1], acc[x][y + 2], acc[x][y + 3]));
  }
}

// ---------------------------------------------------------------- 7, 8 and the tuned kernels: warp tiles
// One template, tuned in the run. A block of (BM / WM) x (BN / WN) groups of 32 threads computes a
// BM x BN tile of C; group w owns a WM x WN warp tile of it, split into WMI x WNI sub-tiles of
// (WM / WMI) x (WN / WNI). Inside a sub-tile the 32 lanes form a grid of LM x LN lanes, each
// computing a 4 x 4 block, so a thread holds (4 WMI) x (4 WNI) accumulators. Per k a lane reads
// WMI float4 of A and WNI float4 of B from shared memory: the LM (LN) lanes that differ along a
// sub-tile read neighbouring 16-byte words (no bank conflict), the others the same words
// (a broadcast). On CDNA a wavefront of 64 holds two of these groups of 32; the arithmetic is the
// same, only the hardware's grouping differs.
// The A tile is copied by groups of 32 threads, each taking 16 rows x 8 floats of it: two lanes per
// row, one float4 each, so a row's 32 bytes are one sector. The transposed stores As[k][m] of a
// group then fall in 32 different banks at any BK: word [k][m] is in bank (4k + m) % 32 (pitch
// BM + 4), the 16 rows m give 16 neighbouring banks and the two float4 (k four apart) are 16 banks
// apart. (Four float4 of one row per group, at BK >= 16, would put k = c and c + 8 on one bank.)
// STAGES = 1: load a K-step into shared memory, wait, compute, wait (warp_tiled).
// STAGES = 2: two shared buffers; the loads of step k + 1 are issued into registers before the
// FMAs of step k, so their latency hides behind arithmetic, and one barrier per step suffices.
// FRAG = 1 (with STAGES = 2): the values a thread reads from shared memory into registers are
// double-buffered too. The reads of k + 1 are issued before the FMAs of k, and the last k of a step
// runs after the barrier and the next step's first reads, so no step starts with its FMAs waiting.
// MINB: blocks the compiler must fit on one SM (65536 / (MINB x threads) registers per thread at most).  // vendor-specific
// The two tiles live in dynamic shared memory, STAGES x (BK x (BM + 4) floats of A, then BK x BN of B):
// a static __shared__ array may not exceed 48 KB, and the larger tiles need more.
constexpr int kGroup = 32;  // threads of one warp tile on both vendors

template <int BM, int BN, int BK, int WM, int WN, int WMI, int WNI, int STAGES, int FRAG>
__device__ __forceinline__ void tiled_body(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                           int M, int N, int K) {
  constexpr int kThreads = (BM / WM) * (BN / WN) * kGroup;
  constexpr int SM = WM / WMI, SN = WN / WNI;  // sub-tile
  constexpr int LM = SM / 4, LN = SN / 4;      // lanes along m and n within a sub-tile
  static_assert(LM * LN == kGroup, "a sub-tile is 32 lanes of 4 x 4");
  constexpr int kLoadA = BM * BK / 4 / kThreads, kLoadB = BK * BN / 4 / kThreads;  // float4 per thread
  static_assert(kLoadA * kThreads * 4 == BM * BK && kLoadB * kThreads * 4 == BK * BN, "tiles split evenly");
  static_assert(BM % 16 == 0 && BK % 8 == 0, "the A tile splits into 16 x 8 pieces");
  static_assert(STAGES == 1 || STAGES == 2, "one or two shared buffers");
  static_assert(FRAG == 0 || (STAGES == 2 && BK % 2 == 0), "fragment double-buffering needs two shared buffers");

  extern __shared__ float4 smem4[];  // 16-byte aligned
  float(*As)[BK][BM + kPad] = reinterpret_cast<float(*)[BK][BM + kPad]>(smem4);  // transposed: As[s][k][m]
  float(*Bs)[BK][BN] = reinterpret_cast<float(*)[BK][BN]>(reinterpret_cast<float*>(smem4) + STAGES * BK * (BM + kPad));

  const int t = threadIdx.x, lane = t % kGroup, w = t / kGroup;
  const int wm = (w / (BN / WN)) * WM, wn = (w % (BN / WN)) * WN;  // warp tile's corner in the block tile
  const int lm = (lane / LN) * 4, ln = (lane % LN) * 4;           // lane's corner in a sub-tile
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const bool vecA = K % 4 == 0, vecB = N % 4 == 0;

  // The float4 l of this thread's share of the A tile: row r, columns c .. c + 3 of the K-step.
  auto a_slot = [&](int l, int& r, int& c) {
    const int idx = t + l * kThreads, g = idx / kGroup, h = idx % kGroup;
    r = (g % (BM / 16)) * 16 + h / 2;
    c = ((g / (BM / 16)) * 2 + h % 2) * 4;
  };
  float4 pa[kLoadA], pb[kLoadB];  // one K-step of A and B on its way from global to shared memory
  auto load_global = [&](int k0) {
#pragma unroll
    for (int l = 0; l < kLoadA; ++l) {
      int r, c;
      a_slot(l, r, c);
      pa[l] = m0 + r < M ? load4(A + (size_t)(m0 + r) * K, k0 + c, K, vecA) : make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll
    for (int l = 0; l < kLoadB; ++l) {
      const int idx = t + l * kThreads, r = idx / (BN / 4), c = (idx % (BN / 4)) * 4;
      pb[l] = k0 + r < K ? load4(B + (size_t)(k0 + r) * N, n0 + c, N, vecB) : make_float4(0.f, 0.f, 0.f, 0.f);
    }
  };
  auto store_shared = [&](int s) {
#pragma unroll
    for (int l = 0; l < kLoadA; ++l) {
      int r, c;
      a_slot(l, r, c);
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
  float a[2][4 * WMI], b[2][4 * WNI];  // fragment f: one k's values of A and B (f = 1 only with FRAG)
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
  auto compute = [&](int s) {
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      load_frag(s, k, 0);
      fma(0);
    }
  };

  const int steps = (K + BK - 1) / BK;
  if constexpr (STAGES == 1) {
    for (int s = 0; s < steps; ++s) {
      load_global(s * BK);
      store_shared(0);
      __syncthreads();
      compute(0);
      __syncthreads();
    }
  } else {
    load_global(0);
    store_shared(0);
    __syncthreads();
    if constexpr (FRAG) load_frag(0, 0, 0);
    for (int s = 0; s < steps; ++s) {
      const int cur = s % 2;
      const bool more = s + 1 < steps;
      if (more) load_global((s + 1) * BK);  // in flight while the FMAs below run
      if constexpr (FRAG) {
#pragma unroll
        for (int k = 0; k < BK; ++k) {
          if (k + 1 < BK) {
            load_frag(cur, k + 1, (k + 1) % 2);  // read while the FMAs of k run
          } else if (more) {
            // As below: buffer cur ^ 1 was last read in step s - 1, before the barrier that ended it.
            store_shared(cur ^ 1);
            __syncthreads();
            load_frag(cur ^ 1, 0, 0);  // the next step's k = 0 (BK is even: fragment 0)
          }
          fma(k % 2);
        }
      } else {
        compute(cur);
        // Buffer cur ^ 1 was last read in step s - 1, and every thread passed the barrier after it.
        if (more) store_shared(cur ^ 1);
        __syncthreads();
      }
    }
  }

#pragma unroll
  for (int i = 0; i < WMI; ++i)
#pragma unroll
    for (int x = 0; x < 4; ++x) {
      const int row = m0 + wm + i * SM + lm + x;
      if (row >= M) continue;
#pragma unroll
      for (int j = 0; j < WNI; ++j) {
        const float* v = &acc[4 * i + x][4 * j];
        store4(C + (size_t)row * N, n0 + wn + j * SN + ln, N, vecB, make_float4(v[0], v[1], v[2], v[3]));
      }
    }
}

// MINB (blocks per SM) is a tuning knob: 2 blocks of 256 threads cap a thread at 128 registers,  // vendor-specific
// enough for 64 accumulators; a larger tile needs MINB = 1 and runs 8 warps per SM.  // vendor-specific
template <int BM, int BN, int BK, int WM, int WN, int WMI, int WNI, int STAGES, int FRAG, int MINB>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * kGroup, MINB)
tiled_gemm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
  tiled_body<BM, BN, BK, WM, WN, WMI, WNI, STAGES, FRAG>(A, B, C, M, N, K);
}

// The configuration of the recorded winner as a kernel with a plain name of its own, so that the
// profiler can select it (the instantiations of tiled_gemm share one name).
constexpr int kChosenThreads = (128 / 64) * (256 / 64) * kGroup;
__global__ void __launch_bounds__(kChosenThreads, 1)
chosen_gemm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
  tiled_body<128, 256, 16, 64, 64, 2, 4, 2, 0>(A, B, C, M, N, K);
}

// Above 48 KB of dynamic shared memory a kernel must opt in, once.
void opt_in(const void* kernel, int smem, bool& done) {
  if (done) return;
  TUTOR_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  done = true;
}

template <int BM, int BN, int BK, int WM, int WN, int WMI, int WNI, int STAGES, int FRAG, int MINB>
void launch_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  constexpr int threads = (BM / WM) * (BN / WN) * kGroup;
  constexpr int smem = STAGES * BK * (BM + kPad + BN) * (int)sizeof(float);
  auto kernel = tiled_gemm<BM, BN, BK, WM, WN, WMI, WNI, STAGES, FRAG, MINB>;
  static bool opted_in = false;
  opt_in(reinterpret_cast<const void*>(kernel), smem, opted_in);
  kernel<<<dim3(blocks(N, BN), blocks(M, BM)), threads, smem>>>(A, B, C, M, N, K);
}

void launch_chosen(const float* A, const float* B, float* C, int M, int N, int K) {
  constexpr int smem = 2 * 16 * (128 + kPad + 256) * (int)sizeof(float);
  static bool opted_in = false;
  opt_in(reinterpret_cast<const void*>(chosen_gemm), smem, opted_in);
  chosen_gemm<<<dim3(blocks(N, 256), blocks(M, 128)), kChosenThreads, smem>>>(A, B, C, M, N, K);
}

// ---------------------------------------------------------------- the ladder and the candidates
using Launch = void (*)(const float*, const float*, float*, int, int, int);

void launch_naive(const float* A, const float* B, float* C, int M, int N, int K) {
  naive<<<dim3(blocks(M, kNaiveX), blocks(N, kNaiveY)), dim3(kNaiveX, kNaiveY)>>>(A, B, C, M, N, K);
}
void launch_coalesced(const float* A, const float* B, float* C, int M, int N, int K) {
  coalesced<<<dim3(blocks(N, kNaiveX), blocks(M, kNaiveY)), dim3(kNaiveX, kNaiveY)>>>(A, B, C, M, N, K);
}
void launch_smem(const float* A, const float* B, float* C, int M, int N, int K) {
  smem_tiled<<<dim3(blocks(N, kTile), blocks(M, kTile)), dim3(kTile, kTile)>>>(A, B, C, M, N, K);
}
void launch_reg1d(const float* A, const float* B, float* C, int M, int N, int K) {
  reg_1d<<<dim3(blocks(N, k1N), blocks(M, k1M)), k1Threads>>>(A, B, C, M, N, K);
}
void launch_reg2d(const float* A, const float* B, float* C, int M, int N, int K) {
  reg_2d<<<dim3(blocks(N, k2N), blocks(M, k2M)), k2Threads>>>(A, B, C, M, N, K);
}
void launch_vec(const float* A, const float* B, float* C, int M, int N, int K) {
  vectorized<<<dim3(blocks(N, k2N), blocks(M, k2M)), k2Threads>>>(A, B, C, M, N, K);
}

struct Kernel {
  const char* name;
  Launch launch;
  int bm, bn;  // the block's tile of C, for its global traffic (naive kernels: 1 x 1)
};

// The ladder: each step changes one thing. warp_tiled and double_buffered share one tile
// (128 x 128 x 8, warp tile 64 x 32, 8 x 8 per thread) and differ only in STAGES; neither has FRAG.
const Kernel kLadder[] = {
    {"naive", launch_naive, 1, 1},
    {"coalesced", launch_coalesced, 1, 1},
    {"smem_tiled", launch_smem, kTile, kTile},
    {"reg_1d", launch_reg1d, k1M, k1N},
    {"reg_2d", launch_reg2d, k2M, k2N},
    {"vectorized", launch_vec, k2M, k2N},
    {"warp_tiled", launch_tiled<128, 128, 8, 64, 32, 2, 2, 1, 0, 2>, 128, 128},
    {"double_buffered", launch_tiled<128, 128, 8, 64, 32, 2, 2, 2, 0, 2>, 128, 128},
};

// Candidates of the double-buffered kernel, named cand_<BM>x<BN>x<BK>_w<WM>x<WN>_b<MINB>, with _f
// where FRAG = 1; the fastest at the bench size is timed again as `best`.
const Kernel kCandidates[] = {
    {"cand_128x128x8_w64x32_b2", launch_tiled<128, 128, 8, 64, 32, 2, 2, 2, 0, 2>, 128, 128},
    {"cand_128x128x8_w32x64_b2", launch_tiled<128, 128, 8, 32, 64, 2, 2, 2, 0, 2>, 128, 128},
    {"cand_128x128x16_w64x32_b2", launch_tiled<128, 128, 16, 64, 32, 2, 2, 2, 0, 2>, 128, 128},
    {"cand_128x128x16_w64x32_b1", launch_tiled<128, 128, 16, 64, 32, 2, 2, 2, 0, 1>, 128, 128},
    {"cand_128x128x16_w32x64_b1", launch_tiled<128, 128, 16, 32, 64, 2, 2, 2, 0, 1>, 128, 128},
    {"cand_128x64x16_w64x32_b3", launch_tiled<128, 64, 16, 64, 32, 2, 2, 2, 0, 3>, 128, 64},
    {"cand_64x128x16_w32x64_b3", launch_tiled<64, 128, 16, 32, 64, 2, 2, 2, 0, 3>, 64, 128},
    {"cand_128x256x8_w64x64_b1", launch_tiled<128, 256, 8, 64, 64, 2, 4, 2, 0, 1>, 128, 256},
    {"cand_256x128x8_w64x64_b1", launch_tiled<256, 128, 8, 64, 64, 2, 4, 2, 0, 1>, 256, 128},
    {"cand_64x64x16_w32x32_b4", launch_tiled<64, 64, 16, 32, 32, 1, 2, 2, 0, 4>, 64, 64},
    {"cand_128x256x16_w64x64_b1", launch_tiled<128, 256, 16, 64, 64, 2, 4, 2, 0, 1>, 128, 256},
    {"cand_256x128x16_w64x64_b1", launch_tiled<256, 128, 16, 64, 64, 2, 4, 2, 0, 1>, 256, 128},
    {"cand_128x128x32_w64x32_b1", launch_tiled<128, 128, 32, 64, 32, 2, 2, 2, 0, 1>, 128, 128},
    {"cand_128x256x16_w64x64_b1_f", launch_tiled<128, 256, 16, 64, 64, 2, 4, 2, 1, 1>, 128, 256},
    {"cand_256x128x16_w64x64_b1_f", launch_tiled<256, 128, 16, 64, 64, 2, 4, 2, 1, 1>, 256, 128},
    {"cand_128x256x8_w64x64_b1_f", launch_tiled<128, 256, 8, 64, 64, 2, 4, 2, 1, 1>, 128, 256},
    {"cand_128x128x16_w64x64_b2_f", launch_tiled<128, 128, 16, 64, 64, 2, 4, 2, 1, 2>, 128, 128},
    {"cand_128x128x8_w64x32_b2_f", launch_tiled<128, 128, 8, 64, 32, 2, 2, 2, 1, 2>, 128, 128},
};

// ---------------------------------------------------------------- the vendor BLAS
#if SGEMM_HAVE_BLAS
void blas_check(cublasStatus_t status, const char* call, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  std::fprintf(stderr, "error: %s returned status %d at line %d\n", call, (int)status, line);
  std::exit(2);
}
#define BLAS_CHECK(call) blas_check((call), #call, __LINE__)

cublasHandle_t blas_handle() {
  static cublasHandle_t handle = nullptr;
  if (!handle) {
    BLAS_CHECK(cublasCreate(&handle));
    BLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));  // fp32 FFMA, no TF32 tensor cores  // vendor-specific
  }
  return handle;
}

// The BLAS is column-major. A row-major M x N matrix is, byte for byte, a column-major N x M one
// (its transpose), so row-major C = A B is column-major C^T = B^T A^T: pass B first, as an
// N x K column-major matrix with leading dimension N, then A as K x M with leading dimension K,
// and get C^T, N x M with leading dimension N, which is row-major C. No data is transposed.
void launch_blas(const float* A, const float* B, float* C, int M, int N, int K) {
  const float one = 1.f, zero = 0.f;
  BLAS_CHECK(cublasSgemm(blas_handle(), CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, N, A, K, &zero, C, N));
}
#endif

// ---------------------------------------------------------------- checks
// The reference: one thread per element, fp64 accumulation, rounded to fp32 once at the end.
__global__ void reference(const float* A, const float* B, float* C, int M, int N, int K) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= N) return;
  for (int i = blockIdx.y; i < M; i += gridDim.y) {
    double acc = 0.0;
    for (int k = 0; k < K; ++k) acc += (double)A[(size_t)i * K + k] * (double)B[(size_t)k * N + j];
    C[(size_t)i * N + j] = (float)acc;
  }
}

// The tolerance, from K and the unit roundoff u = 2^-24 of fp32: |c - ref| <= 4 u K^(3/2). With
// |a|, |b| < 1 it covers the worst-case bound K u sum|a b| <= u K^2 up to K = 16, and for larger K
// the probabilistic bound lambda sqrt(K) u sum|a b| with lambda = 16 and sum|a b| close to K / 4.
double tolerance(int K) { return 4.0 * std::ldexp(1.0, -24) * std::pow((double)K, 1.5); }

void run_check(const char* variant, Launch launch, const float* dA, const float* dB, float* dC,
               std::vector<float>& got, const std::vector<float>& ref, int M, int N, int K, uint64_t seed) {
  const size_t count = (size_t)M * N;
  tutor::poison(dC, count * sizeof(float));
  launch(dA, dB, dC, M, N, K);
  TUTOR_CHECK_LAUNCH();
  TUTOR_CHECK(cudaMemcpy(got.data(), dC, count * sizeof(float), cudaMemcpyDeviceToHost));
  const std::string size = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
  tutor::check_close("sgemm", variant, size, got.data(), ref.data(), count, seed, tolerance(K), 0, N);
}

// Every kernel on one fresh random shape, the output poisoned before each; on small shapes the
// reference kernel itself is checked against fp64 on the CPU first.
void verify(int M, int N, int K, uint64_t seed) {
  const size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
  std::vector<float> A(na), B(nb), ref(nc), got(nc);
  tutor::fill_random(A, seed);
  tutor::fill_random(B, seed);
  float *dA, *dB, *dC;
  tutor::guarded_malloc(&dA, na, "a");
  tutor::guarded_malloc(&dB, nb, "b");
  tutor::guarded_malloc(&dC, nc, "c");
  TUTOR_CHECK(cudaMemcpy(dA, A.data(), na * sizeof(float), cudaMemcpyHostToDevice));
  TUTOR_CHECK(cudaMemcpy(dB, B.data(), nb * sizeof(float), cudaMemcpyHostToDevice));
  tutor::poison(dC, nc * sizeof(float));
  reference<<<dim3(blocks(N, 256), (unsigned)std::min(M, 65535)), 256>>>(dA, dB, dC, M, N, K);
  TUTOR_CHECK_LAUNCH();
  TUTOR_CHECK(cudaMemcpy(ref.data(), dC, nc * sizeof(float), cudaMemcpyDeviceToHost));
  const std::string size = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
  if ((double)M * N * K <= 1 << 24) {
    std::vector<float> cpu(nc);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double acc = 0.0;
        for (int k = 0; k < K; ++k) acc += (double)A[(size_t)i * K + k] * (double)B[(size_t)k * N + j];
        cpu[(size_t)i * N + j] = (float)acc;
      }
    // Two fp64 sums of the same products differ by far less than one fp32 rounding step.
    tutor::check_close("sgemm", "reference", size, ref.data(), cpu.data(), nc, seed, 1e-9, std::ldexp(1.0, -23), N);
  }
  for (const Kernel& k : kLadder) run_check(k.name, k.launch, dA, dB, dC, got, ref, M, N, K, seed);
  run_check("chosen", launch_chosen, dA, dB, dC, got, ref, M, N, K, seed);
  for (const Kernel& k : kCandidates) run_check(k.name, k.launch, dA, dB, dC, got, ref, M, N, K, seed);
#if SGEMM_HAVE_BLAS
  run_check("cublas", launch_blas, dA, dB, dC, got, ref, M, N, K, seed);
#endif
  tutor::guarded_free(dA);
  tutor::guarded_free(dB);
  tutor::guarded_free(dC);
}

// ---------------------------------------------------------------- bench
struct Timed {
  std::string variant;
  double ms, bytes;
};

// Median milliseconds, with fewer repetitions for slow kernels (the naive one takes ~0.1 s or more).
double time_ms(Launch launch, const float* A, const float* B, float* C, int M, int N, int K) {
  auto run = [&] { launch(A, B, C, M, N, K); };
  const float probe = tutor::median_ms(run, 1, 1);
  const int reps = std::max(3, std::min(20, (int)(400.0 / std::max(probe, 1e-3f))));
  return tutor::median_ms(run, probe > 50.f ? 0 : 3, reps);
}

// Global bytes a kernel requests, for the roofline: a BM x BN tile reads BM + BN floats per k and
// writes its tile once, so the whole product requests 4 (MNK (1/BM + 1/BN) + MN) bytes.
double tile_bytes(int bm, int bn, int M, int N, int K) {
  return 4.0 * ((double)M * N * K * (1.0 / bm + 1.0 / bn) + (double)M * N);
}

void emit(const Timed& r, const tutor::Ceiling& c, double flops) {
  tutor::json_begin("measure", "sgemm", r.variant.c_str());
  std::printf(", \"metric\": \"throughput\", \"value\": %.6g, \"unit\": \"TFLOP/s\"", flops / (r.ms * 1e9));
  std::printf(", \"ceiling\": {\"name\": \"%s\", \"value\": %.6g, \"unit\": \"%s\"}", c.name, c.value, c.unit);
  std::printf(", \"bytes\": %.0f, \"flops\": %.0f, \"ms\": %.6g", r.bytes, flops, r.ms);
  tutor::json_end();
}

void bench(int M, int N, int K, uint64_t seed) {
  const size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
  std::vector<float> hA(na), hB(nb);
  tutor::fill_random(hA, seed);
  tutor::fill_random(hB, seed);
  float *A, *B, *C;
  TUTOR_CHECK(cudaMalloc(&A, na * sizeof(float)));
  TUTOR_CHECK(cudaMalloc(&B, nb * sizeof(float)));
  TUTOR_CHECK(cudaMalloc(&C, nc * sizeof(float)));
  TUTOR_CHECK(cudaMemcpy(A, hA.data(), na * sizeof(float), cudaMemcpyHostToDevice));
  TUTOR_CHECK(cudaMemcpy(B, hB.data(), nb * sizeof(float), cudaMemcpyHostToDevice));
  const double flops = 2.0 * M * N * K;
  const double min_bytes = 4.0 * ((double)na + nb + nc);  // each matrix once: the BLAS's floor
  std::vector<Timed> runs;
#if SGEMM_HAVE_BLAS
  const double blas_first = time_ms(launch_blas, A, B, C, M, N, K);
#endif
  for (const Kernel& k : kLadder) runs.push_back({k.name, time_ms(k.launch, A, B, C, M, N, K), tile_bytes(k.bm, k.bn, M, N, K)});
  const Kernel* best = &kCandidates[0];
  double best_ms = 1e30;
  for (const Kernel& k : kCandidates) {
    const double ms = time_ms(k.launch, A, B, C, M, N, K);
    runs.push_back({k.name, ms, tile_bytes(k.bm, k.bn, M, N, K)});
    if (ms < best_ms) best_ms = ms, best = &k;
  }
  std::fprintf(stderr, "best of %zu candidates: %s\n", sizeof kCandidates / sizeof kCandidates[0], best->name);
  runs.push_back({"best", time_ms(best->launch, A, B, C, M, N, K), tile_bytes(best->bm, best->bn, M, N, K)});
#if SGEMM_HAVE_BLAS
  // The ceiling: cuBLAS timed at the start and at the end of the run; the faster of the two.
  const double blas_ms = std::min(blas_first, time_ms(launch_blas, A, B, C, M, N, K));
  runs.push_back({"cublas", blas_ms, min_bytes});
  const tutor::Ceiling ceiling{"cuBLAS SGEMM (fp32, no tensor cores)", flops / (blas_ms * 1e9), "TFLOP/s"};
#else
  tutor::json_begin("skip", "sgemm", "cublas");
  std::printf(", \"reason\": \"cublas_v2.h not found at build time: the ceiling is this run's fastest kernel\"");
  tutor::json_end();
  double fastest = 1e30;
  for (const Timed& r : runs) fastest = std::min(fastest, r.ms);
  const tutor::Ceiling ceiling{"fastest kernel of this run (no cuBLAS)", flops / (fastest * 1e9), "TFLOP/s"};
  (void)min_bytes;
#endif
  for (const Timed& r : runs) emit(r, ceiling, flops);
  TUTOR_CHECK(cudaFree(A));
  TUTOR_CHECK(cudaFree(B));
  TUTOR_CHECK(cudaFree(C));
}

int main(int argc, char** argv) {
  tutor::Args args = tutor::parse_args(argc, argv);
  // (M, N, K): a single element, 1 x N and N x 1, K shorter than every K-step, odd shapes around
  // the tiles, an exact multiple, multiples of 4 with partial tiles on every side (the float4 paths
  // on a ragged edge), and one large odd shape on both sides of 4096.
  std::vector<std::array<int, 3>> shapes = {{1, 1, 1},        {1, 4097, 1023}, {4097, 1, 513},  {33, 4096, 7},    {127, 129, 131},
                                            {1000, 777, 1031}, {256, 256, 256}, {260, 196, 132}, {4095, 4097, 4095}};
  if (args.quick) shapes = {{1, 1, 1}, {1, 67, 33}, {65, 1, 17}, {33, 64, 7}, {127, 129, 131}, {132, 68, 36}};
  for (auto [M, N, K] : shapes) verify(M, N, K, args.seed);
  if (args.bench)
    bench((int)tutor::arg_int(args, "--m", 4096), (int)tutor::arg_int(args, "--n", 4096),
          (int)tutor::arg_int(args, "--k", 4096), args.seed);
  return tutor::finish("sgemm");
}
