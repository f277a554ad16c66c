// A04 pointer_chase: the time of one load at each level of the memory hierarchy.
// One thread follows a random cycle through a buffer. Each hop lands on a different 128-byte line,
// and the address of every load is the value the load before it returned, so no two loads overlap
// and neither spatial locality nor a prefetcher can help: the time per hop is the load latency of
// whichever level holds a working set of that size.
//   build: nvcc -O3 -std=c++17 -arch=sm_90a -I labs/common/cuda labs/A04/cuda/pointer_chase.cu -o pointer_chase  // vendor-specific
//   run:   ./pointer_chase            checks the cycle and the chase against the CPU on small buffers
//          ./pointer_chase --bench    ns per load from 16 KiB to 4 GiB (--max-mib to stop earlier)
#include "tutor_lab.cuh"  // vendor-specific

constexpr unsigned kLine = 128;                         // bytes from one hop's line to the next's
constexpr unsigned kStride = kLine / sizeof(unsigned);  // 32 slots of 4 bytes per line; a hop uses slot 0
constexpr unsigned kSharedSlots = 16384 / sizeof(unsigned);  // the shared-memory chase: a 16 KiB cycle

// ---------------------------------------------------------------- kernels
// link: writes the cycle into the buffer. The lines are visited in the order order[0], order[1], ...,
// order[n-1], then order[0] again: slot 0 of line order[i] holds the slot index of line order[i+1].
__global__ void link(const unsigned* order, unsigned n, unsigned* buf) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  // TODO 1: slot 0 of line order[i] must hold the slot index of the line visited after it, and the
  // last line of the order must lead back to the first, so that the n lines form one cycle. As shipped,
  // the lines are linked in address order: a cycle, but one a prefetcher could follow.
  if (i < n) buf[i * kStride] = (unsigned)((i + 1) % n) * kStride;
}

// chase: one thread makes `hops` dependent loads; each load's address is the previous load's value.
// It starts where *from says and stores where it stopped in *last, so that the compiler must keep every
// load, the CPU can check it, and a launch given from == last carries on where the one before it stopped.
__global__ void chase(const unsigned* buf, const unsigned* from, long long hops, unsigned* last) {
  unsigned j = *from;
  // TODO 2: make `hops` loads, each from the slot whose index the previous load returned (the first from
  // the slot *from names), so that no load can begin before the one before it has finished.
  *last = j;
}

// chase_shared: the same chase through a copy of the first kSharedSlots slots in shared memory.
// The block copies the cycle in, then one thread chases it: the latency of a shared-memory load.
__global__ void chase_shared(const unsigned* buf, unsigned slots, const unsigned* from, long long hops,
                             unsigned* last) {
  __shared__ unsigned s[kSharedSlots];
  for (unsigned i = threadIdx.x; i < slots; i += blockDim.x) s[i] = buf[i];
  __syncthreads();
  if (threadIdx.x != 0) return;
  unsigned j = *from;
  for (long long h = 0; h < hops; ++h) j = s[j];
  *last = j;
}

// ---------------------------------------------------------------- the cycle, on the host
// A random order of the n lines (Fisher-Yates). Linking each line to the next in this order makes one
// cycle through all n lines, whatever the order: the chase visits every line once per lap.
std::vector<unsigned> visit_order(unsigned n, uint64_t seed) {
  std::vector<unsigned> order(n);
  for (unsigned i = 0; i < n; ++i) order[i] = i;
  std::mt19937_64 gen(seed);
  for (unsigned i = n - 1; i > 0; --i) std::swap(order[i], order[gen() % (i + 1)]);
  return order;
}

// Writes the cycle of `order` into `buf` (n * kStride slots on the device) with the link kernel.
void build_cycle(const std::vector<unsigned>& order, unsigned* buf) {
  const unsigned n = (unsigned)order.size();
  unsigned* dorder;
  TUTOR_CHECK(cudaMalloc(&dorder, n * sizeof(unsigned)));
  TUTOR_CHECK(cudaMemcpy(dorder, order.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  link<<<(n + 255) / 256, 256>>>(dorder, n, buf);
  TUTOR_CHECK_LAUNCH();
  TUTOR_CHECK(cudaFree(dorder));
}

// Where the chase stands after `hops` hops from slot order[0] * kStride: the CPU's answer.
unsigned expected_last(const std::vector<unsigned>& order, long long hops) {
  return order[(size_t)(hops % (long long)order.size())] * kStride;
}

// Indices as floats for the kit's check: exact below 2^24 (the checks' buffers are smaller), while the
// poison (0xFFFFFFFF) and the guard pattern keep their own bits, so the check can say what a slot holds.
std::vector<float> as_floats(const std::vector<unsigned>& v) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == 0xFFFFFFFFu || v[i] == tutor::kGuardWord) std::memcpy(&out[i], &v[i], sizeof(float));
    else out[i] = (float)v[i];
  }
  return out;
}

