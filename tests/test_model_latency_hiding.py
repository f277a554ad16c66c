"""tutor_build/models/latency_hiding.py: bytes in flight, Little's law, the shared-memory request that pins
resident blocks (checked against the occupancy model of the player), the issue timeline and the passes of a
parity branch (checked against the divergence model of the player)."""

from __future__ import annotations

import pytest

from tutor_build.models import divergence, hardware, latency_hiding as lh, occupancy

KIB = 1024


def test_bytes_in_flight_is_the_product():
    assert lh.bytes_in_flight(64, 32, 16, 1) == 32 * KIB
    assert lh.bytes_in_flight(8, 32, 16, 8) == 32 * KIB
    assert lh.bytes_in_flight(32, 64, 16, 1) == 32 * KIB  # a CU's 32 wavefronts of 64


def test_littles_law_round_trip():
    need = lh.needed_in_flight(2e12, 800e-9, 132)
    assert need == pytest.approx(2e12 * 800e-9 / 132)
    # exactly the needed bytes in flight give the read rate, so the copy reaches twice it (or its ceiling)
    assert lh.copy_rate(need, 800e-9, 132, 1e13) == pytest.approx(4e12)
    assert lh.copy_rate(need, 800e-9, 132, 3e12) == 3e12
    assert lh.copy_rate(need / 2, 800e-9, 132, 1e13) == pytest.approx(2e12)


@pytest.mark.parametrize("blocks", [1, 2, 4, 8, 16])
def test_request_pins_blocks_on_hopper(blocks):
    d = {k: s.value for k, s in hardware.DEVICES["h200"].items() if isinstance(s, hardware.Spec)}
    threads_per_sm = int(d["max_warps_per_unit"] * d["lanes"])
    req = lh.smem_request(int(d["shared_per_unit"]), int(d["shared_reserved_per_block"]), blocks, 128, threads_per_sm)
    assert req % 128 == 0
    assert occupancy.hopper("h200", 128, 24, req)["blocks"] == blocks


@pytest.mark.parametrize("blocks", [1, 2, 4, 8, 16])
def test_request_pins_workgroups_on_cdna3(blocks):
    d = {k: s.value for k, s in hardware.DEVICES["mi300x"].items() if isinstance(s, hardware.Spec)}
    threads_per_cu = int(d["max_waves_per_simd"] * d["simds_per_unit"] * d["lanes"])
    req = lh.smem_request(int(d["shared_per_unit"]), 0, blocks, 128, threads_per_cu)
    assert occupancy.cdna3("mi300x", 128, 24, req)["blocks"] == blocks


def test_split_passes_agree_with_the_divergence_model():
    # lane parity is the divergence model's modulo pattern with k = 2: both paths in every warp
    for lanes in (32, 64):
        eff = divergence.efficiency("modulo", 2, 0.5, 1.0, 1.0, 256, lanes)["efficiency"]
        assert lh.split_passes(1, lanes) == round(1 / eff) == 2
    assert lh.split_passes(32, 32) == 1 and lh.split_passes(64, 32) == 1
    assert lh.split_passes(32, 64) == 2 and lh.split_passes(64, 64) == 1


@pytest.mark.parametrize("warps,latency,work", [(1, 20, 1), (4, 20, 1), (8, 20, 4), (30, 20, 1)])
def test_timeline_busy_tends_to_the_bound(warps, latency, work):
    t = lh.timeline(warps, latency, 4000, work)
    bound = min(1.0, warps * work / (latency + work))
    assert t.busy == pytest.approx(bound, abs=0.02)
    assert len(t.issue) == 4000
