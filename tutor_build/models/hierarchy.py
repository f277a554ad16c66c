"""The memory hierarchy of module A04: each level of the H200 and the MI300X with its capacity and source,
and the arithmetic the module builds on it (ridge points, Little's law, the FP32 rate of a clock).

Capacities that the one hardware table already holds (register file, LDS, HBM) are read from it
(:mod:`tutor_build.models.hardware`); the cache sizes it does not hold carry their own bibliography key
here. A level's ``per`` says what one copy serves: one SM or CU, one XCD, or the whole GPU.

$$ I^* = \\frac{P}{B}, \\qquad N_{\\text{bytes in flight}} = B \\cdot L $$
"""

from __future__ import annotations

from dataclasses import dataclass

from . import hardware

KIB, MIB = 1024, 1024 * 1024


@dataclass(frozen=True)
class Level:
    key: str  # registers | l1 | lds | l2 | infinity | hbm
    name: str  # what the page calls it
    capacity: float  # bytes in one copy
    per: str  # "SM", "CU", "XCD" or "GPU": what one copy serves
    copies: int  # how many copies the GPU has
    cite: str  # bibliography key
    note: str = ""

    @property
    def total(self) -> float:
        return self.capacity * self.copies


# Facts the hardware table does not hold, each with its source.
H100_L2 = hardware.Spec(50e6, "bytes", "nvidia-h100-whitepaper", "H100 SXM5; NVIDIA publishes no L2 size for the H200")
GH100_DIE_L2 = hardware.Spec(60e6, "bytes", "chipsandcheese-h100-2023", "the full GH100 die, of which products enable part")
HOPPER_L1_SHARED = hardware.Spec(256 * KIB, "bytes/SM", "nvidia-hopper-tuning-guide", "combined L1 data cache and shared memory")
HOPPER_FP32_LANES = hardware.Spec(128, "FP32 lanes/SM", "nvidia-h100-whitepaper")
CDNA3_L1 = hardware.Spec(32 * KIB, "bytes/CU", "amd-rocm-gpu-specs-table", "L1 vector cache of a CDNA 3 (gfx942) CU")
CDNA3_L2_PER_XCD = hardware.Spec(4 * 1e6, "bytes/XCD", "amd-cdna3-whitepaper", "4 MB of L2 in each of 8 XCDs")
CDNA3_XCDS = hardware.Spec(8, "XCDs", "amd-cdna3-whitepaper")
CDNA3_INFINITY = hardware.Spec(256e6, "bytes", "amd-cdna3-whitepaper", "Infinity Cache, a memory-side cache in front of HBM")
CDNA3_FP32_PER_CLOCK = hardware.Spec(256, "FLOP/clock/CU", "amd-cdna3-whitepaper", "vector FP32 at the peak rate")
CDNA3_CLOCK = hardware.Spec(2100e6, "Hz", "amd-cdna3-whitepaper", "peak engine clock of the MI300X")


def register_file(device: str) -> float:
    """Bytes of registers in one SM (Hopper: 65,536 x 4 B) or one CU (CDNA 3: 4 SIMDs x 64 lanes x 512 VGPRs x 4 B)."""
    if hardware.DEVICES[device]["vendor"] == "nvidia":
        return hardware.value(device, "regs_per_unit") * 4
    return (hardware.value(device, "simds_per_unit") * hardware.value(device, "lanes")
            * hardware.value(device, "vgprs_per_simd_lane") * 4)


def levels(device: str) -> tuple[Level, ...]:
    """The levels from the registers to HBM, nearest first."""
    units = int(hardware.value(device, "units"))
    reg_cite = hardware.DEVICES[device]["regs_per_unit" if device != "mi300x" else "vgprs_per_simd_lane"].cite
    hbm = Level("hbm", "HBM", hardware.value(device, "hbm_bytes"), "GPU", 1, hardware.DEVICES[device]["hbm_bytes"].cite)
    if device == "mi300x":
        return (
            Level("registers", "VGPR file", register_file(device), "CU", units, reg_cite),
            Level("l1", "L1 vector cache", CDNA3_L1.value, "CU", units, CDNA3_L1.cite),
            Level("lds", "LDS", hardware.value(device, "shared_per_unit"), "CU", units,
                  hardware.DEVICES[device]["shared_per_unit"].cite),
            Level("l2", "L2", CDNA3_L2_PER_XCD.value, "XCD", int(CDNA3_XCDS.value), CDNA3_L2_PER_XCD.cite),
            Level("infinity", "Infinity Cache", CDNA3_INFINITY.value, "GPU", 1, CDNA3_INFINITY.cite),
            hbm,
        )
    return (
        Level("registers", "register file", register_file(device), "SM", units, reg_cite),
        Level("l1", "L1 + shared memory", HOPPER_L1_SHARED.value, "SM", units, HOPPER_L1_SHARED.cite,
              "one 256 KB array per SM, split between L1 and shared memory"),
        Level("l2", "L2", H100_L2.value, "GPU", 1, H100_L2.cite, H100_L2.note),
        hbm,
    )


def level(device: str, key: str) -> Level:
    return next(lv for lv in levels(device) if lv.key == key)


# ---------------------------------------------------------------- the arithmetic of section 2

def ridge(device: str, precision: str, bandwidth: float | None = None) -> float:
    """FLOP per byte at which the roof bends: the dense peak over the datasheet HBM bandwidth (or `bandwidth`)."""
    bw = hardware.value(device, "hbm_bw") if bandwidth is None else bandwidth
    return hardware.peak(device, precision) / bw


def attainable(intensity: float, peak: float, bandwidth: float) -> float:
    """The roofline: min(P, I x B) in FLOP/s."""
    return min(peak, intensity * bandwidth)


def bytes_in_flight(bandwidth: float, latency: float) -> float:
    """Little's law: the bytes that must be on their way at every moment to sustain `bandwidth` (bytes/s)
    when each load takes `latency` seconds."""
    return bandwidth * latency


def fma_intensity(k: int, bytes_per_value: int = 4) -> float:
    """FLOP per byte of a stream that applies k FMAs (2 FLOP each) to every value it loads."""
    return 2.0 * k / bytes_per_value


def fmas_at_ridge(ridge_point: float, bytes_per_value: int = 4) -> float:
    """How many FMAs per loaded value put the stream on the ridge point."""
    return ridge_point * bytes_per_value / 2.0


def hopper_fp32_clock(device: str = "h200") -> float:
    """The SM clock (Hz) that the datasheet's FP32 rate implies: P / (SMs x 128 lanes x 2 FLOP)."""
    return hardware.peak(device, "fp32") / (hardware.value(device, "units") * HOPPER_FP32_LANES.value * 2)


def cdna3_fp32_peak() -> float:
    """The MI300X FP32 rate from its CUs, FLOP per clock and clock: 304 x 256 x 2.1 GHz."""
    return hardware.value("mi300x", "units") * CDNA3_FP32_PER_CLOCK.value * CDNA3_CLOCK.value


def chase_footprint(working_set: int, line: int = 128) -> int:
    """Lines a pointer chase visits per lap of a working set: one load per line."""
    return working_set // line
