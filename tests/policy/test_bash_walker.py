"""bash_walker: what a pipeline's stages feed each other, read once per pipeline."""

from __future__ import annotations

import pytest

from secure_shell.policy import bash
from secure_shell.policy.bash_walker import Walker
from secure_shell.policy.parsed import Limits, Parsed


def test_each_stage_knows_the_argv_of_the_stages_before_it() -> None:
    parsed = bash.parse("echo a b | grep -v x | ( cat ) | xargs rm", Limits())
    assert isinstance(parsed, Parsed)
    feeders = {c.words[0].value: c.feeders for c in parsed.commands}
    assert feeders["echo"] == ()
    assert feeders["grep"] == (("echo", "a", "b"),)
    assert feeders["xargs"] == (None, ("grep", "-v", "x"), ("echo", "a", "b"))  # a subshell is no argv


@pytest.mark.parametrize("stages", [50, 100, 200, 400])
def test_a_pipeline_reads_each_stage_once(stages: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each stage's argv is read once, not once per later stage: the walk of an n-stage pipeline
    reads n - 1 argvs (it read n²/2, and a 400-stage `a|a|...` took half a second)."""
    calls = 0
    read = Walker._stage_argv

    def counted(walker: Walker, stage: object) -> object:
        nonlocal calls
        calls += 1
        return read(walker, stage)  # type: ignore[arg-type]

    monkeypatch.setattr(Walker, "_stage_argv", counted)
    parsed = bash.parse("|".join(["a"] * stages), Limits())
    assert isinstance(parsed, Parsed) and len(parsed.commands) == stages
    assert calls == stages - 1
    assert parsed.commands[-1].feeders == (("a",),) * (stages - 1)
