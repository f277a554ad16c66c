// A07 mma_gemm (exercise: TODOs 1-3): C = A * B^T with bf16 inputs and fp32 accumulation and output.
// A is M x K and B is N x K, both row-major (K contiguous, as a weight matrix in y = x W^T); C is M x N.
// Five variants, one problem: a SIMT kernel that does one fused multiply-add per lane per instruction,
// three matrix-unit kernels (one matrix instruction per warp multiplies a 16 x 16 by a 16 x 8 tile), and a  // vendor-specific
// register-only loop of matrix instructions that measures how fast the instruction itself can go.
//   build: nvcc -O3 -std=c++17 -arch=sm_90a -I labs/common/cuda labs/A07/cuda/mma_gemm_exercise.cu -o mma_gemm_exercise -lcublas (drop -lcublas where the toolkit has no cuBLAS)  // vendor-specific
//   run:   ./mma_gemm_exercise          checks every variant on odd sizes against a float64 reference
//          ./mma_gemm_exercise --bench  TFLOP/s at 4096 x 4096 x 4096 (--n to change), the vendor BLAS timed beside
#include "tutor_lab.cuh"  // vendor-specific

#include <array>
#if __has_include(<cublas_v2.h>)  // vendor-specific
#include <cublas_v2.h>  // vendor-specific
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
// ldmatrix reads 8 rows of one chunk column per 8 x 8 matrix. Plain layout: row r starts at byte 64 r,  // vendor-specific
// so rows r and r + 2 fall in the same 16-byte bank group (128 bytes = 8 groups): a 4-way conflict.  // vendor-specific
// Swizzled: chunk c of row r is stored at chunk c ^ ((r >> 1) & 3); rows r..r+7 of one logical chunk  // vendor-specific
// then land in 8 different bank groups, conflict-free, and no byte of padding is spent.  // vendor-specific
template <bool kSwizzle>
__device__ __forceinline__ int tile_offset(int row, int chunk) {  // in bf16 elements
  // TODO 1: with kSwizzle, store logical chunk `chunk` of `row` at a physical chunk of the same row chosen so
  // that any 8 consecutive rows of one logical chunk (what one 8 x 8 matrix of ldmatrix reads) fall in 8
  // different 16-byte bank groups of a 128-byte pass; no padding, and the plain layout when !kSwizzle.
  return row * kBK + (chunk << 3);
}

// One 16-byte chunk from global to shared memory without a trip through registers (cp.async, sm_80 on);  // vendor-specific
// a source size of 0 writes 16 zero bytes and reads nothing. The copies land later: see the wait below.  // vendor-specific
__device__ __forceinline__ void copy16_async(bf16* dst, const bf16* src, bool inside) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(dst);  // vendor-specific
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(inside ? 16 : 0));  // vendor-specific
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }  // vendor-specific
__device__ __forceinline__ void cp_async_wait_one() { asm volatile("cp.async.wait_group 1;\n" ::); }  // vendor-specific

// Copies rows [row0, row0 + 128) x columns [k0, k0 + 32) of a rows x K matrix into a stage.
// Whole 16-byte chunks go by cp.async when the rows are 16-byte aligned (K % 8 == 0); edges of the matrix  // vendor-specific
// are filled with zeros so that they add nothing to the sum.  // vendor-specific
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
// mma.sync.m16n8k16 (PTX ISA, "Matrix Fragments for mma.m16n8k16"): one warp, C[16x8] += A[16x16] B[16x8].  // vendor-specific
// With g = lane / 4 and t = lane % 4, each 32-bit register holds two neighbouring bf16 along k:  // vendor-specific
//   A: a[0] = A[g][2t..2t+1], a[1] = A[g+8][2t..], a[2] = A[g][2t+8..], a[3] = A[g+8][2t+8..]  // vendor-specific
//   B: b[0] = B[2t..2t+1][g], b[1] = B[2t+8..2t+9][g]       C: c[0..1] = C[g][2t..2t+1], c[2..3] = C[g+8][2t..]  // vendor-specific
constexpr int kInstM = 16, kInstN = 8, kInstK = 16;  // vendor-specific
constexpr int kAccPerLane = kInstM * kInstN / tutor::kWarpSize;  // fp32 results each lane holds
typedef unsigned FragA[4];  // vendor-specific
typedef unsigned FragB[2];  // vendor-specific
typedef float Acc[kAccPerLane];  // vendor-specific

