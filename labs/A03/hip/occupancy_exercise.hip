// A03 occupancy, exercise: the copy, its shared-memory request and its grid. The worked solution is the file without _exercise.
// One streaming copy, out[i] = in[i] over n floats in 16-byte (float4) accesses,
// swept over two knobs that both put bytes in flight: resident warps per SM (the occupancy) and
// loads in flight per thread (ILP: each thread issues ILP float4 loads before its first store).
// The occupancy of each point is pinned by the dynamic shared memory its launch requests: the
// kernel never touches that memory, it only keeps other blocks off the SM.
// "Warp" below means NVIDIA's 32 lanes; AMD's wavefront has 64 (tutor::kWarpSize).
//   build: hipcc -O3 -std=c++17 --offload-arch=gfx942 -I labs/common/hip labs/A03/hip/occupancy_exercise.hip -o occupancy  // vendor-specific
//   run:   ./occupancy               checks every variant on odd sizes, and the blocks each SM holds
//          ./occupancy --bench       GB/s of each variant on a 1 GiB array, the copy ceiling, and the
//                                    latency of one dependent load from memory (--n to change the size)
//          ./occupancy --only occ25_ilp8   one variant alone (what the profiler runs)
#include "tutor_lab.hip.h"  // vendor-specific

constexpr int kThreads = 128;  // 4 warps of 32 (2 wavefronts of 64) per block

// ---------------------------------------------------------------- the kernel
// One pass of the grid-stride loop: a block covers kThreads * ILP consecutive float4s, thread t
// taking t, t + kThreads, ..., so each of its ILP loads is coalesced across the warp. All ILP
// loads are issued before the first store, so a thread has ILP * 16 bytes in flight.
template <int ILP>
__device__ void copy_body(const float* __restrict__ in, float* __restrict__ out, size_t n) {
  // TODO 1: copy the n floats of in to out. Every pass of a loop over the array lets one block
  //         cover kThreads * ILP consecutive float4s, with each of a thread's ILP loads coalesced
  //         across its warp, and issues all ILP loads of a thread before its first store (that is
  //         what puts ILP * 16 bytes in flight). The grid is smaller than the array: the loop must
  //         step by the whole grid. No lane may touch a float4 at or past n / 4, and the last n % 4
  //         floats, which make no whole float4, must be copied too.
  (void)in;
  (void)out;
  (void)n;
}

// ---------------------------------------------------------------- the sweep
// One kernel per variant, named after it (so that the profiler can pick each one out): the
// loads in flight per thread, and the blocks of 4 warps each SM may hold (16 blocks = 64 warps =
// 100% of a Hopper SM's warp slots; 8 = 50%, ..., 1 = 6.25%). ILP 8 at 16 blocks is left out:
// it needs 32 registers of data alone per thread, and 100% occupancy of a Hopper SM allows
// 65,536 / 2,048 = 32 registers per thread in all (a CDNA 3 CU would allow 64 VGPRs at 100%, but the
// HIP sweep keeps the CUDA variants).
#define TUTOR_COPY(name, ilp) \
  __global__ void __launch_bounds__(kThreads) name(const float* in, float* out, size_t n) { copy_body<ilp>(in, out, n); }
TUTOR_COPY(occ100_ilp1, 1) TUTOR_COPY(occ100_ilp2, 2) TUTOR_COPY(occ100_ilp4, 4)
TUTOR_COPY(occ50_ilp1, 1)  TUTOR_COPY(occ50_ilp2, 2)  TUTOR_COPY(occ50_ilp4, 4)  TUTOR_COPY(occ50_ilp8, 8)
TUTOR_COPY(occ25_ilp1, 1)  TUTOR_COPY(occ25_ilp2, 2)  TUTOR_COPY(occ25_ilp4, 4)  TUTOR_COPY(occ25_ilp8, 8)
TUTOR_COPY(occ12_ilp1, 1)  TUTOR_COPY(occ12_ilp2, 2)  TUTOR_COPY(occ12_ilp4, 4)  TUTOR_COPY(occ12_ilp8, 8)
TUTOR_COPY(occ6_ilp1, 1)   TUTOR_COPY(occ6_ilp2, 2)   TUTOR_COPY(occ6_ilp4, 4)   TUTOR_COPY(occ6_ilp8, 8)

