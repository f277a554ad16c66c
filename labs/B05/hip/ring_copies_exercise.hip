// B05 lab (exercise): ring_copies -- a ring all-reduce written by hand, as 2(p-1) steps of copies.
//
// p ranks, each with an input of n floats, all end with the element-wise sum of the p
// inputs. The n floats are cut into p chunks. Reduce-scatter, p-1 steps: at step s rank r
// sends chunk (r - s) mod p to rank r + 1, which adds its own input to what arrived and
// keeps the partial sum; after p-1 steps rank r holds the full sum of chunk (r + 1) mod p.
// All-gather, p-1 steps: at step s rank r sends chunk (r + 1 - s) mod p to rank r + 1,
// which keeps it. Every step every rank sends n/p floats: 2(p-1)/p * n bytes in all.
//
// Here the p ranks are virtual: p sets of buffers in ONE GPU's memory, each send a
// device-to-device copy into the receiver's staging buffer, each add a kernel. With
// several GPUs the copies would be peer copies (hipMemcpyPeerAsync) over NVLink; on one
// GPU every copy reads and writes the same HBM, which the bench's ceiling measures.
// Checked against a host sum (double) for p = 2, 3, 4, 8 and sizes that p does not
// divide; outputs and staging buffers are poisoned (NaN) first.
// Run: ./ring_copies [--quick] [--bench] [--seed N]
#include "tutor_lab.hip.h"  // vendor-specific

constexpr int kBlock = 256;

// One rank's step of the reduce-scatter: the partial sum that arrived plus its own input.
__global__ void add_into(float* out, const float* mine, const float* incoming, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    out[i] = incoming[i];  // TODO 2: the partial sum that arrived is missing this rank's own input
}

// Chunk c of n floats cut p ways starts at n*c/p: chunk sizes differ by at most one float.
inline size_t lo(size_t n, int p, int c) { return n * size_t(c) / size_t(p); }
inline size_t len(size_t n, int p, int c) { return lo(n, p, c + 1) - lo(n, p, c); }
inline int wrap(int c, int p) { return ((c % p) + p) % p; }
inline int blocks(size_t n) { return int(std::max<size_t>(1, std::min<size_t>(4096, (n + kBlock - 1) / kBlock))); }

struct Ring {
  int p = 0;
  size_t cap = 0;  // floats per rank
  std::vector<float*> in, out, recv;  // rank r's input, output, and staging buffer for one chunk
};

Ring make_ring(int p, size_t cap) {
  Ring R;
  R.p = p;
  R.cap = cap;
  R.in.resize(p);
  R.out.resize(p);
  R.recv.resize(p);
  for (int r = 0; r < p; ++r) {
    tutor::guarded_malloc(&R.in[r], cap, "in");
    tutor::guarded_malloc(&R.out[r], cap, "out");
    tutor::guarded_malloc(&R.recv[r], (cap + p - 1) / p, "recv");  // the largest chunk
  }
  return R;
}

void free_ring(Ring& R) {
  for (int r = 0; r < R.p; ++r) {
    tutor::guarded_free(R.in[r]);
    tutor::guarded_free(R.out[r]);
    tutor::guarded_free(R.recv[r]);
  }
}

// out[r] = in[0] + ... + in[p-1] for every rank r, n <= cap floats. Enqueued on the default stream.
void ring_allreduce(Ring& R, size_t n) {
  const int p = R.p;
  for (int s = 0; s < p - 1; ++s) {  // reduce-scatter
    for (int r = 0; r < p; ++r) {  // every rank sends one chunk to the next
      // TODO 1: at step s rank r sends chunk (r - s) mod p; the placeholder forgets the step.
      int c = wrap(r, p);
      const float* src = (s == 0 ? R.in[r] : R.out[r]) + lo(n, p, c);  // step 0 sends its own input
      TUTOR_CHECK(hipMemcpyAsync(R.recv[(r + 1) % p], src, len(n, p, c) * sizeof(float), hipMemcpyDeviceToDevice));
    }
    for (int r = 0; r < p; ++r) {  // every rank adds its input to the chunk that arrived
      int c = wrap(r - 1 - s, p);
      size_t off = lo(n, p, c), m = len(n, p, c);
      add_into<<<blocks(m), kBlock>>>(R.out[r] + off, R.in[r] + off, R.recv[r], m);
      TUTOR_CHECK(hipGetLastError());
    }
  }
  for (int s = 0; s < p - 1; ++s) {  // all-gather: rank r holds the sum of chunk r + 1; pass it on
    for (int r = 0; r < p; ++r) {
      // TODO 3: at step s rank r passes on chunk (r + 1 - s) mod p; the placeholder forgets the step.
      int c = wrap(r + 1, p);
      size_t off = lo(n, p, c);
      TUTOR_CHECK(hipMemcpyAsync(R.out[(r + 1) % p] + off, R.out[r] + off, len(n, p, c) * sizeof(float),
                                  hipMemcpyDeviceToDevice));
    }
  }
}