__device__ __forceinline__ void mma_tile(Acc& c, const FragA& a, const FragB& b) {
  asm volatile(  // vendor-specific
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "  // vendor-specific
      "{%0,%1,%2,%3};\n"  // vendor-specific
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])  // vendor-specific
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));  // vendor-specific
}

// Where result h of a lane sits in the instruction's C tile.
// TODO 3: the row and the column, inside the instruction's C tile, of accumulator h of `lane`, as the
// instruction's fragment layout defines them (every element of the tile exactly once).
__device__ __forceinline__ int acc_row(int lane, int h) { return 0; }  // vendor-specific
__device__ __forceinline__ int acc_col(int lane, int h) { return h; }  // vendor-specific

// ldmatrix.x4 reads four 8 x 8 bf16 matrices from shared memory: lane l gives the address of one 16-byte  // vendor-specific
// row of matrix l / 8 and receives, in register j, the elements (row l / 4, columns 2 (l % 4), +1) of matrix j.  // vendor-specific
__device__ __forceinline__ void ldmatrix_x4(unsigned* r, const bf16* p) {  // vendor-specific
  const unsigned s = (unsigned)__cvta_generic_to_shared(p);  // vendor-specific
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"  // vendor-specific
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(s));  // vendor-specific
}

// The A fragment of rows row0.. and k step kk: matrices (rows 0-7 | 8-15) x (k 0-7 | 8-15) = a[0..3].  // vendor-specific
template <bool kSwizzle>
__device__ __forceinline__ void load_a(FragA& a, const bf16* tile, int row0, int kk, int lane) {
  // TODO 2: each lane's address, so that register j of every lane receives the A elements the instruction's
  // fragment layout (comment above mma_tile) assigns to it, for rows row0.. and the 16 columns of step kk.
  ldmatrix_x4(a, tile + tile_offset<kSwizzle>(row0, 2 * kk));  // vendor-specific
}

// Two B fragments, columns (rows of the N x K tile) row0.. and row0 + kInstN.., from one ldmatrix.x4.  // vendor-specific
template <bool kSwizzle>
__device__ __forceinline__ void load_b2(FragB& b0, FragB& b1, const bf16* tile, int row0, int kk, int lane) {
  unsigned r[4];  // vendor-specific
  ldmatrix_x4(r, tile + tile_offset<kSwizzle>(row0 + lane % 8 + (lane / 16) * 8, 2 * kk + (lane / 8) % 2));  // vendor-specific
  b0[0] = r[0], b0[1] = r[1], b1[0] = r[2], b1[1] = r[3];  // vendor-specific
}

// ---------------------------------------------------------------- matrix-unit GEMM
// 8 warps as 2 (rows) x 4 (columns), each owning a 64 x 32 tile of C: 4 x 4 instruction tiles, 64 fp32  // vendor-specific
// accumulators per lane; per 16-wide k step a warp issues 4 + 2 ldmatrix.x4 and 16 mma.sync.  // vendor-specific
// kStages = 1: load, barrier, compute, barrier. kStages = 2: the next stage is filled while the warps
// compute on this one (double buffering).
constexpr int kWM = 64, kWN = 32;  // vendor-specific
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
constexpr int kChains = 8;  // vendor-specific