using Kernel = void (*)(const float*, float*, size_t);
struct Variant {
  const char* name;
  Kernel kernel;
  int ilp;
  int blocks_per_sm;
};
#define TUTOR_VARIANT(name, ilp, blocks) {#name, name, ilp, blocks}
const Variant kVariants[] = {
    TUTOR_VARIANT(occ100_ilp1, 1, 16), TUTOR_VARIANT(occ100_ilp2, 2, 16), TUTOR_VARIANT(occ100_ilp4, 4, 16),
    TUTOR_VARIANT(occ50_ilp1, 1, 8),   TUTOR_VARIANT(occ50_ilp2, 2, 8),   TUTOR_VARIANT(occ50_ilp4, 4, 8),
    TUTOR_VARIANT(occ50_ilp8, 8, 8),   TUTOR_VARIANT(occ25_ilp1, 1, 4),   TUTOR_VARIANT(occ25_ilp2, 2, 4),
    TUTOR_VARIANT(occ25_ilp4, 4, 4),   TUTOR_VARIANT(occ25_ilp8, 8, 4),   TUTOR_VARIANT(occ12_ilp1, 1, 2),
    TUTOR_VARIANT(occ12_ilp2, 2, 2),   TUTOR_VARIANT(occ12_ilp4, 4, 2),   TUTOR_VARIANT(occ12_ilp8, 8, 2),
    TUTOR_VARIANT(occ6_ilp1, 1, 1),    TUTOR_VARIANT(occ6_ilp2, 2, 1),    TUTOR_VARIANT(occ6_ilp4, 4, 1),
    TUTOR_VARIANT(occ6_ilp8, 8, 1),
};

struct Device {
  int sms;             // SMs (CUs on AMD)
  int threads_per_sm;  // resident threads one SM can hold: 64 warps of 32 (32 wavefronts of 64)
  size_t smem_per_sm;  // shared memory (LDS) one SM can hand out
  size_t reserved;     // what the system keeps per block on top of the request (1 KiB on Hopper;
                       // HIP has no such attribute: a CDNA 3 workgroup's LDS is its request)
};

Device device_info() {
  int sms = 0, threads = 0, smem = 0, reserved = 0;
  TUTOR_CHECK(hipDeviceGetAttribute(&sms, hipDeviceAttributeMultiprocessorCount, 0));
  TUTOR_CHECK(hipDeviceGetAttribute(&threads, hipDeviceAttributeMaxThreadsPerMultiProcessor, 0));
  TUTOR_CHECK(hipDeviceGetAttribute(&smem, hipDeviceAttributeMaxSharedMemoryPerMultiprocessor, 0));
  reserved = 0;  // vendor-specific
  return {sms, threads, (size_t)smem, (size_t)reserved};
}

// The dynamic shared memory request that leaves exactly `blocks` blocks on an SM: each block
// costs request + reserved, so b blocks fit when b * (request + reserved) <= smem_per_sm and
// b + 1 do not. The request aims at the middle of that range, request + reserved =
// smem_per_sm / (b + 1/2), half a block clear of both ends, and is rounded down to the 128-byte
// allocation unit. A full SM needs no request: its thread slots already stop one block more.
size_t smem_request(const Device& d, int blocks) {
  // TODO 2: the request (a multiple of 128 bytes) for which exactly `blocks` blocks fit in
  //         d.smem_per_sm and one more does not, counting d.reserved on top of each block's request.
  //         A full SM (blocks * kThreads threads fill its d.threads_per_sm) needs no request at all.
  (void)d;
  (void)blocks;
  return 0;
}

// Opts every kernel in to the largest request, and asks for the largest shared-memory carveout
// of the SM's unified L1/shared array, so that the request alone sets the blocks per SM (the LDS
// of a CDNA 3 CU is an array of its own, with no carveout to pick).
void configure(const Device& d) {
  for (const Variant& v : kVariants) {
    TUTOR_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(v.kernel), hipFuncAttributeMaxDynamicSharedMemorySize,
                                     (int)smem_request(d, 1)));
    (void)0;  // vendor-specific
  }
}

// A grid of exactly blocks_per_sm blocks for every SM: all of them resident at once, for the
// whole run, each looping over its share of the array.
void launch(const Variant& v, const Device& d, const float* in, float* out, size_t n) {
  // TODO 3: launch v.kernel with kThreads threads a block and the variant's shared-memory request,
  //         on a grid that puts exactly v.blocks_per_sm blocks on every SM at once.
  (void)v;
  (void)d;
  (void)in;
  (void)out;
  (void)n;
}

