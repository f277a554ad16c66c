"""Two profile.yml entries may count the same kernel at different launches: a `label` keeps their records
apart, and two entries that would write the same record are an error, not a silent overwrite."""

from __future__ import annotations

from tutor_build.labs import profile


def _load(tmp_path, text: str):
    (tmp_path / "labs/X01").mkdir(parents=True)
    (tmp_path / "labs/X01/profile.yml").write_text(text)
    return profile.load(tmp_path, "X01", {"lab"})


ENTRY = "- {{lab: lab, kernel: sweep, launch_skip: {skip}, args: [--bench], metrics: [sm__cycles_elapsed.avg]{label}}}\n"


def test_labels_name_the_records_of_two_launches_of_one_kernel(tmp_path):
    found, problems = _load(tmp_path, ENTRY.format(skip=402, label=", label: sweep_k128")
                            + ENTRY.format(skip=425, label=", label: sweep_k256"))
    assert problems == []
    assert [(c.name, c.launch_skip) for c in found] == [("sweep_k128", 402), ("sweep_k256", 425)]


def test_two_entries_that_would_write_one_record_are_an_error(tmp_path):
    found, problems = _load(tmp_path, ENTRY.format(skip=402, label="") + ENTRY.format(skip=425, label=""))
    assert [c.launch_skip for c in found] == [402]  # the first is kept, the second reported
    assert [(d.line, d.code) for d in problems] == [(2, "E513")]
    assert "give one of them a `label`" in problems[0].message


def test_a_label_is_a_plain_name(tmp_path):
    found, problems = _load(tmp_path, ENTRY.format(skip=1, label=", label: 'k = 128'"))
    assert found == [] and [d.code for d in problems] == ["E513"]


def test_cache_control_reaches_the_profiler_and_defaults_to_a_flush(tmp_path):
    found, problems = _load(tmp_path, ENTRY.format(skip=1, label=", label: cold")
                            + ENTRY.format(skip=1, label=", label: warm, cache_control: none"))
    assert problems == []
    cold, warm = found
    assert (cold.cache_control, warm.cache_control) == ("all", "none")
    for c, want in ((cold, "all"), (warm, "none")):
        cmd = profile.ncu_command("./lab", c, tmp_path / "log.csv")
        assert cmd[cmd.index("--cache-control") + 1] == want
    assert profile.CACHE_CONTROL["none"] != profile.CACHE_CONTROL["all"]


def test_an_unknown_cache_control_is_an_error(tmp_path):
    found, problems = _load(tmp_path, ENTRY.format(skip=1, label=", cache_control: warm"))
    assert found == [] and [d.code for d in problems] == ["E513"]
    assert "cache_control must be one of: all, none" in problems[0].message
