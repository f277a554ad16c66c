// A01 vector_add, exercise: write the kernel. The worked solution is vector_add.cu.  // vendor-specific
//   build: nvcc -O3 -std=c++17 -arch=sm_90a -I labs/common/cuda labs/A01/cuda/vector_add_exercise.cu -o vector_add  // vendor-specific
//   run:   ./vector_add           checks the kernel at several sizes, odd ones included
//          ./vector_add --bench   bandwidth at 2^28 elements (3 GiB of traffic), with the copy ceiling
#include "tutor_lab.cuh"  // vendor-specific

// One thread per element. The grid is rounded up to whole blocks, so some threads of the
// last block have i >= n: the bounds check keeps them from touching memory past the end.
__global__ void vector_add(const float* a, const float* b, float* c, size_t n) {
  // TODO 1: i, this thread's element: the threads of the whole grid take consecutive elements, block
  //         after block (blockIdx.x, blockDim.x, threadIdx.x), and i must not wrap for n >= 2^32.
  // TODO 2: the last block has threads past the end: only a thread whose element exists writes c = a + b.
  // Until then c keeps its NaN poison and every check below fails.
}

constexpr int kBlock = 256;  // threads per block: a multiple of 64 suits both vendors

void launch(const float* a, const float* b, float* c, size_t n) {
  unsigned grid = (unsigned)((n + kBlock - 1) / kBlock);
  vector_add<<<grid, kBlock>>>(a, b, c, n);
}

// Runs the kernel once on fresh random inputs of n elements and compares with the CPU.
void verify(size_t n, uint64_t seed) {
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
  launch(da, db, dc, n);
  TUTOR_CHECK_LAUNCH();
  TUTOR_CHECK(cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost));
  tutor::guarded_free(da);
  tutor::guarded_free(db);
  tutor::guarded_free(dc);
  // One IEEE float addition on each side: the results must be bit-identical.
  tutor::check_close("vector_add", "kernel", std::to_string(n), c.data(), ref.data(), n, seed);
}

// Times the kernel on n elements: 4 bytes read from a, 4 from b, 4 written to c.
void bench(size_t n) {
  const size_t bytes = n * sizeof(float);
  float *da, *db, *dc;
  TUTOR_CHECK(cudaMalloc(&da, bytes));
  TUTOR_CHECK(cudaMalloc(&db, bytes));
  TUTOR_CHECK(cudaMalloc(&dc, bytes));
  TUTOR_CHECK(cudaMemset(da, 0, bytes));  // the values do not change the speed of an add
  TUTOR_CHECK(cudaMemset(db, 0, bytes));
  float ms = tutor::median_ms([&] { launch(da, db, dc, n); });
  tutor::Ceiling ceiling = tutor::copy_ceiling(bytes);
  double traffic = 3.0 * bytes;
  tutor::measure("vector_add", "kernel", "bandwidth", tutor::gbps(traffic, ms), "GB/s", ceiling,
                 traffic, ms);
  TUTOR_CHECK(cudaFree(da));
  TUTOR_CHECK(cudaFree(db));
  TUTOR_CHECK(cudaFree(dc));
}

int main(int argc, char** argv) {
  tutor::Args args = tutor::parse_args(argc, argv);
  std::vector<size_t> sizes = {1, 3, 1000, 4097, size_t(1) << 20, (size_t(1) << 20) + 7};
  if (args.quick) sizes = {1, 3, 1000, 4097};
  for (size_t n : sizes) verify(n, args.seed);
  if (args.bench) bench((size_t)tutor::arg_int(args, "--n", 1ll << 28));
  return tutor::finish("vector_add");
}
