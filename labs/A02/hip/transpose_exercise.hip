// A02 transpose, exercise: write the five kernels. The worked solution is transpose.cu.
// out = in^T, where in is an M x N row-major float32 matrix and out is N x M.
// Five kernels, the same arithmetic (none at all), five memory access patterns.
// "Warp" below means NVIDIA's 32 lanes; AMD's wavefront has 64 (tutor::kWarpSize).
//   build: hipcc -O3 -std=c++17 --offload-arch=gfx942 -I labs/common/hip labs/A02/hip/transpose_exercise.hip -o transpose  // vendor-specific
//   run:   ./transpose            checks every variant on odd sizes against the CPU
//          ./transpose --bench    GB/s of each variant on 16384 x 16384 (--m, --n to change)
#include "tutor_lab.hip.h"  // vendor-specific

// ---------------------------------------------------------------- naive kernels
// One thread per element; blocks of (one warp) x (256 / warp) threads.
constexpr int kNaiveX = tutor::kWarpSize;
constexpr int kNaiveY = 256 / tutor::kWarpSize;

// naive_row: the threads of a warp take neighbouring columns j of one row i.
// Reads in[i][j..] are coalesced; writes out[j][i] land M floats apart (strided).
__global__ void naive_row(const float* in, float* out, int M, int N) {
  // TODO 1: one thread per element, out[j][i] = in[i][j], with the x index (see launch) giving the
  //         column j and the y index the row i; threads outside the matrix do nothing. Both matrices
  //         are row-major (in has N columns, out has M); keep the offsets from overflowing an int.
}

// naive_col: the threads of a warp take neighbouring rows i of one column j.
// Reads are strided; writes out[j][i..] are coalesced.
__global__ void naive_col(const float* in, float* out, int M, int N) {
  // TODO 2: the same copy with the roles swapped: the x index gives the row i, the y index the column
  //         j. Which of the two accesses is coalesced now, and how far apart are the lanes on the other?
}

// ---------------------------------------------------------------- shared-memory tiles
// A 32 x 8 block stages a 32 x 32 tile through shared memory: it reads rows of `in` and
// writes rows of `out`, so both global accesses are coalesced. Each thread moves 4 elements.
constexpr int kTile = 32;
constexpr int kRows = 8;

// tiled: the write phase reads a column of the tile. Row pitch 32 floats = 128 bytes, so the
// 32 floats of a column all sit in the same one of the 32 four-byte banks: a 32-way conflict.
__global__ void tiled(const float* in, float* out, int M, int N) {
  // TODO 3: a kTile x kTile tile in shared memory, and the row and column of in at the corner of this
  //         block's tile (read launch: which block index runs across the columns of in?).
  // TODO 4: the block copies its tile of in into the tile, x running along a row of in so that each
  //         warp reads consecutive addresses; the kRows rows of threads share the kTile rows of the tile.
  //         Skip elements outside in. No thread may read the tile before every thread has written it.
  // TODO 5: write the transposed tile to out, x again running along a row, of out now, so the write
  //         is coalesced too. Skip elements outside out: its row and column limits are in's, swapped.
  //         Which element of the tile must each thread read for that?
}

// tiled_padded: the same kernel with one extra float per tile row. Pitch 33 puts element
// [x][k] in bank (x + k) % 32, so the 32 floats of a column fall in 32 different banks.
__global__ void tiled_padded(const float* in, float* out, int M, int N) {
  // TODO 6: tiled's body, changed so that the 32 reads of a tile column hit 32 different banks. First
  //         work out the bank of tile[x][k] for x = 0..31 with 32 floats per row, then fix the row.
}

// ---------------------------------------------------------------- best
// 64 x 64 tiles, 256 threads as an 8 x 32 block, 16-byte (float4) loads and stores.
// Each thread issues all four of its loads before it waits for any, so more bytes are in
// flight per thread. A warp covers 4 rows x 8 float4 = four whole 128-byte lines, and with
// the pitch of 65 floats both shared-memory phases are conflict-free: element [r][c] is in
// bank (r + c) % 32, and a warp's 32 lanes take 4 consecutive r and, for each part q of a
// float4, c = 4 * (8 consecutive) + q: 32 different banks.
// A row whose length is not a multiple of 4 is not 16-byte aligned, and a tile's ragged
// edge has fewer than 4 elements: both fall back to scalar accesses.
// The grid runs blockIdx.x down the rows of `in`, so blocks launched one after another write
// neighbouring stretches of the same rows of `out`. The lab does not time this order against
// the tiled kernels' one: it is one of four changes made at once, not measured on its own.
constexpr int kBest = 64;    // tile side
constexpr int kBestX = 8;    // threads across a tile row, one float4 each
constexpr int kBestY = 32;   // threads down the tile
[[maybe_unused]] constexpr int kVecX = kBest / 4 / kBestX;  // float4 per thread across
[[maybe_unused]] constexpr int kVecY = kBest / kBestY;      // rows per thread down

