"""Bounded config loading: any input up to the size cap is loaded or refused within a second of CPU
time and 200 MB, with an error that names the file; the caps act while the document is read."""

from __future__ import annotations

import time
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from secure_shell.config.loader import MAX_CONFIG_BYTES, load_text
from secure_shell.errors import ConfigError

MIB = 1 << 20
LOL = ", ".join(["lol"] * 9)
ALIAS_BOMB = (
    "a: &a ["
    + LOL
    + "]\n"
    + "".join(f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi", strict=True))
)
MERGE_BOMB = "a: &a {x: 1, y: 2}\n" + "".join(
    f"{n}: &{n} {{<<: [{', '.join([f'*{p}'] * 9)}]}}\n" for p, n in zip("abcdefgh", "bcdefghi", strict=True)
)

HOSTILE = {
    "alias bomb (under 1 KB)": (ALIAS_BOMB, False),
    "merge-key bomb": (MERGE_BOMB, False),
    "50,000-deep flow sequence": ("[" * 50_000 + "]" * 50_000, False),
    "1,400-deep block mapping": ("".join(" " * i + "k:\n" for i in range(1400)), False),
    "50,000-deep JSON": ("[" * 50_000 + "]" * 50_000, True),
    "1 MiB of keys": ("".join(f"k{i}: v\n" for i in range(MIB // 10))[: MIB - 1], False),
    "1 MiB of list items": (("- x\n" * (MIB // 4))[: MIB - 1], False),
    "1 MiB JSON list": ("[" + "1," * (MIB // 2 - 2) + "1]", True),
    "1 MiB one scalar": ("a: " + "x" * (MIB - 8), False),
    "1 MiB of anchors": ("".join(f"- &a{i} x\n" for i in range(MIB // 12))[: MIB - 1], False),
    "self-referencing alias": ("a: &a [*a]\n", False),
    "unknown alias": ("a: *nope\n", False),
    "two documents": ("a: 1\n---\nb: 2\n", False),
    "1 MiB of flow mapping": ("{" + "a: b, " * (MIB // 6 - 2) + "c: d}", False),
}


def load_once(text: str, is_json: bool) -> float:
    """CPU seconds to load or refuse `text`; anything but ConfigError fails the test."""
    started = time.process_time()
    try:
        load_text(text, "hostile.yaml", is_json=is_json)
    except ConfigError as exc:
        assert "hostile.yaml" in str(exc)
    return time.process_time() - started


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_inputs_are_refused_within_a_second_and_200_mb(name: str) -> None:
    text, is_json = HOSTILE[name]
    assert len(text.encode()) <= MAX_CONFIG_BYTES
    assert load_once(text, is_json) < 1.0
    tracemalloc.start()
    try:
        load_once(text, is_json)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 200 * MIB


def test_the_alias_bomb_is_refused_for_its_size_with_a_line() -> None:
    with pytest.raises(ConfigError, match=r"hostile.yaml:\d+: more than 20000 values"):
        load_text(ALIAS_BOMB, "hostile.yaml")


def test_the_shipped_kind_of_config_still_loads() -> None:
    text = (
        "global:\n  restrictions:\n    blockedCommands: &common [rm, sudo]\nshells:\n  bash:\n    overrides:\n"
        "      restrictions:\n        blockedCommands: *common\n"
    )
    assert load_text(text, "ok.yaml").global_.restrictions.blocked_commands == ["rm", "sudo"]


PIECES = st.sampled_from(
    [
        "a: ",
        "&x ",
        "*x ",
        "[",
        "]",
        "{",
        "}",
        ", ",
        "- ",
        "\n",
        "  ",
        "<<: ",
        "x",
        "'q'",
        "!!str ",
        "&y ",
        "*y",
        "? ",
        "|\n",
        "#c\n",
        "---\n",
        "9",
    ]
)


@settings(max_examples=40, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.lists(PIECES, min_size=1, max_size=64), st.integers(1, 16_000))
def test_any_repetition_of_yaml_pieces_up_to_the_cap_loads_or_fails_fast(pieces: list[str], times: int) -> None:
    text = ("".join(pieces) * times)[:MAX_CONFIG_BYTES]
    assert load_once(text, is_json=False) < 1.0
