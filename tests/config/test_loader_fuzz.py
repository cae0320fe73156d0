"""Property tests: any file content gives a ConfigFile or a ConfigError — never another exception."""

from __future__ import annotations

import json
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from secure_shell.config.loader import load_text
from secure_shell.config.resolve import resolve
from secure_shell.errors import ConfigError

KEYS = [
    "global",
    "security",
    "restrictions",
    "paths",
    "logging",
    "shells",
    "bash",
    "cmd",
    "wsl",
    "overrides",
    "blockedCommands",
    "allowedPaths",
    "initialDir",
    "commandTimeout",
    "maxOutputLines",
    "profiles",
    "env",
    "transport",
    "httpPort",
    "replace",
    "askCommands",
    "audit",
    "resources",
    "environment",
    "comandTimeout",
]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-10, 1 << 40),
    st.floats(allow_nan=False),
    st.sampled_from(["/abs", "C:\\x", "rel", "re:(", "&", "*", "~", "", "C:", "\\\\.\\x"]),
    st.text(max_size=8),
)
VALUES = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)
YAML_PIECES = st.lists(
    st.sampled_from(
        [
            "global:",
            "\n",
            "  ",
            "security:",
            " {",
            "}",
            "[",
            "]",
            ": ",
            "- ",
            "'",
            '"',
            "&a",
            "*a",
            "!!python/object",
            "%YAML",
            "---",
            "...",
            "#",
            ",",
            "\t",
            "commandTimeout",
            "5",
            "yes",
            "~",
            "@",
            "`",
        ]
    ),
    max_size=40,
).map("".join)
# The default run draws a few hundred; SECURE_SHELL_FUZZ_EXAMPLES=20000 for a long one (bench/README.md).
EXAMPLES = int(os.environ.get("SECURE_SHELL_FUZZ_EXAMPLES", "600"))
SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck)
)


def loads_or_config_error(text: str, is_json: bool) -> None:
    try:
        resolve(load_text(text, "fuzz", is_json=is_json), "fuzz", "/home/u")
    except ConfigError:
        pass


@SETTINGS
@given(VALUES)
def test_any_structure_is_validated_or_refused(value: object) -> None:
    loads_or_config_error(json.dumps(value), is_json=True)


@SETTINGS
@given(YAML_PIECES)
def test_any_yaml_text_is_parsed_or_refused(text: str) -> None:
    loads_or_config_error(text, is_json=False)


@SETTINGS
@given(st.text(max_size=200))
def test_any_json_text_is_parsed_or_refused(text: str) -> None:
    loads_or_config_error(text, is_json=True)
