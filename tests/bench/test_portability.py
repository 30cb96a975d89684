"""The bench's export and import case (bench.portability): the synthetic export it moves has every kind of life the
suite's round trip proves, and the report shows both round trips and the best rates."""

from __future__ import annotations

import json

from bench.portability import synthetic_export
from bench.report import render
from core.portable import parse_line


def test_the_synthetic_export_parses_and_holds_deleted_tagged_and_read_memories() -> None:
    lines = synthetic_export("bench", 40).splitlines()

    header = json.loads(lines[0])
    memories = [parse_line(line, number).memory for number, line in enumerate(lines[1:], start=2)]
    assert (header["namespace"], header["include_deleted"], header["history"]) == ("bench", True, True)
    assert [memory.id for memory in memories] == list(range(1, 41))
    assert {memory.status for memory in memories} == {"active", "deleted"}
    assert any(len(memory.tags) == 2 for memory in memories)
    assert any(memory.last_accessed_at is not None for memory in memories)


def test_the_report_shows_both_round_trips_and_the_best_rates() -> None:
    moved = {
        "memories": 10_000,
        "lines_kept": True,
        "first_import_s": 20.0,
        "first_export_s": 4.0,
        "second_import_s": 16.0,
        "second_export_s": 5.0,
        "import_per_s": 625.0,
        "export_per_s": 2500.0,
    }
    run = {"started": "2026-12-05T10:00:00Z", "git": "abc1234", "python": "3.13.0", "quick": False, "targets": []}

    shown = render(run | {"portability": moved})

    assert "Export and import through the command line on DynamoDB Local: 10,000 memories" in shown
    rows = [line.split() for line in shown.splitlines() if line.startswith(("first ", "second "))]
    assert rows == [["first", "20.0", "4.0"], ["second", "16.0", "5.0"]]
    assert "best: 625 memories/s imported, 2,500 exported" in shown