__global__ void __launch_bounds__(kBestX * kBestY) best(const float* in, float* out, int M, int N) {
  // TODO 7: (stretch) tiled_padded, with more bytes per access and more loads in flight per thread.
  //   1. A kBest x kBest tile, padded; the block is kBestX x kBestY threads. The grid is ordered
  //      unlike tiled's: read launch to see which block index runs down the rows of in.
  //   2. Load phase: each thread moves kVecY x kVecX float4s of the tile, placed so that a warp's
  //      loads cover whole 128-byte lines, and issues all of them before it stores any to the tile.
  //      A float4 access needs a 16-byte aligned address and all four floats inside the matrix:
  //      work out when a row of in starts aligned, and fall back to single floats otherwise.
  //   3. After the barrier, the store phase packs four tile elements from one tile column into a
  //      float4 of a row of out, under the same rules (a row of out has M floats). Check both phases
  //      against the bank formula in the comment above: neither may have a bank conflict.
}

// ---------------------------------------------------------------- driver
const char* const kVariants[] = {"naive_row", "naive_col", "tiled", "tiled_padded", "best"};

unsigned blocks(int n, int per_block) { return (unsigned)((n + per_block - 1) / per_block); }

void launch(const std::string& v, const float* in, float* out, int M, int N) {
  if (v == "naive_row")
    naive_row<<<dim3(blocks(N, kNaiveX), blocks(M, kNaiveY)), dim3(kNaiveX, kNaiveY)>>>(in, out, M, N);
  else if (v == "naive_col")
    naive_col<<<dim3(blocks(M, kNaiveX), blocks(N, kNaiveY)), dim3(kNaiveX, kNaiveY)>>>(in, out, M, N);
  else if (v == "tiled")
    tiled<<<dim3(blocks(N, kTile), blocks(M, kTile)), dim3(kTile, kRows)>>>(in, out, M, N);
  else if (v == "tiled_padded")
    tiled_padded<<<dim3(blocks(N, kTile), blocks(M, kTile)), dim3(kTile, kRows)>>>(in, out, M, N);
  else
    best<<<dim3(blocks(M, kBest), blocks(N, kBest)), dim3(kBestX, kBestY)>>>(in, out, M, N);
}

// Every variant on one fresh random M x N matrix, output poisoned first; exact equality.
void verify(int M, int N, uint64_t seed) {
  const size_t count = (size_t)M * N, bytes = count * sizeof(float);
  std::vector<float> in(count), out(count), ref(count);
  tutor::fill_random(in, seed);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) ref[(size_t)j * M + i] = in[(size_t)i * N + j];
  float *din, *dout;
  tutor::guarded_malloc(&din, count, "in");
  tutor::guarded_malloc(&dout, count, "out");
  TUTOR_CHECK(hipMemcpy(din, in.data(), bytes, hipMemcpyHostToDevice));
  const std::string size = std::to_string(M) + "x" + std::to_string(N);
  for (const char* v : kVariants) {
    tutor::poison(dout, bytes);
    launch(v, din, dout, M, N);
    TUTOR_CHECK_LAUNCH();
    TUTOR_CHECK(hipMemcpy(out.data(), dout, bytes, hipMemcpyDeviceToHost));
    tutor::check_close("transpose", v, size, out.data(), ref.data(), count, seed, 0, 0, M);
  }
  tutor::guarded_free(din);
  tutor::guarded_free(dout);
}

// GB/s of every variant: each element is read once and written once (8 bytes).
void bench(int M, int N) {
  const size_t bytes = (size_t)M * N * sizeof(float);
  float *din, *dout;
  TUTOR_CHECK(hipMalloc(&din, bytes));
  TUTOR_CHECK(hipMalloc(&dout, bytes));
  TUTOR_CHECK(hipMemset(din, 0, bytes));  // the values do not change the speed of a copy
  const tutor::Ceiling ceiling = tutor::copy_ceiling(bytes);
  for (const char* v : kVariants) {
    float ms = tutor::median_ms([&] { launch(v, din, dout, M, N); });
    tutor::measure("transpose", v, "bandwidth", tutor::gbps(2.0 * bytes, ms), "GB/s", ceiling,
                   2.0 * bytes, ms);
  }
  TUTOR_CHECK(hipFree(din));
  TUTOR_CHECK(hipFree(dout));
}

int main(int argc, char** argv) {
  tutor::Args args = tutor::parse_args(argc, argv);
  std::vector<std::pair<int, int>> sizes = {{1, 1},       {33, 65},    {1000, 777}, {4097, 1023},
                                            {1024, 2048}, {68, 4100},  {12, 37},    {37, 12}};
  if (args.quick) sizes = {{1, 1}, {33, 65}, {68, 100}, {257, 130}};
  for (auto [M, N] : sizes) verify(M, N, args.seed);
  if (args.bench)
    bench((int)tutor::arg_int(args, "--m", 16384), (int)tutor::arg_int(args, "--n", 16384));
  return tutor::finish("transpose");
}