// The occupancy calculator of the runtime must agree with the derivation: a request that lets a
// different number of blocks onto an SM would measure something else than the variant's name.
void check_blocks(const Variant& v, const Device& d, uint64_t seed) {
  int got = 0;
  TUTOR_CHECK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&got, v.kernel, kThreads,
                                                            smem_request(d, v.blocks_per_sm)));
  const bool ok = got == v.blocks_per_sm;
  tutor::json_begin("check", "occupancy", v.name);
  std::printf(", \"size\": \"blocks per SM\", \"ok\": %s, \"mismatches\": %d, \"numel\": 1, \"nan\": 0",
              ok ? "true" : "false", ok ? 0 : 1);
  std::printf(", \"blocks_per_sm\": %d, \"want\": %d, \"smem_request\": %zu", got, v.blocks_per_sm,
              smem_request(d, v.blocks_per_sm));
  if (!ok) std::printf(", \"cause\": \"wrong_value\"");
  std::printf(", \"seed\": %llu", (unsigned long long)seed);
  tutor::json_end();
  if (!ok) ++tutor::failures();
}

bool selected(const Variant& v, const std::string& only) { return only.empty() || only == v.name; }

// Every selected variant on one fresh random array of n floats, output poisoned first; exact equality.
void verify(size_t n, const Device& d, const std::string& only, uint64_t seed) {
  std::vector<float> in(n), out(n);
  tutor::fill_random(in, seed);
  float *din, *dout;
  tutor::guarded_malloc(&din, n, "in");
  tutor::guarded_malloc(&dout, n, "out");
  TUTOR_CHECK(hipMemcpy(din, in.data(), n * sizeof(float), hipMemcpyHostToDevice));
  for (const Variant& v : kVariants) {
    if (!selected(v, only)) continue;
    tutor::poison(dout, n * sizeof(float));
    launch(v, d, din, dout, n);
    TUTOR_CHECK_LAUNCH();
    TUTOR_CHECK(hipMemcpy(out.data(), dout, n * sizeof(float), hipMemcpyDeviceToHost));
    tutor::check_close("occupancy", v.name, std::to_string(n), out.data(), in.data(), n, seed);
  }
  tutor::guarded_free(din);
  tutor::guarded_free(dout);
}

// ---------------------------------------------------------------- latency: a dependent-load chase
// One thread follows next = chain[next], each link in a 256-byte slot of its own. The chain walks
// the 2 MiB pages of a 512 MiB buffer in order (so the TLB, which maps whole pages, rarely misses)
// and the 8,192 slots of each page in a scrambled order (slot (k * kChaseMul) mod 8,192 for the
// k-th link of a page; kChaseMul is odd, so every slot is visited once), leaving no stride for the
// memory system to run ahead on. Each launch continues where the last one stopped, so no link is
// loaded twice in a run, and the L2 is flushed after the chain is written: every load goes to
// memory. Nothing else runs: this is the unloaded latency of one load. Its ceiling, the L2 hit of the
// same chase, is measured after it (bench).
constexpr unsigned kChaseSlot = 64;      // 256 bytes in 4-byte links
constexpr unsigned kChasePage = 8192;    // slots of 256 bytes in a 2 MiB page
constexpr unsigned kChaseMul = 5003;     // odd: k -> k * kChaseMul mod 8,192 visits every slot

__host__ __device__ inline unsigned chase_link(unsigned s) {  // where the s-th link of the chain lives
  const unsigned page = s / kChasePage, k = s % kChasePage;
  return (page * kChasePage + (k * kChaseMul) % kChasePage) * kChaseSlot;
}

__global__ void chase_init(unsigned* chain, unsigned links) {
  const unsigned s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s < links) chain[chase_link(s)] = chase_link((s + 1) % links);
}

__global__ void chase(const unsigned* chain, int steps, unsigned* cursor) {
  unsigned next = *cursor;
  for (int s = 0; s < steps; ++s) next = chain[next];
  *cursor = next;  // the next launch goes on from here; also keeps the loop from being optimized away
}

