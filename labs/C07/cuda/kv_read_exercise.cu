// C07 kv_read (exercise: complete the two TODOs, then run it until every check passes): how fast can a decode step read a paged KV cache?
// The cache is a pool of physical blocks of `block` tokens; each sequence owns a list of blocks
// (its block table), in any order, the way PagedAttention lays it out. Every block holds, per
// token and per KV head, a row of 128 bf16 values of K and one of V: 256 bytes each.
// The kernel reads every cached row of every sequence once and sums K + V over the tokens, per
// sequence, head and dimension: the same bytes decode attention reads, with almost no math, so
// its time is the time of the read. Variants: the block table in order (identity) or shuffled,
// with 16-token blocks and 1-token blocks.
//   build (CUDA): nvcc -O3 -std=c++17 -arch=sm_90a -I labs/common/cuda labs/C07/cuda/kv_read_exercise.cu -o kv_read
//   build (HIP):  hipcc -O3 -std=c++17 --offload-arch=gfx942 -I labs/common/hip labs/C07/hip/kv_read_exercise.hip -o kv_read
//   run:   ./kv_read            checks every variant on odd sequence lengths against the CPU
//          ./kv_read --bench    GB/s of KV read, 64 sequences x 4096 tokens, vs the copy ceiling
#include "tutor_lab.cuh"  // vendor-specific

#include <numeric>

constexpr int kHeadDim = 128;                 // values per row (Llama 3 head_dim)
constexpr int kVec = 8;                       // bf16 values per 16-byte load
constexpr int kLanesPerRow = kHeadDim / kVec;  // 16 threads read one 256-byte row
constexpr int kThreads = 256;                 // a multiple of 64: portable block size
constexpr int kSlots = kThreads / kLanesPerRow;  // 16 tokens in flight per block

