// B02 gemm_accum, exercise: round the bf16 accumulator (TODO 1) and guard the store (TODO 2); solution: gemm_accum.cu.  // vendor-specific
// C = A B^T with bf16 inputs, accumulated in fp32 or in bf16, and the error of each as K grows.
// A is M x K and B is N x K, both row-major (K contiguous, as a weight matrix in y = x W^T); C is M x N, fp32.
//   fp32acc   acc = fma(a, b, acc) in fp32, k = 0, 1, ..., K-1 in order
//   bf16acc   the same, and the accumulator rounded to bf16 after every step (ties to even)
// A product of two bf16 values has at most 16 significant bits, so it is exact in fp32: an fma and a
// multiply followed by an add give the same bits, and the host reproduces every kernel bit for bit.
//   build: nvcc -O3 -std=c++17 -arch=sm_90a -I labs/common/cuda labs/B02/cuda/gemm_accum_exercise.cu -o gemm_accum_exercise -lcublas  // vendor-specific
//   run:   ./gemm_accum_exercise           checks both kernels bit for bit against the host, odd sizes included
//          ./gemm_accum_exercise --bench   the relative error at K = 256 ... 16384, and TFLOP/s beside the vendor BLAS
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tutor_lab.cuh"  // vendor-specific
#if __has_include(<cublas_v2.h>)  // vendor-specific
#include <cublas_v2.h>  // vendor-specific
#define TUTOR_HAVE_BLAS 1
#define TUTOR_CHECK_BLAS(call) \
  do { \
    const int status_ = (int)(call); \
    if (status_ != 0) std::fprintf(stderr, "error: %s returned status %d\n", #call, status_), std::exit(2); \
  } while (0)
#endif

typedef uint16_t bf16;  // raw bf16 words: the top half of an fp32
constexpr int kTile = 16;  // a kTile x kTile block of threads, one output element each (256 threads)

__host__ __device__ inline uint32_t f32_bits(float x) { uint32_t b; memcpy(&b, &x, 4); return b; }
__host__ __device__ inline float bits_f32(uint32_t b) { float x; memcpy(&x, &b, 4); return x; }
__host__ __device__ inline float widen(bf16 h) { return bits_f32((uint32_t)h << 16); }

// Round a finite fp32 to the nearest bf16, ties to even; returned as an fp32.
__host__ __device__ inline float round_bf16(float x) {
  const uint32_t b = f32_bits(x);
  return bits_f32((b + 0x7FFFu + ((b >> 16) & 1u)) & 0xFFFF0000u);
}

// One step of the dot product in the accumulator's format.
template <bool Bf16>
__host__ __device__ inline float mac(float acc, float a, float b) {
  const float s = acc + a * b;  // a * b is exact, so this is fma(a, b, acc)
  // TODO 1: a bf16 accumulator holds only bf16 values: what must happen to s before it is kept?
  return s;
}

// ------------------------------------------------------------------ the kernel
// Tiles of A and B go through shared memory; every thread still adds its K products in order k = 0, 1, ...
template <bool Bf16>
__global__ void gemm_kernel(const bf16* A, const bf16* B, float* C, int M, int N, int K) {
  __shared__ float As[kTile][kTile + 1];
  __shared__ float Bs[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kTile + ty, col = blockIdx.x * kTile + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += kTile) {
    // Thread (ty, tx) loads A[row][k0 + tx] and B[blockIdx.x * kTile + ty][k0 + tx]: K-contiguous reads.
    const int ka = k0 + tx, brow = blockIdx.x * kTile + ty;
    As[ty][tx] = row < M && ka < K ? widen(A[(size_t)row * K + ka]) : 0.0f;
    Bs[ty][tx] = brow < N && ka < K ? widen(B[(size_t)brow * K + ka]) : 0.0f;
    __syncthreads();
    const int kend = K - k0 < kTile ? K - k0 : kTile;  // no padded zero enters the sum
    for (int kk = 0; kk < kend; ++kk) acc = mac<Bf16>(acc, As[ty][kk], Bs[tx][kk]);
    __syncthreads();
  }
  // TODO 2: store acc to C[row][col]; no thread may write outside the M x N matrix C.
  C[(size_t)row * N + col] = acc;
}

void launch(const std::string& v, const bf16* A, const bf16* B, float* C, int M, int N, int K) {
  const dim3 block(kTile, kTile), grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
  if (v == "fp32acc") gemm_kernel<false><<<grid, block>>>(A, B, C, M, N, K);
  if (v == "bf16acc") gemm_kernel<true><<<grid, block>>>(A, B, C, M, N, K);
}

#ifdef TUTOR_HAVE_BLAS
// The vendor BLAS, column-major: row-major C (M x N) is column-major C^T = B A^T; row-major B (N x K) is
// column-major B^T (K x N), hence op T on B and op N on A, both with leading dimension K.
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

// ------------------------------------------------------------------ host references
// Values uniform in [0, 1), rounded to bf16: non-negative, like the inputs after a ReLU, so the sums grow.
std::vector<bf16> random_bf16(size_t count, uint64_t seed) {
  std::vector<float> f(count);
  tutor::fill_random(f, seed, 0.0f, 1.0f);
  std::vector<bf16> h(count);
  for (size_t i = 0; i < count; ++i) h[i] = (bf16)(f32_bits(round_bf16(f[i])) >> 16);
  return h;
}

// One step of the dot product on the host, in the worked solution's arithmetic, never the TODO above:
// a mac that forgets to round cannot agree with it.
float ref_mac(bool bf, float acc, float a, float b) {
  const float s = acc + a * b;
  return bf ? round_bf16(s) : s;
}

// The kernels' arithmetic on the host, in the kernels' order.
std::vector<float> ref_gemm(bool bf, const std::vector<bf16>& A, const std::vector<bf16>& B, int M, int N, int K) {
  std::vector<float> C((size_t)M * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (int k = 0; k < K; ++k) {
        const float a = widen(A[(size_t)i * K + k]), b = widen(B[(size_t)j * K + k]);
        acc = ref_mac(bf, acc, a, b);
      }
      C[(size_t)i * N + j] = acc;
    }
  return C;
}

// The product of the same bf16 inputs in float64: each product is exact and the sum's own rounding,
// at most about K 2^-53 relative, is far below every error this lab measures.
std::vector<double> exact_gemm(const std::vector<bf16>& A, const std::vector<bf16>& B, int M, int N, int K) {
  std::vector<double> C((size_t)M * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double acc = 0.0;
      for (int k = 0; k < K; ++k) acc += (double)widen(A[(size_t)i * K + k]) * widen(B[(size_t)j * K + k]);
      C[(size_t)i * N + j] = acc;
    }
  return C;
}

// ||C - exact||_F / ||exact||_F
double rel_error(const std::vector<float>& C, const std::vector<double>& exact) {
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < C.size(); ++i) {
    num += (C[i] - exact[i]) * (C[i] - exact[i]);
    den += exact[i] * exact[i];
  }
  return std::sqrt(num / den);
}