// ---------------------------------------------------------------- bench
// GB/s of every variant (each float read once and written once: 8 bytes), the device-to-device
// copy of the same bytes as the ceiling, then the latency in ns of one dependent load.
void bench(size_t n, const Device& d, const std::string& only) {
  const size_t bytes = n * sizeof(float);
  float *din, *dout;
  TUTOR_CHECK(hipMalloc(&din, bytes));
  TUTOR_CHECK(hipMalloc(&dout, bytes));
  TUTOR_CHECK(hipMemset(din, 0, bytes));  // the values do not change the speed of a copy
  const tutor::Ceiling ceiling = tutor::copy_ceiling(bytes);
  for (const Variant& v : kVariants) {
    if (!selected(v, only)) continue;
    float ms = tutor::timed_ms([&] { launch(v, d, din, dout, n); });
    tutor::measure("occupancy", v.name, "bandwidth", tutor::gbps(2.0 * bytes, ms), "GB/s", ceiling, 2.0 * bytes, ms);
  }
  TUTOR_CHECK(hipFree(din));
  TUTOR_CHECK(hipFree(dout));
  if (!only.empty()) return;

  const unsigned links = 1u << 21;  // 2,097,152 slots of 256 bytes: the 512 MiB buffer
  const int steps = 1 << 16;         // per launch; 6 launches load 393,216 different links
  unsigned *chain, *cursor;
  void* flush;
  TUTOR_CHECK(hipMalloc(&chain, (size_t)links * kChaseSlot * sizeof(unsigned)));
  TUTOR_CHECK(hipMalloc(&cursor, sizeof(unsigned)));
  TUTOR_CHECK(hipMemset(cursor, 0, sizeof(unsigned)));  // chase_link(0) == 0
  chase_init<<<(links + 255) / 256, 256>>>(chain, links);
  TUTOR_CHECK_LAUNCH();
  TUTOR_CHECK(hipMalloc(&flush, (size_t)256 << 20));  // 256 MiB of writes push the chain out of the L2
  TUTOR_CHECK(hipMemset(flush, 0, (size_t)256 << 20));
  TUTOR_CHECK(hipDeviceSynchronize());
  TUTOR_CHECK(hipFree(flush));
  float ms = tutor::timed_ms([&] { chase<<<1, 1>>>(chain, steps, cursor); }, {1, 5});
  // A latency's ceiling is the level above it, measured in the same run: the same chase on the 8,192 links
  // of one 2 MiB page, a cycle of 1 MiB of lines that the L2 holds and one SM's L1 does not, after a lap
  // that brings it into the L2, and no flush between the timed launches.
  TUTOR_CHECK(hipMemset(cursor, 0, sizeof(unsigned)));
  chase_init<<<(kChasePage + 255) / 256, 256>>>(chain, kChasePage);
  TUTOR_CHECK_LAUNCH();
  chase<<<1, 1>>>(chain, kChasePage, cursor);
  TUTOR_CHECK_LAUNCH();
  const float l2_ms = tutor::timed_ms([&] { chase<<<1, 1>>>(chain, steps, cursor); }, {1, 5, /*flush=*/false});
  const tutor::Ceiling l2 = {"L2-hit latency of the same chase on a 1 MiB cycle, same run", l2_ms * 1e6 / steps, "ns"};
  tutor::measure("occupancy", "chase_latency", "latency", ms * 1e6 / steps, "ns", l2, 0, ms);
  TUTOR_CHECK(hipFree(chain));
  TUTOR_CHECK(hipFree(cursor));
}

std::string arg_text(const tutor::Args& a, const char* name) {
  for (size_t i = 0; i + 1 < a.rest.size(); ++i)
    if (a.rest[i] == name) return a.rest[i + 1];
  return "";
}

int main(int argc, char** argv) {
  tutor::Args args = tutor::parse_args(argc, argv);
  const std::string only = arg_text(args, "--only");
  const Device d = device_info();
  configure(d);
  for (const Variant& v : kVariants)
    if (selected(v, only)) check_blocks(v, d, args.seed);
  std::vector<size_t> sizes = {1, 3, 4097, 1000003, (size_t)3 << 20};
  if (args.quick) sizes = {1, 3, 4097, 100003};
  for (size_t n : sizes) verify(n, d, only, args.seed);
  if (args.bench) bench((size_t)tutor::arg_int(args, "--n", (long long)1 << 28), d, only);
  return tutor::finish("occupancy");
}