// bf16 is the top half of a float32: widening is a 16-bit shift, identical on both vendors.
__host__ __device__ inline float bf16_to_float(uint16_t b) {
  uint32_t u = uint32_t(b) << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

// One block per (sequence, KV head). Thread (slot, lane) reads 8 values of K and of V from
// the tokens slot, slot + 16, ...; the 16 slots are then summed through shared memory.
// k, v: [num_blocks][block][kv_heads][kHeadDim] bf16; table: [num_seqs][max_blocks] int32.
__global__ void kv_read(const uint16_t* __restrict__ k, const uint16_t* __restrict__ v,
                        const int* __restrict__ table, const int* __restrict__ lens,
                        float* __restrict__ out, int kv_heads, int block, int max_blocks) {
  __shared__ float part[kSlots][kHeadDim];
  int seq = blockIdx.x / kv_heads, head = blockIdx.x % kv_heads;
  int lane = threadIdx.x % kLanesPerRow, slot = threadIdx.x / kLanesPerRow;
  float acc[kVec] = {};
  for (int t = slot; t < lens[seq]; t += kSlots) {
    // TODO 1: phys, the physical block of the pool that holds token t of sequence seq, looked up in
    //         the block table: [num_seqs][max_blocks] entries, a row per sequence, in logical order.
    int phys = 0;
    // TODO 2: row, the index of (token t, this head) among the pool's rows, which are laid out as
    //         [num_blocks][block][kv_heads] rows of kHeadDim values; it must not overflow an int.
    size_t row = 0;
    (void)table; (void)phys; (void)head;
    uint4 kq = reinterpret_cast<const uint4*>(k + row * kHeadDim)[lane];
    uint4 vq = reinterpret_cast<const uint4*>(v + row * kHeadDim)[lane];
    const uint16_t* kh = reinterpret_cast<const uint16_t*>(&kq);
    const uint16_t* vh = reinterpret_cast<const uint16_t*>(&vq);
#pragma unroll
    for (int i = 0; i < kVec; ++i) acc[i] += bf16_to_float(kh[i]) + bf16_to_float(vh[i]);
  }
#pragma unroll
  for (int i = 0; i < kVec; ++i) part[slot][lane * kVec + i] = acc[i];
  __syncthreads();
  if (threadIdx.x < kHeadDim) {
    float s = 0.0f;
    for (int j = 0; j < kSlots; ++j) s += part[j][threadIdx.x];
    out[(size_t)blockIdx.x * kHeadDim + threadIdx.x] = s;
  }
}

// ---------------------------------------------------------------- host side
struct Cache {
  int seqs, kv_heads, block, max_blocks, num_blocks;
  std::vector<int> lens, table;
  std::vector<uint16_t> k, v;
};

// Random bf16 values in [-1, 1): the top 16 bits of random floats.
static std::vector<uint16_t> random_bf16(size_t n, uint64_t seed) {
  std::vector<float> f(n);
  tutor::fill_random(f, seed);
  std::vector<uint16_t> b(n);
  for (size_t i = 0; i < n; ++i) {
    uint32_t u;
    memcpy(&u, &f[i], sizeof u);
    b[i] = uint16_t(u >> 16);
  }
  return b;
}

// Sequences of the given lengths; their blocks are numbered in order, then shuffled if asked.
static Cache make_cache(const std::vector<int>& lens, int kv_heads, int block, bool shuffle,
                        uint64_t seed) {
  Cache c{(int)lens.size(), kv_heads, block, 0, 0, lens, {}, {}, {}};
  for (int len : lens) c.max_blocks = std::max(c.max_blocks, (len + block - 1) / block);
  for (int len : lens) c.num_blocks += (len + block - 1) / block;
  std::vector<int> phys(c.num_blocks);
  std::iota(phys.begin(), phys.end(), 0);
  if (shuffle) std::shuffle(phys.begin(), phys.end(), std::mt19937_64(seed));
  c.table.assign((size_t)c.seqs * c.max_blocks, -1);
  int next = 0;
  for (int s = 0; s < c.seqs; ++s)
    for (int b = 0; b < (lens[s] + block - 1) / block; ++b)
      c.table[(size_t)s * c.max_blocks + b] = phys[next++];
  size_t n = (size_t)c.num_blocks * block * kv_heads * kHeadDim;
  c.k = random_bf16(n, seed + 1);
  c.v = random_bf16(n, seed + 2);
  return c;
}

// The reference: the same sums in double precision, walking the block table on the CPU.
static std::vector<float> reference(const Cache& c) {
  std::vector<float> out((size_t)c.seqs * c.kv_heads * kHeadDim);
  for (int s = 0; s < c.seqs; ++s)
    for (int h = 0; h < c.kv_heads; ++h)
      for (int d = 0; d < kHeadDim; ++d) {
        double acc = 0.0;
        for (int t = 0; t < c.lens[s]; ++t) {
          int phys = c.table[(size_t)s * c.max_blocks + t / c.block];
          size_t i = (((size_t)phys * c.block + t % c.block) * c.kv_heads + h) * kHeadDim + d;
          acc += (double)bf16_to_float(c.k[i]) + (double)bf16_to_float(c.v[i]);
        }
        out[((size_t)s * c.kv_heads + h) * kHeadDim + d] = (float)acc;
      }
  return out;
}

struct Device {
  uint16_t *k, *v;
  int *table, *lens;
  float* out;
};

static Device upload(const Cache& c) {
  Device d;
  TUTOR_CHECK(cudaMalloc(&d.k, c.k.size() * sizeof(uint16_t)));
  TUTOR_CHECK(cudaMalloc(&d.v, c.v.size() * sizeof(uint16_t)));
  TUTOR_CHECK(cudaMalloc(&d.table, c.table.size() * sizeof(int)));
  TUTOR_CHECK(cudaMalloc(&d.lens, c.lens.size() * sizeof(int)));
  tutor::guarded_malloc(&d.out, (size_t)c.seqs * c.kv_heads * kHeadDim, "out");
  TUTOR_CHECK(cudaMemcpy(d.k, c.k.data(), c.k.size() * sizeof(uint16_t), cudaMemcpyHostToDevice));
  TUTOR_CHECK(cudaMemcpy(d.v, c.v.data(), c.v.size() * sizeof(uint16_t), cudaMemcpyHostToDevice));
  TUTOR_CHECK(cudaMemcpy(d.table, c.table.data(), c.table.size() * sizeof(int), cudaMemcpyHostToDevice));
  TUTOR_CHECK(cudaMemcpy(d.lens, c.lens.data(), c.lens.size() * sizeof(int), cudaMemcpyHostToDevice));
  return d;
}

static void release(Device& d) {
  TUTOR_CHECK(cudaFree(d.k));
  TUTOR_CHECK(cudaFree(d.v));
  TUTOR_CHECK(cudaFree(d.table));
  TUTOR_CHECK(cudaFree(d.lens));
  tutor::guarded_free(d.out);
}

static void launch(const Cache& c, const Device& d) {
  kv_read<<<c.seqs * c.kv_heads, kThreads>>>(d.k, d.v, d.table, d.lens, d.out, c.kv_heads,
                                             c.block, c.max_blocks);
}

struct Variant {
  const char* name;
  int block;
  bool shuffle;
};
static const Variant kVariants[] = {
    {"identity_b16", 16, false}, {"shuffled_b16", 16, true}, {"shuffled_b1", 1, true}};

int main(int argc, char** argv) {
  tutor::Args args = tutor::parse_args(argc, argv);
  const int kv_heads = 8;  // Llama 3 70B: 8 KV heads (one per GPU under 8-way tensor parallelism)
  if (!args.bench) {
    std::mt19937_64 gen(args.seed);
    for (int seqs : {1, 3, 7}) {
      std::vector<int> lens(seqs);
      for (int& len : lens) len = 1 + int(gen() % (args.quick ? 97 : 333));  // odd, not multiples of 16
      for (const Variant& var : kVariants) {
        Cache c = make_cache(lens, kv_heads, var.block, var.shuffle, args.seed + seqs);
        Device d = upload(c);
        tutor::poison(d.out, (size_t)c.seqs * kv_heads * kHeadDim * sizeof(float));
        launch(c, d);
        TUTOR_CHECK_LAUNCH();
        std::vector<float> got((size_t)c.seqs * kv_heads * kHeadDim);
        TUTOR_CHECK(cudaMemcpy(got.data(), d.out, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
        std::vector<float> want = reference(c);
        std::string size = std::to_string(seqs) + "seqs_max" + std::to_string(c.max_blocks * var.block);
        tutor::check_close("kv_read", var.name, size, got.data(), want.data(), got.size(), args.seed,
                           1e-3, 1e-4);
        release(d);
      }
    }
    return tutor::finish("kv_read");
  }
  const int seqs = (int)tutor::arg_int(args, "--seqs", 64);
  const int ctx = (int)tutor::arg_int(args, "--ctx", 4096);
  tutor::Ceiling ceiling = tutor::copy_ceiling();
  for (const Variant& var : kVariants) {
    Cache c = make_cache(std::vector<int>(seqs, ctx), kv_heads, var.block, var.shuffle, args.seed);
    Device d = upload(c);
    double bytes = 2.0 * seqs * (double)ctx * kv_heads * kHeadDim * sizeof(uint16_t);
    float ms = tutor::median_ms([&] { launch(c, d); });
    tutor::measure("kv_read", var.name, "bandwidth", tutor::gbps(bytes, ms), "GB/s", ceiling,
                   bytes, ms);
    release(d);
  }
  return tutor::finish("kv_read");
}
