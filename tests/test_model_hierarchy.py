"""The hierarchy model of module A04: its capacities agree with the one hardware table where it holds them,
every level has a source in the bibliography, and its arithmetic is the roofline's."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tutor_build.models import hardware, hierarchy, roofline

ROOT = Path(__file__).parents[1]
REFS = yaml.safe_load((ROOT / "references.yml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("device", ["h200", "mi300x"])
def test_levels_are_ordered_sourced_and_read_from_the_table(device):
    lvs = hierarchy.levels(device)
    assert lvs[0].key == "registers" and lvs[-1].key == "hbm"
    assert all(lv.cite in REFS for lv in lvs)
    assert hierarchy.level(device, "hbm").capacity == hardware.value(device, "hbm_bytes")
    assert hierarchy.level(device, "registers").copies == hardware.value(device, "units")
    assert [lv.total for lv in lvs if lv.per == "GPU"] == sorted(lv.total for lv in lvs if lv.per == "GPU")


def test_register_files():
    assert hierarchy.register_file("h200") == 65536 * 4
    assert hierarchy.register_file("mi300x") == 4 * 64 * 512 * 4
    assert hierarchy.level("mi300x", "lds").capacity == hardware.value("mi300x", "shared_per_unit")


@pytest.mark.parametrize("device", ["h200", "mi300x", "h100-sxm"])
@pytest.mark.parametrize("precision", hardware.PRECISIONS)
def test_ridge_is_the_roofline_players_ridge(device, precision):
    r = roofline.compute({"device": device, "precision": precision, "intensity": 1.0})
    assert hierarchy.ridge(device, precision) == pytest.approx(r["ridge"])
    assert hierarchy.attainable(r["ridge"], r["peak_flops"], r["bandwidth"]) == pytest.approx(r["peak_flops"])


def test_arithmetic():
    assert hierarchy.fma_intensity(1) == 0.5 and hierarchy.fma_intensity(256) == 128
    assert hierarchy.fmas_at_ridge(hierarchy.fma_intensity(28)) == 28
    assert hierarchy.bytes_in_flight(4e12, 500e-9) == pytest.approx(2e6)
    assert hierarchy.hopper_fp32_clock("h200") * 132 * 128 * 2 == pytest.approx(hardware.peak("h200", "fp32"))
    assert hierarchy.cdna3_fp32_peak() == pytest.approx(hardware.peak("mi300x", "fp32"), rel=1e-3)
    assert hierarchy.chase_footprint(4 << 30) == 1 << 25
    assert hierarchy.ridge("h200", "fp32", bandwidth=4.0e12) == pytest.approx(67e12 / 4.0e12)