// A large index as two 16-bit halves, each exact in a float, for the checks of the timed runs.
std::vector<float> halves(unsigned x) { return {(float)(x >> 16), (float)(x & 0xFFFFu)}; }

void launch_chase(const std::string& v, const unsigned* buf, unsigned slots, const unsigned* from, long long hops,
                  unsigned* last) {
  if (v == "shared") chase_shared<<<1, 256>>>(buf, slots, from, hops, last);
  else chase<<<1, 1>>>(buf, from, hops, last);
}

// ---------------------------------------------------------------- checks
// A cycle of n lines: the buffer must match the CPU's slot for slot, one lap must visit every line
// exactly once, and the chase (global and shared) must stop where the CPU says after several hop counts.
void verify(unsigned n, uint64_t seed) {
  const size_t slots = (size_t)n * kStride;
  const std::vector<unsigned> order = visit_order(n, seed + n);
  std::vector<unsigned> ref(slots, 0xFFFFFFFFu), got(slots);
  for (unsigned i = 0; i < n; ++i) ref[(size_t)order[i] * kStride] = order[(i + 1) % n] * kStride;
  unsigned *buf, *from, *last;
  tutor::guarded_malloc(&buf, slots, "buf");
  tutor::guarded_malloc(&from, 1, "from");
  tutor::guarded_malloc(&last, 1, "last");
  tutor::poison(buf, slots * sizeof(unsigned));
  build_cycle(order, buf);
  TUTOR_CHECK(cudaMemcpy(got.data(), buf, slots * sizeof(unsigned), cudaMemcpyDeviceToHost));
  const std::string size = std::to_string(n) + " lines";
  // Slot 0 of every line against the CPU's cycle; the other 31 slots of each line must be left alone.
  std::vector<unsigned> got0(n), ref0(n);
  float touched = 0, none = 0;
  for (size_t s = 0; s < slots; ++s) {
    if (s % kStride == 0) got0[s / kStride] = got[s], ref0[s / kStride] = ref[s];
    else if (got[s] != 0xFFFFFFFFu) ++touched;
  }
  tutor::check_close("pointer_chase", "link", size, as_floats(got0).data(), as_floats(ref0).data(), n, seed);
  tutor::check_close("pointer_chase", "link_other_slots", size, &touched, &none, 1, seed);

  // One lap of the buffer as built: count the distinct lines before the chase is back at its start.
  std::vector<char> seen(n, 0);
  unsigned j = order[0] * kStride, lap = 0;
  do {
    if (j % kStride || j / kStride >= n || seen[j / kStride]) break;  // off a line, out of range, or a loop
    seen[j / kStride] = 1;
    ++lap;
    j = got[j];
  } while (j != order[0] * kStride);
  const float lap_got = (float)lap, lap_want = (float)n;
  tutor::check_close("pointer_chase", "one_cycle", size, &lap_got, &lap_want, 1, seed);

  const unsigned start = order[0] * kStride;
  TUTOR_CHECK(cudaMemcpy(from, &start, sizeof start, cudaMemcpyHostToDevice));
  for (long long hops : {0LL, 1LL, (long long)n + 3, 3LL * n + 2, 1000LL}) {  // distinct at every n, 1 included
    for (const char* v : {"global", "shared"}) {
      if (std::string(v) == "shared" && slots > kSharedSlots) continue;
      tutor::poison(last, sizeof(unsigned));
      launch_chase(v, buf, (unsigned)slots, from, hops, last);
      TUTOR_CHECK_LAUNCH();
      unsigned out;
      TUTOR_CHECK(cudaMemcpy(&out, last, sizeof out, cudaMemcpyDeviceToHost));
      const std::vector<float> g = as_floats({out}), r = as_floats({expected_last(order, hops)});
      tutor::check_close("pointer_chase", v, size + ", " + std::to_string(hops) + " hops", g.data(), r.data(), 1, seed);
    }
  }
  tutor::guarded_free(buf);
  tutor::guarded_free(from);
  tutor::guarded_free(last);
}