// ------------------------------------------------------------------ checks
const std::vector<std::string> kVariants = {"fp32acc", "bf16acc"};

struct Device {
  bf16 *A = nullptr, *B = nullptr;
  float* C = nullptr;
};

// Uploads A and B, runs v into a poisoned C, returns C.
std::vector<float> run_on_device(const std::string& v, const std::vector<bf16>& A, const std::vector<bf16>& B,
                                 int M, int N, int K) {
  Device d;
  tutor::guarded_malloc(&d.A, A.size(), "A");
  tutor::guarded_malloc(&d.B, B.size(), "B");
  tutor::guarded_malloc(&d.C, (size_t)M * N, "C");
  TUTOR_CHECK(cudaMemcpy(d.A, A.data(), A.size() * sizeof(bf16), cudaMemcpyHostToDevice));
  TUTOR_CHECK(cudaMemcpy(d.B, B.data(), B.size() * sizeof(bf16), cudaMemcpyHostToDevice));
  tutor::poison(d.C, (size_t)M * N * sizeof(float));
  launch(v, d.A, d.B, d.C, M, N, K);
  TUTOR_CHECK_LAUNCH();
  std::vector<float> C((size_t)M * N);
  TUTOR_CHECK(cudaMemcpy(C.data(), d.C, C.size() * sizeof(float), cudaMemcpyDeviceToHost));
  tutor::guarded_free(d.A);
  tutor::guarded_free(d.B);
  tutor::guarded_free(d.C);
  return C;
}

void verify(const std::string& v, int M, int N, int K, uint64_t seed) {
  const std::vector<bf16> A = random_bf16((size_t)M * K, seed), B = random_bf16((size_t)N * K, seed + 1);
  const std::vector<float> want = ref_gemm(v == "bf16acc", A, B, M, N, K);
  const std::vector<float> got = run_on_device(v, A, B, M, N, K);
  const std::string size = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
  tutor::check_close("gemm_accum", v.c_str(), size, got.data(), want.data(), got.size(), seed, 0.0, 0.0, N);
}