__global__ void __launch_bounds__(128) mma_peak(float* out, int iters) {
  const unsigned one = 0x3F803F80u;  // two bf16 ones  // vendor-specific
  const FragA a = {one, one, one, one};  // vendor-specific
  const FragB b = {one, one};  // vendor-specific
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
  cublasHandle_t h;  // vendor-specific
  Blas() { TUTOR_CHECK_BLAS(cublasCreate(&h)); }
  ~Blas() { cublasDestroy(h); }
  void gemm(const bf16* A, const bf16* B, float* C, int M, int N, int K) {
    const float alpha = 1.f, beta = 0.f;
    TUTOR_CHECK_BLAS(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &alpha, B, CUDA_R_16BF, K, A,  // vendor-specific
                                  CUDA_R_16BF, K, &beta, C, CUDA_R_32F, N, CUBLAS_COMPUTE_32F,  // vendor-specific
                                  CUBLAS_GEMM_DEFAULT));  // vendor-specific
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
  TUTOR_CHECK(cudaMemcpy(dA, ha.data(), ha.size() * sizeof(bf16), cudaMemcpyHostToDevice));
  TUTOR_CHECK(cudaMemcpy(dB, hb.data(), hb.size() * sizeof(bf16), cudaMemcpyHostToDevice));
  const std::string size = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
  for (const char* v : kVariants) {
    tutor::poison(dC, out.size() * sizeof(float));
    launch(v, dA, dB, dC, M, N, K);
    TUTOR_CHECK_LAUNCH();
    TUTOR_CHECK(cudaMemcpy(out.data(), dC, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    tutor::check_close("mma_gemm", v, size, out.data(), ref.data(), out.size(), seed, atol, 0, N);
  }
#ifdef TUTOR_HAVE_BLAS
  Blas blas;  // the ceiling is checked too: a wrong transpose flag would time a different product
  tutor::poison(dC, out.size() * sizeof(float));
  blas.gemm(dA, dB, dC, M, N, K);
  TUTOR_CHECK_LAUNCH();
  TUTOR_CHECK(cudaMemcpy(out.data(), dC, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
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
  TUTOR_CHECK(cudaMemcpy(got.data(), d, count * sizeof(float), cudaMemcpyDeviceToHost));
  tutor::check_close("mma_gemm", "mma_peak", "4x128", got.data(), want.data(), count, seed);
  tutor::guarded_free(d);
}

// TFLOP/s of every variant on n x n x n (2 n^3 FLOP), the vendor BLAS timed in the same run as the ceiling.
void bench(int n) {
  const double flops = 2.0 * n * n * n;
  bf16 *dA, *dB;
  float* dC;
  TUTOR_CHECK(cudaMalloc(&dA, (size_t)n * n * sizeof(bf16)));
  TUTOR_CHECK(cudaMalloc(&dB, (size_t)n * n * sizeof(bf16)));
  TUTOR_CHECK(cudaMalloc(&dC, (size_t)n * n * sizeof(float)));
  std::vector<double> unused;
  std::vector<bf16> h = random_bf16((size_t)n * n, 1, unused);  // random values: zeros would idle the units
  TUTOR_CHECK(cudaMemcpy(dA, h.data(), h.size() * sizeof(bf16), cudaMemcpyHostToDevice));
  TUTOR_CHECK(cudaMemcpy(dB, h.data(), h.size() * sizeof(bf16), cudaMemcpyHostToDevice));
  cudaDeviceProp prop;
  TUTOR_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int peak_blocks = prop.multiProcessorCount * 8, peak_iters = 4096;  // 4 warps a block, 32 a unit
  float* dP;
  TUTOR_CHECK(cudaMalloc(&dP, (size_t)peak_blocks * 128 * sizeof(float)));
  const float peak_ms = tutor::median_ms([&] { mma_peak<<<peak_blocks, 128>>>(dP, peak_iters); });
  const double peak_flops = 2.0 * kInstM * kInstN * kInstK * kChains * peak_iters * (peak_blocks * 128.0 / tutor::kWarpSize);
  tutor::Ceiling ceiling{"mma.sync register loop", peak_flops / (peak_ms * 1e9), "TFLOP/s"};
#ifdef TUTOR_HAVE_BLAS
  Blas blas;
  const float blas_ms = tutor::median_ms([&] { blas.gemm(dA, dB, dC, n, n, n); });
  ceiling = {"cuBLAS bf16 GEMM (cublasGemmEx, fp32 accumulate)", flops / (blas_ms * 1e9), "TFLOP/s"};  // vendor-specific
#else
  std::printf("{\"event\": \"skip\", \"lab\": \"mma_gemm\", \"variant\": \"vendor_blas\", \"reason\": \"the toolkit has no BLAS header; the ceiling is the instruction loop\"}\n");
#endif
  tutor::measure("mma_gemm", "mma_peak", "throughput", peak_flops / (peak_ms * 1e9), "TFLOP/s", ceiling, 0, peak_ms);
  for (const char* v : kVariants) {
    const float ms = tutor::median_ms([&] { launch(v, dA, dB, dC, n, n, n); });
    tutor::measure("mma_gemm", v, "throughput", flops / (ms * 1e9), "TFLOP/s", ceiling, 0, ms);
  }
  TUTOR_CHECK(cudaFree(dA));
  TUTOR_CHECK(cudaFree(dB));
  TUTOR_CHECK(cudaFree(dC));
  TUTOR_CHECK(cudaFree(dP));
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
