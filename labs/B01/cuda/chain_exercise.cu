// B01 chain, exercise: finish the chain on registers and the tail (solution in the same
// folder). k cheap elementwise operations on n float32 values, as k kernels (unfused) or one (fused).
// Operation j (j = 0, 1, ..., k - 1) is y = max(x * s_j + t_j, -1), with s_j = 1 - j / 32 and
// t_j = (j mod 4) / 16 - 3 / 32: one fused multiply-add and one max, so memory bounds every variant.
//   build: nvcc -O3 -std=c++17 -arch=sm_90a -I labs/common/cuda labs/B01/cuda/chain_exercise.cu -o chain  // vendor-specific
//   run:   ./chain            checks the three variants, k = 1, 2, 4, 8, on odd sizes (bit for bit)
//          ./chain --bench    GB/s of 8 bytes an element on 2^28 floats (1 GiB), with the copy ceiling
#include "tutor_lab.cuh"  // vendor-specific

constexpr int kBlock = 256;                     // threads per block
const int kChainLengths[] = {1, 2, 4, 8};

// Operation j of the chain. fmaf rounds once on the GPU and on the host alike, so the host's
// reference is exact to the bit.
__host__ __device__ inline float op(float x, int j) {
  const float s = 1.0f - j / 32.0f, t = (j % 4) / 16.0f - 3.0f / 32.0f;
  return fmaxf(fmaf(x, s, t), -1.0f);
}

// Operations first .. first + count - 1 on one value, held in a register between them.
__device__ inline float apply(float x, int first, int count) {
  // TODO 1: x goes through operations first, first + 1, ..., first + count - 1, in that order, and
  //         stays in a register between them (no load or store of memory here).
  return x;
}

// Thread i owns float4 number i (elements 4i .. 4i + 3), one 16-byte load and one 16-byte store; the
// n % 4 elements past the last whole float4 go to threads 0, 1, 2, one each.
__device__ inline void chain_range(const float* in, float* out, size_t n, int first, int count) {
  const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  const size_t n4 = n / 4;
  if (i < n4) {
    float4 v = reinterpret_cast<const float4*>(in)[i];  // cudaMalloc'd: 256-byte aligned
    v.x = apply(v.x, first, count);
    v.y = apply(v.y, first, count);
    v.z = apply(v.z, first, count);
    v.w = apply(v.w, first, count);
    reinterpret_cast<float4*>(out)[i] = v;
  }
  // TODO 2: the n % 4 elements past the last whole float4 are computed and written too, each by one
  //         thread, and no thread touches an element at or past n.
}

// unfused: one launch per operation; every launch reads n floats and writes n floats.
__global__ void __launch_bounds__(kBlock) op_step(const float* in, float* out, size_t n, int j) {
  chain_range(in, out, n, j, 1);
}

// fused: one launch for the whole chain; the k operations run on registers. K is a template
// argument, so the loop unrolls and every s_j and t_j is a constant: 2 instructions an operation.
template <int K>
__global__ void __launch_bounds__(kBlock) chain_fused(const float* in, float* out, size_t n) {
  chain_range(in, out, n, 0, K);
}

// The same fused kernel with k read at run time: each operation of each element also turns j into
// s_j and t_j (a conversion, a multiply, integer and float steps) before its 2 instructions.
__global__ void __launch_bounds__(kBlock) chain_fused_runtime(const float* in, float* out, size_t n, int k) {
  chain_range(in, out, n, 0, k);
}

// ---------------------------------------------------------------- driver
unsigned grid(size_t n) { return (unsigned)std::max<size_t>(1, (n / 4 + kBlock - 1) / kBlock); }

// The unfused launches alternate between out and tmp so that the last one writes out.
void unfused(const float* in, float* out, float* tmp, size_t n, int k) {
  const float* src = in;
  for (int j = 0; j < k; ++j) {
    float* dst = (k - 1 - j) % 2 == 0 ? out : tmp;
    op_step<<<grid(n), kBlock>>>(src, dst, n, j);
    src = dst;
  }
}

void fused(const float* in, float* out, size_t n, int k) {
  switch (k) {
    case 1: chain_fused<1><<<grid(n), kBlock>>>(in, out, n); break;
    case 2: chain_fused<2><<<grid(n), kBlock>>>(in, out, n); break;
    case 4: chain_fused<4><<<grid(n), kBlock>>>(in, out, n); break;
    case 8: chain_fused<8><<<grid(n), kBlock>>>(in, out, n); break;
    default: std::fprintf(stderr, "chain: no fused kernel for k = %d\n", k); std::exit(2);
  }
}

void fused_runtime(const float* in, float* out, size_t n, int k) {
  chain_fused_runtime<<<grid(n), kBlock>>>(in, out, n, k);
}