// ---------------------------------------------------------------- bench
// "16KiB", "4MiB", "2GiB": the variant name of a working set.
std::string size_name(size_t bytes) {
  if (bytes >= (size_t(1) << 30)) return std::to_string(bytes >> 30) + "GiB";
  if (bytes >= (size_t(1) << 20)) return std::to_string(bytes >> 20) + "MiB";
  return std::to_string(bytes >> 10) + "KiB";
}

// ns per dependent load of `v` on a cycle of `bytes`; checks where the timed chase stopped. Every launch
// carries on where the one before it stopped (from == last), so the run visits warm + 6 x hops distinct
// lines before it comes round again: a set larger than a cache is never served from it, even though one
// launch makes fewer hops than the set has lines.
double time_chase(const std::string& v, size_t bytes, long long hops, uint64_t seed) {
  const unsigned n = (unsigned)(bytes / kLine);
  const std::vector<unsigned> order = visit_order(n, seed);
  unsigned *buf, *last;
  TUTOR_CHECK(cudaMalloc(&buf, bytes));
  TUTOR_CHECK(cudaMalloc(&last, sizeof(unsigned)));
  build_cycle(order, buf);
  const unsigned start = order[0] * kStride;
  TUTOR_CHECK(cudaMemcpy(last, &start, sizeof start, cudaMemcpyHostToDevice));
  const long long warm = std::min<long long>(n, 1 << 18);  // one lap, up to 2^18 hops: a set that fits
  launch_chase(v, buf, n * kStride, last, warm, last);      // in a cache is in it before the timing
  TUTOR_CHECK_LAUNCH();
  const int warmup = 1, reps = 5;  // the set stays warm: the latency of the level it fits in
  float ms = tutor::timed_ms([&] { launch_chase(v, buf, n * kStride, last, hops, last); },
                              {warmup, reps, /*flush=*/false});
  unsigned out;
  TUTOR_CHECK(cudaMemcpy(&out, last, sizeof out, cudaMemcpyDeviceToHost));
  const long long total = warm + (warmup + reps) * hops;
  const std::vector<float> g = halves(out), r = halves(expected_last(order, total));
  tutor::check_close("pointer_chase", ("timed_" + v).c_str(), size_name(bytes), g.data(), r.data(), 2, seed);
  TUTOR_CHECK(cudaFree(buf));
  TUTOR_CHECK(cudaFree(last));
  // TODO 3: return the time of one load in nanoseconds: the timed launch made `hops` loads in `ms`.
  return ms;
}

// Every working set from 16 KiB to max_bytes, doubling; the ceiling of each record is the latency of
// the smallest set (L1), measured first in the same run, so every bar reads as a multiple of an L1 hit.
void bench(size_t max_bytes, long long hops, uint64_t seed) {
  const double l1 = time_chase("global", size_t(16) << 10, hops, seed);
  const tutor::Ceiling ceiling = {"L1 latency (16 KiB set) measured in the same run", l1, "ns"};
  tutor::measure("pointer_chase", "shared", "latency", time_chase("shared", size_t(16) << 10, hops, seed), "ns", ceiling);
  for (size_t bytes = size_t(16) << 10; bytes <= max_bytes; bytes *= 2) {
    const double ns = bytes == (size_t(16) << 10) ? l1 : time_chase("global", bytes, hops, seed);
    tutor::measure("pointer_chase", ("ws_" + size_name(bytes)).c_str(), "latency", ns, "ns", ceiling);
  }
}

int main(int argc, char** argv) {
  tutor::Args args = tutor::parse_args(argc, argv);
  std::vector<unsigned> lines = {1, 2, 3, 37, 128, 1000, 4097};
  if (args.quick) lines = {1, 2, 37, 128};
  for (unsigned n : lines) verify(n, args.seed);
  if (args.bench)
    bench(size_t(tutor::arg_int(args, "--max-mib", 4096)) << 20, tutor::arg_int(args, "--hops", 1 << 17), args.seed);
  return tutor::finish("pointer_chase");
}