// ------------------------------------------------------------------ bench
// The error as K grows, M = N = 128: each kernel's C against the exact product, beside the first-order
// bound K u of the accumulator's unit roundoff u (2^-24 for fp32, 2^-8 for bf16).
void bench_error(int K) {
  const int M = 128, N = 128;
  const std::vector<bf16> A = random_bf16((size_t)M * K, 11), B = random_bf16((size_t)N * K, 12);
  const std::vector<double> exact = exact_gemm(A, B, M, N, K);
  for (const std::string& v : kVariants) {
    const double err = rel_error(run_on_device(v, A, B, M, N, K), exact);
    const double bound = K * std::ldexp(1.0, v == "bf16acc" ? -8 : -24);
    const std::string name = "err_" + v + "_k" + std::to_string(K);
    tutor::measure("gemm_accum", name.c_str(), "relative error", err, "", {"first-order bound K u", bound, ""});
  }
#ifdef TUTOR_HAVE_BLAS
  Device d;
  TUTOR_CHECK(cudaMalloc(&d.A, A.size() * sizeof(bf16)));
  TUTOR_CHECK(cudaMalloc(&d.B, B.size() * sizeof(bf16)));
  TUTOR_CHECK(cudaMalloc(&d.C, (size_t)M * N * sizeof(float)));
  TUTOR_CHECK(cudaMemcpy(d.A, A.data(), A.size() * sizeof(bf16), cudaMemcpyHostToDevice));
  TUTOR_CHECK(cudaMemcpy(d.B, B.data(), B.size() * sizeof(bf16), cudaMemcpyHostToDevice));
  { Blas blas; blas.gemm(d.A, d.B, d.C, M, N, K); }
  std::vector<float> C((size_t)M * N);
  TUTOR_CHECK(cudaMemcpy(C.data(), d.C, C.size() * sizeof(float), cudaMemcpyDeviceToHost));
  const std::string name = "err_blas_k" + std::to_string(K);
  tutor::measure("gemm_accum", name.c_str(), "relative error", rel_error(C, exact), "",
                 {"first-order bound K u", K * std::ldexp(1.0, -24), ""});
  TUTOR_CHECK(cudaFree(d.A));
  TUTOR_CHECK(cudaFree(d.B));
  TUTOR_CHECK(cudaFree(d.C));
#endif
}

// What each accumulation costs: TFLOP/s at n x n x n, beside the vendor BLAS timed in the same run.
void bench_speed(int n) {
  Device d;
  TUTOR_CHECK(cudaMalloc(&d.A, (size_t)n * n * sizeof(bf16)));
  TUTOR_CHECK(cudaMalloc(&d.B, (size_t)n * n * sizeof(bf16)));
  TUTOR_CHECK(cudaMalloc(&d.C, (size_t)n * n * sizeof(float)));
  const std::vector<bf16> A = random_bf16((size_t)n * n, 13);  // never time on zeros
  TUTOR_CHECK(cudaMemcpy(d.A, A.data(), A.size() * sizeof(bf16), cudaMemcpyHostToDevice));
  TUTOR_CHECK(cudaMemcpy(d.B, A.data(), A.size() * sizeof(bf16), cudaMemcpyHostToDevice));
  const double flops = 2.0 * n * n * n;
  tutor::Ceiling ceiling{"no vendor BLAS in this build", 0.0, "TFLOP/s"};
#ifdef TUTOR_HAVE_BLAS
  Blas blas;
  const float blas_ms = tutor::timed_ms([&] { blas.gemm(d.A, d.B, d.C, n, n, n); });
  ceiling = {"cuBLAS bf16 GEMM (cublasGemmEx, fp32 accumulate)", flops / (blas_ms * 1e9), "TFLOP/s"};  // vendor-specific
  tutor::measure("gemm_accum", "tflops_blas", "throughput", ceiling.value, "TFLOP/s", ceiling, 0, blas_ms);
#else
  std::printf("{\"event\": \"skip\", \"lab\": \"gemm_accum\", \"variant\": \"tflops_blas\", \"reason\": \"the toolkit has no BLAS header\"}\n");
#endif
  for (const std::string& v : kVariants) {
    const float ms = tutor::timed_ms([&] { launch(v, d.A, d.B, d.C, n, n, n); }, tutor::Timing{1, 5, true, true});
    tutor::measure("gemm_accum", ("tflops_" + v).c_str(), "throughput", flops / (ms * 1e9), "TFLOP/s", ceiling, 0, ms);
  }
  TUTOR_CHECK(cudaFree(d.A));
  TUTOR_CHECK(cudaFree(d.B));
  TUTOR_CHECK(cudaFree(d.C));
}

int main(int argc, char** argv) {
  tutor::Args args = tutor::parse_args(argc, argv);
  if (args.bench) {
    for (int K : {256, 1024, 4096, 16384}) bench_error(K);
    bench_speed(4096);
    return tutor::finish("gemm_accum");
  }
  // None a multiple of the 16 x 16 tile but the last M; K = 1000 and 4099 end inside a tile.
  struct Shape { int M, N, K; };
  std::vector<Shape> shapes = {{1, 1, 1}, {17, 33, 100}, {70, 45, 1000}, {64, 37, 4099}};
  if (args.quick) shapes.pop_back();
  for (const std::string& v : kVariants)
    for (const Shape& s : shapes) verify(v, s.M, s.N, s.K, args.seed);
  return tutor::finish("gemm_accum");
}
