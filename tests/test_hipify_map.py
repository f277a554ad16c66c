"""The CUDA->HIP name map and the sheet rendered from it."""

from __future__ import annotations

from tutor_build import hipify_map as h


def test_map_has_every_lab_runtime_name():
    for cuda, hip in h.FALLBACK.items():
        assert h.CUDA_TO_HIP[cuda] == hip, cuda
    for cuda, hip in h.COURSE_ADDITIONS.items():
        assert h.CUDA_TO_HIP[cuda] == hip


def test_fallback_when_pytorch_tables_are_missing(monkeypatch):
    monkeypatch.setattr(h, "_torch_tables", lambda: None)
    table, source = h._build()
    assert source == "the course's fallback table"
    assert table["cudaMalloc"] == "hipMalloc"
    assert table["__shfl_down_sync"] == "__shfl_down"


def test_sheet_rows_come_from_the_map():
    rows = h.sheet_rows()
    assert len(rows) == len(h.SHEET_NAMES)  # every sheet name is known, torch or not
    assert all(h.CUDA_TO_HIP[c] == hip for _, c, hip in rows)


def test_markdown_table_shape():
    text = h.markdown_table()
    lines = text.splitlines()
    assert lines[0] == "| Group | CUDA | HIP |"
    assert "| Memory | `cudaMalloc` | `hipMalloc` |" in lines
    assert sum(1 for line in lines if line.startswith("| ")) == len(h.sheet_rows()) + 1
    assert "Generated from" in text


def test_hipify_renames_whole_identifiers_only():
    src = "cudaMemcpyAsync(d, s, n, cudaMemcpyDeviceToHost, st); mycudaMalloc();"
    assert h.hipify(src) == "hipMemcpyAsync(d, s, n, hipMemcpyDeviceToHost, st); mycudaMalloc();"
