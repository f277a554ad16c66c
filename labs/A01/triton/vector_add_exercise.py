"""A01 vector_add in Triton, exercise: write the kernel. The worked solution is vector_add.py.

    python labs/A01/triton/vector_add_exercise.py            check at several sizes (GPU, or CPU with
                                                    TRITON_INTERPRET=1)
    python labs/A01/triton/vector_add_exercise.py --bench    bandwidth at 2^28 elements, with the copy ceiling
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "common" / "python"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import tutor_lab  # noqa: E402


@triton.jit
def add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    # One program handles BLOCK consecutive elements.
    # TODO 1: offs, the indices of the BLOCK elements this program owns, such that programs 0, 1, 2, ...
    #         cover the vector in order, with no gap and no overlap (tl.program_id, tl.arange).
    # TODO 2: no lane may read or write an element at or past n. Build the condition that is true
    #         exactly for this program's lanes that are inside the vector.
    # TODO 3: c = a + b at offs, with TODO 2's condition guarding both loads and the store.
    # Until then c keeps its NaN poison and every check fails.
    pass


BLOCK = 1024


def add(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> None:
    n = a.numel()
    add_kernel[(triton.cdiv(n, BLOCK),)](a, b, c, n, BLOCK=BLOCK)


def verify(n: int, seed: int) -> None:
    a, b = tutor_lab.rand(n), tutor_lab.rand(n)
    c = tutor_lab.output_like(a, name="c")
    add(a, b, c)
    # One IEEE float addition on each side: the results must be bit-identical.
    tutor_lab.check("vector_add", "kernel", str(n), c, a + b, seed)


def bench(n: int) -> None:
    # 4 bytes read from a, 4 from b, 4 written to c per element.
    a = torch.zeros(n, device=tutor_lab.DEVICE)
    b, c = torch.zeros_like(a), torch.empty_like(a)
    ms = tutor_lab.median_ms(lambda: add(a, b, c))
    ceiling = tutor_lab.copy_ceiling(4 * n)
    traffic = 12 * n
    tutor_lab.measure("vector_add", "kernel", "bandwidth", tutor_lab.gbps(traffic, ms), "GB/s",
                      ceiling, traffic, ms)


def main() -> int:
    args = tutor_lab.parse_args(extra=lambda p: p.add_argument("--n", type=int, default=1 << 28))
    sizes = [1, 3, 1000, 4097] if args.quick else [1, 3, 1000, 4097, 1 << 20, (1 << 20) + 7]
    for n in sizes:
        verify(n, args.seed)
    if args.bench:
        bench(args.n)
    return tutor_lab.finish("vector_add")


if __name__ == "__main__":
    sys.exit(main())