// The three variants, in the order every loop below runs them.
const char* const kVariants[] = {"unfused_", "fused_", "fused_runtime_"};

void run(int variant, const float* in, float* out, float* tmp, size_t n, int k) {
  if (variant == 0) unfused(in, out, tmp, n, k);
  else if (variant == 1) fused(in, out, n, k);
  else fused_runtime(in, out, n, k);
}

std::vector<float> reference(const std::vector<float>& in, int k) {
  std::vector<float> ref(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    float x = in[i];
    for (int j = 0; j < k; ++j) x = op(x, j);
    ref[i] = x;
  }
  return ref;
}

// The three variants for every chain length on fresh inputs in [-2, 2), outputs poisoned first: each
// operation rounds once, the same way on both sides, so the result must match bit for bit.
void verify(size_t n, uint64_t seed) {
  std::vector<float> in(n), got(n);
  tutor::fill_random(in, seed, -2.0f, 2.0f);
  float *din, *dout, *dtmp;
  tutor::guarded_malloc(&din, n, "x");
  tutor::guarded_malloc(&dout, n, "y");
  tutor::guarded_malloc(&dtmp, n, "tmp");
  TUTOR_CHECK(cudaMemcpy(din, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const std::string size = std::to_string(n);
  for (int k : kChainLengths) {
    const std::vector<float> ref = reference(in, k);
    for (int variant = 0; variant < 3; ++variant) {
      tutor::poison(dout, n * sizeof(float));
      tutor::poison(dtmp, n * sizeof(float));
      run(variant, din, dout, dtmp, n, k);
      TUTOR_CHECK_LAUNCH();
      TUTOR_CHECK(cudaMemcpy(got.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
      const std::string name = kVariants[variant] + std::to_string(k);
      tutor::check_close("chain", name.c_str(), size, got.data(), ref.data(), n, seed, 0, 0);
    }
  }
  tutor::guarded_free(din);
  tutor::guarded_free(dout);
  tutor::guarded_free(dtmp);
}

// Every variant is credited with the 8 bytes an element the chain needs at least (read x, write y),
// so its GB/s is proportional to its speed; "bytes" records what it really moves, 8 k n unfused.
// The copy ceiling counts bytes read plus bytes written per second. Each timed result is checked.
void bench(size_t n, uint64_t seed) {
  const size_t bytes = n * sizeof(float);
  std::vector<float> in(n), got(n);
  tutor::fill_random(in, seed, -2.0f, 2.0f);
  float *din, *dout, *dtmp;
  TUTOR_CHECK(cudaMalloc(&din, bytes));
  TUTOR_CHECK(cudaMalloc(&dout, bytes));
  TUTOR_CHECK(cudaMalloc(&dtmp, bytes));
  TUTOR_CHECK(cudaMemcpy(din, in.data(), bytes, cudaMemcpyHostToDevice));
  const tutor::Ceiling ceiling = tutor::copy_ceiling(bytes);
  const double useful = 8.0 * n;
  for (int k : kChainLengths) {
    const std::vector<float> ref = reference(in, k);
    for (int variant = 0; variant < 3; ++variant) {
      const std::string name = kVariants[variant] + std::to_string(k);
      tutor::poison(dout, bytes);
      float ms = tutor::timed_ms([&] { run(variant, din, dout, dtmp, n, k); });
      const double moved = variant == 0 ? useful * k : useful;
      tutor::measure("chain", name.c_str(), "bandwidth", tutor::gbps(useful, ms), "GB/s", ceiling, moved, ms);
      TUTOR_CHECK(cudaMemcpy(got.data(), dout, bytes, cudaMemcpyDeviceToHost));
      tutor::check_close("chain", (name + "_bench").c_str(), std::to_string(n), got.data(), ref.data(), n, seed, 0, 0);
    }
  }
  TUTOR_CHECK(cudaFree(din));
  TUTOR_CHECK(cudaFree(dout));
  TUTOR_CHECK(cudaFree(dtmp));
}

int main(int argc, char** argv) {
  tutor::Args args = tutor::parse_args(argc, argv);
  // 1, 2, 3: no whole float4, the tail alone; 1027 = 4 x 256 + 3: one block of float4s and a tail.
  std::vector<size_t> sizes = {1, 2, 3, 7, 1027, 4097, 100003, (1u << 20) + 7, (1u << 24) + 3};
  if (args.quick) sizes = {1, 3, 7, 1027, 100003};
  for (size_t n : sizes) verify(n, args.seed);
  if (args.bench) bench((size_t)tutor::arg_int(args, "--n", 1ll << 28), args.seed);
  return tutor::finish("chain");
}
