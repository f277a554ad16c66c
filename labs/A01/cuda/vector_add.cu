// A01 vector_add: c = a + b on float32, the first kernel of the course.
//   build: nvcc -O3 -std=c++17 -arch=sm_90a -I labs/common/cuda labs/A01/cuda/vector_add.cu -o vector_add  // vendor-specific
//   run:   ./vector_add           checks the kernel at several sizes, odd ones included
//          ./vector_add --bench   bandwidth at 2^28 elements (3 GiB of traffic), with the copy ceiling
//   variants: kernel (one float per thread), float4 (four floats per thread, 16-byte loads)
#include "tutor_lab.cuh"  // vendor-specific

// One thread per element. The grid is rounded up to whole blocks, so some threads of the
// last block have i >= n: the bounds check keeps them from touching memory past the end.
__global__ void vector_add(const float* a, const float* b, float* c, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

// Four elements per thread, each input read with one 16-byte float4 load and the result written
// with one 16-byte store: a warp's request carries 512 bytes instead of 128. Thread i owns
// elements 4i..4i+3 of the first 4*(n/4); the n % 4 elements left over (at most 3) are the tail,
// added one float each by the first threads of block 0. float4 accesses need 16-byte aligned
// addresses: cudaMalloc's (and guarded_malloc's) are, and 4i floats from them stay so.
__global__ void vector_add_float4(const float* a, const float* b, float* c, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  size_t n4 = n / 4;
  if (i < n4) {
    float4 x = reinterpret_cast<const float4*>(a)[i];
    float4 y = reinterpret_cast<const float4*>(b)[i];
    reinterpret_cast<float4*>(c)[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
  size_t t = 4 * n4 + i;  // the tail element of thread i, if it has one
  if (t < n) c[t] = a[t] + b[t];
}

constexpr int kBlock = 256;  // threads per block: a multiple of 64 suits both vendors

void launch(const float* a, const float* b, float* c, size_t n) {
  unsigned grid = (unsigned)((n + kBlock - 1) / kBlock);
  vector_add<<<grid, kBlock>>>(a, b, c, n);
}

// One thread per group of four elements, rounded up, so that n < 4 (the tail alone) still
// launches one block.
void launch_float4(const float* a, const float* b, float* c, size_t n) {
  size_t threads = (n + 3) / 4;
  unsigned grid = (unsigned)((threads + kBlock - 1) / kBlock);
  vector_add_float4<<<grid, kBlock>>>(a, b, c, n);
}

using Launch = void (*)(const float*, const float*, float*, size_t);
struct Variant {
  const char* name;
  Launch launch;
};
const Variant kVariants[] = {{"kernel", launch}, {"float4", launch_float4}};

// Runs one variant once on fresh random inputs of n elements and compares with the CPU.
void verify(const Variant& v, size_t n, uint64_t seed) {
  std::vector<float> a(n), b(n), c(n), ref(n);
  tutor::fill_random(a, seed);
  tutor::fill_random(b, seed);
  for (size_t i = 0; i < n; ++i) ref[i] = a[i] + b[i];

  const size_t bytes = n * sizeof(float);
  float *da, *db, *dc;
  tutor::guarded_malloc(&da, n, "a");
  tutor::guarded_malloc(&db, n, "b");
  tutor::guarded_malloc(&dc, n, "c");
  TUTOR_CHECK(cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice));
  TUTOR_CHECK(cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice));
  tutor::poison(dc, bytes);
  v.launch(da, db, dc, n);
  TUTOR_CHECK_LAUNCH();
  TUTOR_CHECK(cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost));
  tutor::guarded_free(da);
  tutor::guarded_free(db);
  tutor::guarded_free(dc);
  // One IEEE float addition on each side: the results must be bit-identical.
  tutor::check_close("vector_add", v.name, std::to_string(n), c.data(), ref.data(), n, seed);
}

// Times each variant on n elements: 4 bytes read from a, 4 from b, 4 written to c, against one
// copy ceiling measured in the same run.
void bench(size_t n) {
  const size_t bytes = n * sizeof(float);
  float *da, *db, *dc;
  TUTOR_CHECK(cudaMalloc(&da, bytes));
  TUTOR_CHECK(cudaMalloc(&db, bytes));
  TUTOR_CHECK(cudaMalloc(&dc, bytes));
  TUTOR_CHECK(cudaMemset(da, 0, bytes));  // the values do not change the speed of an add
  TUTOR_CHECK(cudaMemset(db, 0, bytes));
  tutor::Ceiling ceiling = tutor::copy_ceiling(bytes);
  double traffic = 3.0 * bytes;
  for (const Variant& v : kVariants) {
    float ms = tutor::median_ms([&] { v.launch(da, db, dc, n); });
    tutor::measure("vector_add", v.name, "bandwidth", tutor::gbps(traffic, ms), "GB/s", ceiling,
                   traffic, ms);
  }
  TUTOR_CHECK(cudaFree(da));
  TUTOR_CHECK(cudaFree(db));
  TUTOR_CHECK(cudaFree(dc));
}

int main(int argc, char** argv) {
  tutor::Args args = tutor::parse_args(argc, argv);
  // Tails of 0 to 3 elements for float4: 1000, 4097, 1002, 3 (and 2^20 + 7).
  std::vector<size_t> sizes = {1, 3, 1000, 1002, 4097, size_t(1) << 20, (size_t(1) << 20) + 7};
  if (args.quick) sizes = {1, 3, 1000, 1002, 4097};
  for (const Variant& v : kVariants)
    for (size_t n : sizes) verify(v, n, args.seed);
  if (args.bench) bench((size_t)tutor::arg_int(args, "--n", 1ll << 28));
  return tutor::finish("vector_add");
}
