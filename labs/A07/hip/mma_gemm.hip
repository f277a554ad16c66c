// A07 mma_gemm: C = A * B^T with bf16 inputs and fp32 accumulation and output.
// A is M x K and B is N x K, both row-major (K contiguous, as a weight matrix in y = x W^T); C is M x N.
// Five variants, one problem: a SIMT kernel that does one fused multiply-add per lane per instruction,
// three matrix-unit kernels (one matrix instruction per wavefront multiplies a 32 x 8 by an 8 x 32 tile), and a  // vendor-specific
// register-only loop of matrix instructions that measures how fast the instruction itself can go.
//   build: hipcc -O3 -std=c++17 --offload-arch=gfx942 -I labs/common/hip labs/A07/hip/mma_gemm.hip -o mma_gemm -lhipblas  // vendor-specific
//   run:   ./mma_gemm            checks every variant on odd sizes against a float64 reference
//          ./mma_gemm --bench    TFLOP/s at 4096 x 4096 x 4096 (--n to change), the vendor BLAS timed beside
#include "tutor_lab.hip.h"  // vendor-specific

#include <array>
#if __has_include(<hipblas/hipblas.h>)  // vendor-specific
#include <hipblas/hipblas.h>  // vendor-specific
#define TUTOR_HAVE_BLAS 1
// A BLAS call that fails names itself and its status, like TUTOR_CHECK for the runtime.
#define TUTOR_CHECK_BLAS(call) \
  do { \
    const int status_ = (int)(call); \
    if (status_ != 0) std::fprintf(stderr, "error: %s returned status %d\n", #call, status_), std::exit(2); \
  } while (0)
#endif

// bf16 is the upper half of an fp32: 1 sign bit, the same 8 exponent bits, 7 of the 23 fraction bits.
// The lab keeps it as raw 16-bit words, converts with shifts, and so needs no vendor header for it.
typedef unsigned short bf16;

__host__ __device__ inline float bf16_to_float(bf16 x) {
  const unsigned u = (unsigned)x << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

// Round to nearest, ties to even (the inputs here are finite).
inline bf16 float_to_bf16(float f) {
  unsigned u;
  std::memcpy(&u, &f, sizeof u);
  return (bf16)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

// ---------------------------------------------------------------- block and warp tiles
// A block of 256 threads computes a 128 x 128 tile of C, walking K in steps of 32.
constexpr int kBM = 128, kBN = 128, kBK = 32, kThreads = 256;

// ---------------------------------------------------------------- SIMT: one FMA per lane
// Each thread owns an 8 x 8 patch of C (rows ty*4 + {0..3, 64..67}, columns tx*4 + {0..3, 64..67}).
// The tiles are converted to fp32 in shared memory, stored k-major so that a thread reads its 8 values
// of A and 8 of B for one k as four 16-byte loads, then does 64 FMAs. The +4 pad spreads the stores.
constexpr int kSK = 16, kPad = 4;

__global__ void __launch_bounds__(kThreads) simt(const bf16* A, const bf16* B, float* C, int M, int N, int K) {
  __shared__ __align__(16) float As[kSK][kBM + kPad];
  __shared__ __align__(16) float Bs[kSK][kBN + kPad];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int m0 = blockIdx.y * kBM, n0 = blockIdx.x * kBN;
  float acc[8][8] = {};
  for (int k0 = 0; k0 < K; k0 += kSK) {
    for (int e = threadIdx.x; e < kBM * kSK; e += kThreads) {
      const int r = e / kSK, k = e % kSK;
      As[k][r] = (m0 + r < M && k0 + k < K) ? bf16_to_float(A[(size_t)(m0 + r) * K + k0 + k]) : 0.f;
      Bs[k][r] = (n0 + r < N && k0 + k < K) ? bf16_to_float(B[(size_t)(n0 + r) * K + k0 + k]) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kSK; ++k) {
      float a[8], b[8];
      *reinterpret_cast<float4*>(a) = *reinterpret_cast<const float4*>(&As[k][ty * 4]);
      *reinterpret_cast<float4*>(a + 4) = *reinterpret_cast<const float4*>(&As[k][64 + ty * 4]);
      *reinterpret_cast<float4*>(b) = *reinterpret_cast<const float4*>(&Bs[k][tx * 4]);
      *reinterpret_cast<float4*>(b + 4) = *reinterpret_cast<const float4*>(&Bs[k][64 + tx * 4]);
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int r = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + i - 4);
      const int c = n0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + j - 4);
      if (r < M && c < N) C[(size_t)r * N + c] = acc[i][j];
    }
}

// ---------------------------------------------------------------- shared-memory tile layout
// A stage holds a 128 x 32 tile of A and one of B, bf16, each row 64 bytes = four 16-byte chunks.
// On CDNA 3 each lane reads its own 8 bytes (ds_read_b64), not ldmatrix rows; as in the CUDA file, row r  // vendor-specific
// starts at byte 64 r, and the CUDA file's 16-byte bank-group count (4-way) is kept, not derived for the LDS.  // vendor-specific
// Swizzled: chunk c of row r is stored at chunk c ^ ((r >> 1) & 3), the CUDA file's layout, kept so that  // vendor-specific
// the two files stay line for line; what it does to LDS bank conflicts for ds_read_b64 is not analysed.  // vendor-specific
template <bool kSwizzle>
__device__ __forceinline__ int tile_offset(int row, int chunk) {  // in bf16 elements
  return row * kBK + ((kSwizzle ? chunk ^ ((row >> 1) & 3) : chunk) << 3);
}

// HIP exposes no per-lane asynchronous global-to-LDS copy like cp.async to call here: the chunk goes  // vendor-specific
// through a register, so the two-stage kernel overlaps only what the compiler schedules around it.  // vendor-specific
__device__ __forceinline__ void copy16_async(bf16* dst, const bf16* src, bool inside) {
  const uint4 v = inside ? *reinterpret_cast<const uint4*>(src) : make_uint4(0, 0, 0, 0);  // vendor-specific
  *reinterpret_cast<uint4*>(dst) = v;  // vendor-specific
}
__device__ __forceinline__ void cp_async_commit() {}  // vendor-specific
__device__ __forceinline__ void cp_async_wait_one() {}  // vendor-specific

// Copies rows [row0, row0 + 128) x columns [k0, k0 + 32) of a rows x K matrix into a stage.
// Whole 16-byte chunks go through a register (copy16_async) when the rows are 16-byte aligned (K % 8 == 0); edges  // vendor-specific
// of the matrix are filled with zeros so that they add nothing to the sum.  // vendor-specific
template <bool kSwizzle, bool kAsync>
__device__ __forceinline__ void load_tile(bf16* tile, const bf16* X, int rows, int K, int row0, int k0) {
  const bool aligned = K % 8 == 0;
#pragma unroll
  for (int i = 0; i < kBM * kBK / 8 / kThreads; ++i) {
    const int c = threadIdx.x + i * kThreads, row = c / 4, chunk = c % 4;
    const int gr = row0 + row, gk = k0 + chunk * 8;
    bf16* dst = tile + tile_offset<kSwizzle>(row, chunk);
    if (aligned) {
      const bool inside = gr < rows && gk < K;
      const bf16* src = inside ? X + (size_t)gr * K + gk : X;
      if (kAsync) copy16_async(dst, src, inside);
      else *reinterpret_cast<uint4*>(dst) = inside ? *reinterpret_cast<const uint4*>(src) : make_uint4(0, 0, 0, 0);
    } else {
      const bf16* src = X + (size_t)gr * K;
#pragma unroll
      for (int e = 0; e < 8; ++e) dst[e] = (gr < rows && gk + e < K) ? src[gk + e] : bf16(0);
    }
  }
}

// ---------------------------------------------------------------- the matrix instruction
// v_mfma_f32_32x32x8_bf16, builtin ..._32x32x8bf16_1k (CDNA 3 ISA; AMD lab notes "matrix cores"): one wavefront, C[32x32] += A[32x8] B[8x32].  // vendor-specific
// With x = lane % 32 and y = lane / 32, each lane holds four neighbouring bf16 along k, k = 4y + (0..3):  // vendor-specific
//   A: a[0..3] = A[x][4y..4y+3]      B: b[0..3] = B[4y..4y+3][x]  // vendor-specific
//   C: c[h] = C[8 (h / 4) + 4y + h % 4][x] for h = 0..15 (16 fp32 results per lane)  // vendor-specific
constexpr int kInstM = 32, kInstN = 32, kInstK = 8;  // vendor-specific
constexpr int kAccPerLane = kInstM * kInstN / tutor::kWarpSize;  // fp32 results each lane holds
typedef short FragA __attribute__((ext_vector_type(4)));  // vendor-specific
typedef short FragB __attribute__((ext_vector_type(4)));  // vendor-specific
typedef float Acc __attribute__((ext_vector_type(kAccPerLane)));  // vendor-specific

__device__ __forceinline__ void mma_tile(Acc& c, const FragA& a, const FragB& b) {
  // cbsz = abid = blgp = 0: no broadcast between the lanes' blocks, the plain product.  // vendor-specific
  c = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(a, b, c, 0, 0, 0);  // vendor-specific
  // The instruction reads A and B from VGPRs and accumulates in 16 registers per lane  // vendor-specific
  // (AGPRs or VGPRs on CDNA 3; the compiler picks), 16 passes of the matrix core  // vendor-specific
  // before a dependent MFMA may read the result.  // vendor-specific
}

// Where result h of a lane sits in the instruction's C tile.
__device__ __forceinline__ int acc_row(int lane, int h) { return 8 * (h / 4) + 4 * (lane / 32) + h % 4; }  // vendor-specific
__device__ __forceinline__ int acc_col(int lane, int h) { return lane % 32; }  // vendor-specific

// No ldmatrix on AMD: each lane reads its own four bf16 (8 bytes, one ds_read_b64) from the LDS tile,  // vendor-specific
// the 32 lanes of a half-wavefront 32 consecutive rows, the two halves the two 4-element halves of a chunk.  // vendor-specific
__device__ __forceinline__ FragA lds_read4(const bf16* tile, int offset) {  // vendor-specific
  return *reinterpret_cast<const FragA*>(tile + offset);  // vendor-specific
  // 8-byte aligned: tile_offset is a multiple of 8 elements, and the lane adds 0 or 4 of them;  // vendor-specific
  // a wavefront moves 64 x 8 = 512 bytes, at least 4 cycles of the 128-byte-per-cycle LDS.  // vendor-specific
}

// The A fragment of rows row0.. and k step kk: lane x + 32y reads row row0 + x, k = 4y..4y+3 of chunk kk.  // vendor-specific
template <bool kSwizzle>
__device__ __forceinline__ void load_a(FragA& a, const bf16* tile, int row0, int kk, int lane) {
  a = lds_read4(tile, tile_offset<kSwizzle>(row0 + lane % 32, kk) + 4 * (lane / 32));  // vendor-specific
}

// Two B fragments, columns (rows of the N x K tile) row0.. and row0 + kInstN.., two 8-byte LDS reads per lane.  // vendor-specific
template <bool kSwizzle>
__device__ __forceinline__ void load_b2(FragB& b0, FragB& b1, const bf16* tile, int row0, int kk, int lane) {
  b0 = lds_read4(tile, tile_offset<kSwizzle>(row0 + lane % 32, kk) + 4 * (lane / 32));  // vendor-specific
  b1 = lds_read4(tile, tile_offset<kSwizzle>(row0 + kInstN + lane % 32, kk) + 4 * (lane / 32));  // vendor-specific
  // the same read for both: B^T is stored like A, N x K with k contiguous  // vendor-specific
}

// ---------------------------------------------------------------- matrix-unit GEMM
// 4 wavefronts as 2 (rows) x 2 (columns), each owning a 64 x 64 tile of C: 2 x 2 instruction tiles, 64 fp32  // vendor-specific
// accumulators per lane; per 8-wide k step a wavefront issues 2 + 4 LDS reads and 4 MFMA.  // vendor-specific
// kStages = 1: load, barrier, compute, barrier. kStages = 2: the next stage is filled while the warps
// compute on this one (double buffering).
constexpr int kWM = 64, kWN = 64;  // vendor-specific
constexpr int kFragM = kWM / kInstM, kFragN = kWN / kInstN, kWarpsN = kBN / kWN;

template <bool kSwizzle, int kStages>
__device__ __forceinline__ void mma_body(const bf16* A, const bf16* B, float* C, int M, int N, int K) {
  __shared__ __align__(128) bf16 As[kStages][kBM * kBK];
  __shared__ __align__(128) bf16 Bs[kStages][kBN * kBK];
  const int lane = threadIdx.x % tutor::kWarpSize, warp = threadIdx.x / tutor::kWarpSize;
  const int wm = (warp / kWarpsN) * kWM, wn = (warp % kWarpsN) * kWN;
  const int m0 = blockIdx.y * kBM, n0 = blockIdx.x * kBN;
  Acc acc[kFragM][kFragN] = {};
  const int tiles = (K + kBK - 1) / kBK;
  if (kStages == 2) {
    load_tile<kSwizzle, true>(As[0], A, M, K, m0, 0);
    load_tile<kSwizzle, true>(Bs[0], B, N, K, n0, 0);
    cp_async_commit();
  }
  for (int t = 0; t < tiles; ++t) {
    const int s = kStages == 2 ? t % 2 : 0;
    if (kStages == 2) {
      if (t + 1 < tiles) {
        load_tile<kSwizzle, true>(As[(t + 1) % kStages], A, M, K, m0, (t + 1) * kBK);
        load_tile<kSwizzle, true>(Bs[(t + 1) % kStages], B, N, K, n0, (t + 1) * kBK);
      }
      cp_async_commit();
      cp_async_wait_one();  // every group but the newest has landed: this stage is complete
    } else {
      load_tile<kSwizzle, false>(As[0], A, M, K, m0, t * kBK);
      load_tile<kSwizzle, false>(Bs[0], B, N, K, n0, t * kBK);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBK / kInstK; ++kk) {
      FragA a[kFragM];
      FragB b[kFragN];
#pragma unroll
      for (int i = 0; i < kFragM; ++i) load_a<kSwizzle>(a[i], As[s], wm + kInstM * i, kk, lane);
#pragma unroll
      for (int j = 0; j < kFragN; j += 2) load_b2<kSwizzle>(b[j], b[j + 1], Bs[s], wn + kInstN * j, kk, lane);
#pragma unroll
      for (int i = 0; i < kFragM; ++i)
#pragma unroll
        for (int j = 0; j < kFragN; ++j) mma_tile(acc[i][j], a[i], b[j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kFragM; ++i)
#pragma unroll
    for (int j = 0; j < kFragN; ++j)
#pragma unroll
      for (int h = 0; h < kAccPerLane; ++h) {
        const int r = m0 + wm + kInstM * i + acc_row(lane, h), c = n0 + wn + kInstN * j + acc_col(lane, h);
        if (r < M && c < N) C[(size_t)r * N + c] = acc[i][j][h];
      }
}

// Three kernels of their own names, so that a profiler can pick each one out.
__global__ void __launch_bounds__(kThreads) mma_plain(const bf16* A, const bf16* B, float* C, int M, int N, int K) {
  mma_body<false, 1>(A, B, C, M, N, K);
}
__global__ void __launch_bounds__(kThreads) mma_swizzle(const bf16* A, const bf16* B, float* C, int M, int N, int K) {
  mma_body<true, 1>(A, B, C, M, N, K);
}
__global__ void __launch_bounds__(kThreads) mma_pipelined(const bf16* A, const bf16* B, float* C, int M, int N, int K) {
  mma_body<true, 2>(A, B, C, M, N, K);
}

// ---------------------------------------------------------------- the instruction's own ceiling
// No memory at all: every warp keeps kChains independent accumulators in registers and issues the matrix
// instruction on them in a loop, so nothing but the matrix unit limits the rate. With A and B all ones,
// every result ends at kInstK * iters: the check.
constexpr int kChains = 4;  // vendor-specific

__global__ void __launch_bounds__(128) mma_peak(float* out, int iters) {
  const short one = 0x3F80;  // one bf16 one  // vendor-specific
  const FragA a = {one, one, one, one};  // vendor-specific
  const FragB b = {one, one, one, one};  // vendor-specific
  Acc acc[kChains] = {};
  for (int it = 0; it < iters; ++it)
#pragma unroll
    for (int c = 0; c < kChains; ++c) mma_tile(acc[c], a, b);
  float sum = 0.f;
#pragma unroll
  for (int c = 0; c < kChains; ++c)
#pragma unroll
    for (int h = 0; h < kAccPerLane; ++h) sum += acc[c][h];
  out[(size_t)blockIdx.x * blockDim.x + threadIdx.x] = sum / (kAccPerLane * kChains);
}

// ---------------------------------------------------------------- driver
const char* const kVariants[] = {"simt", "mma_plain", "mma_swizzle", "mma_pipelined"};

unsigned blocks(int n, int per_block) { return (unsigned)((n + per_block - 1) / per_block); }

void launch(const std::string& v, const bf16* A, const bf16* B, float* C, int M, int N, int K) {
  const dim3 grid(blocks(N, kBN), blocks(M, kBM));
  if (v == "simt") simt<<<grid, kThreads>>>(A, B, C, M, N, K);
  else if (v == "mma_plain") mma_plain<<<grid, kThreads>>>(A, B, C, M, N, K);
  else if (v == "mma_swizzle") mma_swizzle<<<grid, kThreads>>>(A, B, C, M, N, K);
  else mma_pipelined<<<grid, kThreads>>>(A, B, C, M, N, K);
}

#ifdef TUTOR_HAVE_BLAS
// The vendor BLAS on the same problem. It is column-major: the row-major M x N matrix C is the
// column-major N x M matrix C^T = B A^T, and the row-major N x K matrix B is the column-major K x N B^T,
// hence op T on B and op N on A, both with leading dimension K.
struct Blas {
  hipblasHandle_t h;  // vendor-specific
  Blas() { TUTOR_CHECK_BLAS(hipblasCreate(&h)); }
  ~Blas() { hipblasDestroy(h); }
  void gemm(const bf16* A, const bf16* B, float* C, int M, int N, int K) {
    const float alpha = 1.f, beta = 0.f;
    TUTOR_CHECK_BLAS(hipblasGemmEx(h, HIPBLAS_OP_T, HIPBLAS_OP_N, N, M, K, &alpha, B, HIP_R_16BF, K, A,  // vendor-specific
                                   HIP_R_16BF, K, &beta, C, HIP_R_32F, N, HIPBLAS_COMPUTE_32F,  // vendor-specific
                                   HIPBLAS_GEMM_DEFAULT));  // vendor-specific
  }
};
#endif

// bf16 values drawn uniform in [-1, 1) and rounded: the kernels and the reference see the same numbers.
std::vector<bf16> random_bf16(size_t count, uint64_t seed, std::vector<double>& exact) {
  std::vector<float> f(count);
  tutor::fill_random(f, seed);
  std::vector<bf16> h(count);
  exact.resize(count);
  for (size_t i = 0; i < count; ++i) h[i] = float_to_bf16(f[i]), exact[i] = bf16_to_float(h[i]);
  return h;
}

// Every product of two bf16 is exact in fp32 (8 + 8 significant bits <= 24), so a kernel differs from
// the float64 reference only by how its fp32 additions round. K - 1 additions, each off by at most
// 2^-23 of the running |sum| (a truncating adder; round-to-nearest halves it), bound the error by
// (K - 1) 2^-23 sum_k |a_k b_k|: atol below is that bound at the largest such sum of the matrix.
void verify(int M, int N, int K, uint64_t seed) {
  std::vector<double> a, b;
  std::vector<bf16> ha = random_bf16((size_t)M * K, seed, a), hb = random_bf16((size_t)N * K, seed, b);
  std::vector<float> ref((size_t)M * N), out((size_t)M * N);
  double worst = 0;  // max over C of sum_k |a b|
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0, s_abs = 0;
      for (int k = 0; k < K; ++k) {
        const double p = a[(size_t)i * K + k] * b[(size_t)j * K + k];
        s += p, s_abs += std::fabs(p);
      }
      ref[(size_t)i * N + j] = (float)s;
      worst = std::max(worst, s_abs);
    }
  const double atol = (K - 1) * std::ldexp(1.0, -23) * worst + 1e-6;
  bf16 *dA, *dB;
  float* dC;
  tutor::guarded_malloc(&dA, (size_t)M * K, "A");
  tutor::guarded_malloc(&dB, (size_t)N * K, "B");
  tutor::guarded_malloc(&dC, (size_t)M * N, "C");
  TUTOR_CHECK(hipMemcpy(dA, ha.data(), ha.size() * sizeof(bf16), hipMemcpyHostToDevice));
  TUTOR_CHECK(hipMemcpy(dB, hb.data(), hb.size() * sizeof(bf16), hipMemcpyHostToDevice));
  const std::string size = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
  for (const char* v : kVariants) {
    tutor::poison(dC, out.size() * sizeof(float));
    launch(v, dA, dB, dC, M, N, K);
    TUTOR_CHECK_LAUNCH();
    TUTOR_CHECK(hipMemcpy(out.data(), dC, out.size() * sizeof(float), hipMemcpyDeviceToHost));
    tutor::check_close("mma_gemm", v, size, out.data(), ref.data(), out.size(), seed, atol, 0, N);
  }
#ifdef TUTOR_HAVE_BLAS
  Blas blas;  // the ceiling is checked too: a wrong transpose flag would time a different product
  tutor::poison(dC, out.size() * sizeof(float));
  blas.gemm(dA, dB, dC, M, N, K);
  TUTOR_CHECK_LAUNCH();
  TUTOR_CHECK(hipMemcpy(out.data(), dC, out.size() * sizeof(float), hipMemcpyDeviceToHost));
  tutor::check_close("mma_gemm", "vendor_blas", size, out.data(), ref.data(), out.size(), seed, atol, 0, N);
#endif
  tutor::guarded_free(dA);
  tutor::guarded_free(dB);
  tutor::guarded_free(dC);
}

// The instruction ceiling's check: a few blocks, every output must be exactly 16 * iters.
void verify_peak(uint64_t seed) {
  const int count = 4 * 128, iters = 64;
  float* d;
  tutor::guarded_malloc(&d, count, "out");
  tutor::poison(d, count * sizeof(float));
  mma_peak<<<4, 128>>>(d, iters);
  TUTOR_CHECK_LAUNCH();
  std::vector<float> got(count), want(count, (float)kInstK * iters);
  TUTOR_CHECK(hipMemcpy(got.data(), d, count * sizeof(float), hipMemcpyDeviceToHost));
  tutor::check_close("mma_gemm", "mma_peak", "4x128", got.data(), want.data(), count, seed);
  tutor::guarded_free(d);
}

// TFLOP/s of every variant on n x n x n (2 n^3 FLOP), the vendor BLAS timed in the same run as the ceiling.
void bench(int n) {
  const double flops = 2.0 * n * n * n;
  bf16 *dA, *dB;
  float* dC;
  TUTOR_CHECK(hipMalloc(&dA, (size_t)n * n * sizeof(bf16)));
  TUTOR_CHECK(hipMalloc(&dB, (size_t)n * n * sizeof(bf16)));
  TUTOR_CHECK(hipMalloc(&dC, (size_t)n * n * sizeof(float)));
  std::vector<double> unused;
  std::vector<bf16> h = random_bf16((size_t)n * n, 1, unused);  // random values: zeros would idle the units
  TUTOR_CHECK(hipMemcpy(dA, h.data(), h.size() * sizeof(bf16), hipMemcpyHostToDevice));
  TUTOR_CHECK(hipMemcpy(dB, h.data(), h.size() * sizeof(bf16), hipMemcpyHostToDevice));
  hipDeviceProp_t prop;
  TUTOR_CHECK(hipGetDeviceProperties(&prop, 0));
  const int peak_blocks = prop.multiProcessorCount * 8, peak_iters = 4096;  // 4 warps a block, 32 a unit
  float* dP;
  TUTOR_CHECK(hipMalloc(&dP, (size_t)peak_blocks * 128 * sizeof(float)));
  const float peak_ms = tutor::median_ms([&] { mma_peak<<<peak_blocks, 128>>>(dP, peak_iters); });
  const double peak_flops = 2.0 * kInstM * kInstN * kInstK * kChains * peak_iters * (peak_blocks * 128.0 / tutor::kWarpSize);
  tutor::Ceiling ceiling{"mma.sync register loop", peak_flops / (peak_ms * 1e9), "TFLOP/s"};
#ifdef TUTOR_HAVE_BLAS
  Blas blas;
  const float blas_ms = tutor::median_ms([&] { blas.gemm(dA, dB, dC, n, n, n); });
  ceiling = {"hipBLAS bf16 GEMM (hipblasGemmEx, fp32 accumulate)", flops / (blas_ms * 1e9), "TFLOP/s"};  // vendor-specific
#else
  std::printf("{\"event\": \"skip\", \"lab\": \"mma_gemm\", \"variant\": \"vendor_blas\", \"reason\": \"the toolkit has no BLAS header; the ceiling is the instruction loop\"}\n");
#endif
  tutor::measure("mma_gemm", "mma_peak", "throughput", peak_flops / (peak_ms * 1e9), "TFLOP/s", ceiling, 0, peak_ms);
  for (const char* v : kVariants) {
    const float ms = tutor::median_ms([&] { launch(v, dA, dB, dC, n, n, n); });
    tutor::measure("mma_gemm", v, "throughput", flops / (ms * 1e9), "TFLOP/s", ceiling, 0, ms);
  }
  TUTOR_CHECK(hipFree(dA));
  TUTOR_CHECK(hipFree(dB));
  TUTOR_CHECK(hipFree(dC));
  TUTOR_CHECK(hipFree(dP));
}

int main(int argc, char** argv) {
  tutor::Args args = tutor::parse_args(argc, argv);
  std::vector<std::array<int, 3>> sizes = {{1, 1, 1},     {1, 300, 77},   {77, 1, 300},  {129, 67, 300},
                                           {255, 257, 129}, {200, 136, 64}, {517, 391, 1000}, {384, 256, 4095}};
  if (args.quick) sizes = {{1, 1, 1}, {129, 67, 300}, {200, 136, 64}};
  for (auto [M, N, K] : sizes) verify(M, N, K, args.seed);
  verify_peak(args.seed);
  if (args.bench) bench((int)tutor::arg_int(args, "--n", 4096));
  return tutor::finish("mma_gemm");
}