// Fresh random inputs for every rank, poisoned outputs, one all-reduce, every rank's output
// compared with the host's sum in double precision.
void verify(int p, size_t n, uint64_t seed) {
  Ring R = make_ring(p, n);
  std::vector<float> x(n), got(size_t(p) * n), ref(size_t(p) * n);
  std::vector<double> sum(n, 0.0);
  for (int r = 0; r < p; ++r) {
    tutor::fill_random(x, seed);
    for (size_t i = 0; i < n; ++i) sum[i] += x[i];
    TUTOR_CHECK(hipMemcpy(R.in[r], x.data(), n * sizeof(float), hipMemcpyHostToDevice));
    tutor::poison(R.out[r], n * sizeof(float));
    tutor::poison(R.recv[r], (n + p - 1) / p * sizeof(float));
  }
  ring_allreduce(R, n);
  TUTOR_CHECK(hipDeviceSynchronize());
  for (int r = 0; r < p; ++r) {
    TUTOR_CHECK(hipMemcpy(got.data() + size_t(r) * n, R.out[r], n * sizeof(float), hipMemcpyDeviceToHost));
    for (size_t i = 0; i < n; ++i) ref[size_t(r) * n + i] = float(sum[i]);
  }
  std::string variant = "p" + std::to_string(p);
  std::string size = "n=" + std::to_string(n) + " floats x " + std::to_string(p) + " ranks";
  // p float additions in another order than the host's: a few ulps of a sum of p values in [-1, 1)
  tutor::check_close("ring_copies", variant.c_str(), size, got.data(), ref.data(), got.size(), seed, 1e-6 * p, 1e-5);
  free_ring(R);
}

int main(int argc, char** argv) {
  tutor::Args args = tutor::parse_args(argc, argv);
  std::vector<size_t> sizes = args.quick ? std::vector<size_t>{1, 7, 1001, 65537}
                                         : std::vector<size_t>{1, 7, 1001, 65537, (size_t(1) << 22) + 3};
  for (int p : {2, 3, 4, 8})
    for (size_t n : sizes) verify(p, n, args.seed);
  if (args.bench) {
    tutor::Ceiling copy = tutor::copy_ceiling();  // the same GPU's copy bandwidth, this run
    tutor::Timing how;
    how.flush = false;  // a collective's buffers are usually warm; the plateau sizes exceed the L2 anyway
    for (int p : {2, 4, 8}) {
      Ring R = make_ring(p, size_t(1) << 28);  // 1 GiB of floats per rank
      for (int r = 0; r < p; ++r) TUTOR_CHECK(hipMemset(R.in[r], 0, R.cap * sizeof(float)));
      for (int k = 3; k <= 30; ++k) {  // messages of 8 B .. 1 GiB per rank
        size_t n = (size_t(1) << k) / sizeof(float);
        double bytes = double(n * sizeof(float));
        double ms = tutor::timed_ms([&] { ring_allreduce(R, n); }, how);
        double busbw = tutor::gbps(bytes, ms) * 2.0 * (p - 1) / p;  // nccl-tests' all-reduce bus bandwidth
        std::string variant = "g1_p" + std::to_string(p) + "_2e" + std::to_string(k);
        tutor::measure("ring_copies", variant.c_str(), "busbw", busbw, "GB/s", copy, bytes, ms);
      }
      free_ring(R);
    }
  }
  return tutor::finish("ring_copies");
}
