"""YAML with line numbers: mappings and sequences remember where each item came from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .diagnostics import Diagnostic, error


class LineDict(dict):
    """A mapping that knows its own line and the line of each key."""

    line: int = 1

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lines: dict[Any, int] = {}

    def line_of(self, key: Any) -> int:
        return self.lines.get(key, self.line)


class LineList(list):
    line: int = 1

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.lines: list[int] = []

    def line_of(self, index: int) -> int:
        return self.lines[index] if index < len(self.lines) else self.line


# libyaml's parser where PyYAML was built with it (about 10x faster on the course's files); the same
# safe constructors and marks either way.
_SafeBase = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_SafeBase):
    duplicate_keys: list[tuple[Any, int]]


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    result = LineDict()
    result.line = node.start_mark.line + 1
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in result:
            loader.duplicate_keys.append((key, key_node.start_mark.line + 1))
        result[key] = loader.construct_object(value_node, deep=True)
        result.lines[key] = key_node.start_mark.line + 1
    return result


def _construct_sequence(loader: _Loader, node: yaml.SequenceNode) -> LineList:
    result = LineList(loader.construct_object(child, deep=True) for child in node.value)
    result.line = node.start_mark.line + 1
    result.lines = [child.start_mark.line + 1 for child in node.value]
    return result


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


def parse_yaml(text: str, rel_path: str) -> tuple[Any, list[Diagnostic]]:
    """Parse YAML text; never raises. Returns (data or None, diagnostics)."""
    loader = _Loader(text)
    loader.duplicate_keys = []
    try:
        data = loader.get_single_data()
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        mark = getattr(exc, "problem_mark", None)
        context = getattr(exc, "context_mark", None)
        if context is not None and (mark is None or "stream end" in problem or mark.line > context.line):
            mark = context  # an unclosed bracket or quote: point at where it opened, not at the end of the file
        line = mark.line + 1 if mark else 1
        return None, [error(rel_path, line, "E001", f"malformed YAML: {problem}")]
    finally:
        loader.dispose()
    diags = [error(rel_path, line, "E003", f"duplicate key '{key}'") for key, line in loader.duplicate_keys]
    return data, diags


def read_text(path: Path, rel_path: str) -> tuple[str | None, list[Diagnostic]]:
    try:
        return path.read_text(encoding="utf-8"), []
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        return None, [error(rel_path, line, "E002", "file is not valid UTF-8")]
    except OSError as exc:
        return None, [error(rel_path, 1, "E002", f"cannot read file: {exc.strerror}")]


def load_yaml(path: Path, rel_path: str) -> tuple[Any, list[Diagnostic]]:
    text, diags = read_text(path, rel_path)
    if text is None:
        return None, diags
    return parse_yaml(text, rel_path)
