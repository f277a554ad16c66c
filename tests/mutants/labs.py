"""Held-out mistakes a learner makes, applied to the worked Triton solutions. `tutor labs verify` must
catch each one: exit non-zero, name the cause, print no traceback of its own, and never say `ok`.
Each entry: (id, lab file, the text replaced, its replacement, a phrase the report must contain)."""

MUTANTS = [
    ("a01-mask-le", "labs/A01/triton/vector_add.py",
     "mask = offs < n", "mask = offs <= n", "past the end of c_ptr"),
    ("a01-loads-unmasked", "labs/A01/triton/vector_add.py",
     "a = tl.load(a_ptr + offs, mask=mask)\n    b = tl.load(b_ptr + offs, mask=mask)",
     "a = tl.load(a_ptr + offs)\n    b = tl.load(b_ptr + offs)", "loaded"),
    ("a01-store-unmasked", "labs/A01/triton/vector_add.py",
     "tl.store(c_ptr + offs, a + b, mask=mask)", "tl.store(c_ptr + offs, a + b)", "stored"),
    ("a01-no-masks", "labs/A01/triton/vector_add.py",
     "mask = offs < n", "mask = offs >= 0", "past the end of"),
    ("a01-no-program-offset", "labs/A01/triton/vector_add.py",
     "offs = pid * BLOCK + tl.arange(0, BLOCK)", "offs = tl.arange(0, BLOCK)", "never written"),
    ("a01-grid-rounded-down", "labs/A01/triton/vector_add.py",
     "add_kernel[(triton.cdiv(n, BLOCK),)]", "add_kernel[(max(n // BLOCK, 1),)]", "never written"),
    ("a01-grid-rounded-down-to-zero", "labs/A01/triton/vector_add.py",
     "add_kernel[(triton.cdiv(n, BLOCK),)]", "add_kernel[(n // BLOCK,)]", "a launch ran 0 programs"),
    ("a02-mask-dims-swapped", "labs/A02/triton/transpose.py",
     "mask = (rows[:, None] < M) & (cols[None, :] < N)", "mask = (rows[:, None] < N) & (cols[None, :] < M)",
     "outside"),
    ("a02-store-mask-untransposed", "labs/A02/triton/transpose.py",
     "tl.trans(tile), mask=tl.trans(mask))", "tl.trans(tile), mask=mask)", "y_ptr"),
    ("a02-grid-rounded-down", "labs/A02/triton/transpose.py",
     "grid = (triton.cdiv(M, cfg[\"BM\"]), triton.cdiv(N, cfg[\"BN\"]))",
     "grid = (max(M // cfg[\"BM\"], 1), max(N // cfg[\"BN\"], 1))", "never written"),
    ("a02-no-program-offset", "labs/A02/triton/transpose.py",
     "rows = pid_m * BM + tl.arange(0, BM)", "rows = tl.arange(0, BM)", "never written"),
    ("a02-store-stride-wrong", "labs/A02/triton/transpose.py",
     "tl.store(y_ptr + cols[:, None] * M + rows[None, :]", "tl.store(y_ptr + cols[:, None] * N + rows[None, :]",
     "y_ptr"),
    ("b04-encode-mask-le", "labs/B04/triton/fp8_codec.py",
     "mask = offs < n", "mask = offs <= n", "past the end of"),
]

# The same mistakes in the CUDA solutions, run on an NVIDIA GPU by bench/gpu_mutants.py (no GPU in CI).
CUDA_MUTANTS = [
    ("a01-cuda-bound-le", "labs/A01/cuda/vector_add.cu", "if (i < n) c[i]", "if (i <= n) c[i]", "past the end of c"),
    ("a01-cuda-no-bound", "labs/A01/cuda/vector_add.cu", "if (i < n) c[i]", "c[i]", "past the end of c"),
    ("a01-cuda-grid-rounded-down", "labs/A01/cuda/vector_add.cu",
     "unsigned grid = (unsigned)((n + kBlock - 1) / kBlock);",
     "unsigned grid = (unsigned)(n / kBlock > 0 ? n / kBlock : 1);", "never written"),
    ("a01-cuda-no-block-offset", "labs/A01/cuda/vector_add.cu",
     "size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;", "size_t i = threadIdx.x;", "never written"),
    ("a02-cuda-naive-bounds-swapped", "labs/A02/cuda/transpose.cu",
     "if (i < M && j < N) out[(size_t)j * M + i] = in[(size_t)i * N + j];",
     "if (i < N && j < M) out[(size_t)j * M + i] = in[(size_t)i * N + j];", "naive"),
]
