// A02 transpose: out = in^T, where in is an M x N row-major float32 matrix and out is N x M.
// Five kernels, the same arithmetic (none at all), five memory access patterns.
// "Warp" below means NVIDIA's 32 lanes; AMD's wavefront has 64 (tutor::kWarpSize).
//   build: hipcc -O3 -std=c++17 --offload-arch=gfx942 -I labs/common/hip labs/A02/hip/transpose.hip -o transpose  // vendor-specific
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
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < M && j < N) out[(size_t)j * M + i] = in[(size_t)i * N + j];
}

// naive_col: the threads of a warp take neighbouring rows i of one column j.
// Reads are strided; writes out[j][i..] are coalesced.
__global__ void naive_col(const float* in, float* out, int M, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int j = blockIdx.y * blockDim.y + threadIdx.y;
  if (i < M && j < N) out[(size_t)j * M + i] = in[(size_t)i * N + j];
}

// ---------------------------------------------------------------- shared-memory tiles
// A 32 x 8 block stages a 32 x 32 tile through shared memory: it reads rows of `in` and
// writes rows of `out`, so both global accesses are coalesced. Each thread moves 4 elements.
constexpr int kTile = 32;
constexpr int kRows = 8;

// tiled: the write phase reads a column of the tile. Row pitch 32 floats = 128 bytes, so the
// 32 floats of a column all sit in the same one of the 32 four-byte banks: a 32-way conflict.
__global__ void tiled(const float* in, float* out, int M, int N) {
  __shared__ float tile[kTile][kTile];
  int c0 = blockIdx.x * kTile, r0 = blockIdx.y * kTile;
  for (int k = threadIdx.y; k < kTile; k += kRows) {
    int i = r0 + k, j = c0 + threadIdx.x;
    if (i < M && j < N) tile[k][threadIdx.x] = in[(size_t)i * N + j];
  }
  __syncthreads();
  for (int k = threadIdx.y; k < kTile; k += kRows) {
    int j = c0 + k, i = r0 + threadIdx.x;
    if (j < N && i < M) out[(size_t)j * M + i] = tile[threadIdx.x][k];
  }
}

// tiled_padded: the same kernel with one extra float per tile row. Pitch 33 puts element
// [x][k] in bank (x + k) % 32, so the 32 floats of a column fall in 32 different banks.
__global__ void tiled_padded(const float* in, float* out, int M, int N) {
  __shared__ float tile[kTile][kTile + 1];
  int c0 = blockIdx.x * kTile, r0 = blockIdx.y * kTile;
  for (int k = threadIdx.y; k < kTile; k += kRows) {
    int i = r0 + k, j = c0 + threadIdx.x;
    if (i < M && j < N) tile[k][threadIdx.x] = in[(size_t)i * N + j];
  }
  __syncthreads();
  for (int k = threadIdx.y; k < kTile; k += kRows) {
    int j = c0 + k, i = r0 + threadIdx.x;
    if (j < N && i < M) out[(size_t)j * M + i] = tile[threadIdx.x][k];
  }
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
constexpr int kVecX = kBest / 4 / kBestX;  // float4 per thread across
constexpr int kVecY = kBest / kBestY;      // rows per thread down

__global__ void __launch_bounds__(kBestX * kBestY) best(const float* in, float* out, int M, int N) {
  __shared__ float tile[kBest][kBest + 1];
  const int r0 = blockIdx.x * kBest, c0 = blockIdx.y * kBest;
  const bool vec_in = N % 4 == 0, vec_out = M % 4 == 0;  // rows start on 16-byte boundaries

  float4 v[kVecY][kVecX];
#pragma unroll
  for (int a = 0; a < kVecY; ++a)
#pragma unroll
    for (int b = 0; b < kVecX; ++b) {
      const int i = r0 + threadIdx.y + a * kBestY;        // row of in
      const int j = c0 + 4 * (threadIdx.x + b * kBestX);  // first of 4 columns
      const float* p = in + (size_t)i * N;
      v[a][b] = make_float4(0.f, 0.f, 0.f, 0.f);
      if (vec_in && i < M && j + 3 < N) {
        v[a][b] = *reinterpret_cast<const float4*>(p + j);
      } else if (i < M) {
        if (j + 0 < N) v[a][b].x = p[j + 0];
        if (j + 1 < N) v[a][b].y = p[j + 1];
        if (j + 2 < N) v[a][b].z = p[j + 2];
        if (j + 3 < N) v[a][b].w = p[j + 3];
      }
    }
#pragma unroll
  for (int a = 0; a < kVecY; ++a)
#pragma unroll
    for (int b = 0; b < kVecX; ++b) {
      float* t = &tile[threadIdx.y + a * kBestY][4 * (threadIdx.x + b * kBestX)];
      t[0] = v[a][b].x;
      t[1] = v[a][b].y;
      t[2] = v[a][b].z;
      t[3] = v[a][b].w;
    }
  __syncthreads();
#pragma unroll
  for (int a = 0; a < kVecY; ++a)
#pragma unroll
    for (int b = 0; b < kVecX; ++b) {
      const int y = threadIdx.y + a * kBestY;        // tile column = row of out
      const int x = 4 * (threadIdx.x + b * kBestX);  // first of 4 tile rows = columns of out
      const int j = c0 + y, i = r0 + x;
      const float4 w = make_float4(tile[x][y], tile[x + 1][y], tile[x + 2][y], tile[x + 3][y]);
      float* p = out + (size_t)j * M;
      if (vec_out && j < N && i + 3 < M) {
        *reinterpret_cast<float4*>(p + i) = w;
      } else if (j < N) {
        if (i + 0 < M) p[i + 0] = w.x;
        if (i + 1 < M) p[i + 1] = w.y;
        if (i + 2 < M) p[i + 2] = w.z;
        if (i + 3 < M) p[i + 3] = w.w;
      }
    }
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
