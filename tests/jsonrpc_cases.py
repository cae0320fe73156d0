"""Raw JSON-RPC messages for the wire tests over stdio and HTTP: a table of messages that must each
get one error, and a generator of message streams, each message carrying the answer it must get.

The expectation of a generated message is stated by how it was built (a request with a fresh id,
a notification, a broken id, a line that is not JSON...), never by asking the server's own checks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import count

from hypothesis import strategies as st

PARSE_ERROR, INVALID_REQUEST = -32700, -32600
MAX_NESTING = 64  # what the server promises to accept; one level more is refused


def nested_ping(levels: int, request_id: object = 5) -> str:
    """A ping whose arrays and objects nest `levels` deep in all (the message itself is level 1)."""
    inner = "{}"
    for _ in range(levels - 3):  # the message, its params and params._meta are three levels
        inner = '{"a":' + inner + "}"
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping", "params": {"_meta": "INNER"}}).replace(
        '"INNER"', inner
    )


# (message text, error code, id of the answer): every one must get exactly this one error.
BAD_MESSAGES = [
    ("{bad json", PARSE_ERROR, None),
    ('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":NaN}}', PARSE_ERROR, None),
    ('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\\ud800"}}', PARSE_ERROR, None),  # a lone surrogate
    ("[1,2,3]", INVALID_REQUEST, None),
    ('"just a string"', INVALID_REQUEST, None),
    ("42", INVALID_REQUEST, None),
    ('{"jsonrpc":"2.0","id":"m1","method":123}', INVALID_REQUEST, "m1"),
    ('{"jsonrpc":"2.0","id":7}', INVALID_REQUEST, 7),
    ('{"jsonrpc":"1.0","id":3,"method":"ping"}', INVALID_REQUEST, 3),
    ('{"jsonrpc":"2.0","id":4,"method":"ping","params":[1]}', INVALID_REQUEST, 4),
    # Ids JSON-RPC and MCP do not allow: the SDK took each of these for a notification and never answered.
    ('{"jsonrpc":"2.0","id":{},"method":"ping"}', INVALID_REQUEST, None),
    ('{"jsonrpc":"2.0","id":[],"method":"ping"}', INVALID_REQUEST, None),
    ('{"jsonrpc":"2.0","id":1.5,"method":"ping"}', INVALID_REQUEST, None),
    ('{"jsonrpc":"2.0","id":1e3,"method":"ping"}', INVALID_REQUEST, None),
    ('{"jsonrpc":"2.0","id":true,"method":"ping"}', INVALID_REQUEST, None),
    ('{"jsonrpc":"2.0","id":null,"method":"ping"}', INVALID_REQUEST, None),
    ('{"jsonrpc":"2.0","id":null,"result":{}}', INVALID_REQUEST, None),
    # A notification that is not a valid one is an invalid request, and answered as one.
    ('{"jsonrpc":"2.0","method":"notifications/initialized","params":5}', INVALID_REQUEST, None),
    # Nesting: one level past the cap (answered with the id), and far past Python's own parser limit.
    (nested_ping(MAX_NESTING + 1, 8), INVALID_REQUEST, 8),
    (nested_ping(900, 9), INVALID_REQUEST, 9),
    (nested_ping(5000, 10), INVALID_REQUEST, None),
]


@dataclass(frozen=True)
class Sent:
    """One line put on the wire and the answer it must get: none, one carrying `answer_id`, or one
    with a null id (`answer_id` None and `answered` True)."""

    text: str
    answered: bool
    answer_id: str | None = None


_ids = count()


def _fresh_id() -> str:
    return f"fz-{next(_ids)}"


_json_leaf = st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=12)
_json = st.recursive(
    _json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
_params = st.none() | st.dictionaries(st.sampled_from(["name", "uri", "arguments", "cursor", "_meta", "x"]), _json)
# Requests the server answers at once (no command is started); unknown names and methods included.
_methods = st.sampled_from(
    [
        "ping",
        "tools/list",
        "resources/list",
        "resources/templates/list",
        "prompts/list",
        "prompts/get",
        "resources/read",
        "tools/call",
        "completion/complete",
        "no/such/method",
    ]
)
_tool_calls = st.fixed_dictionaries(
    {"name": st.sampled_from(["get_config", "get_current_directory", "list_commands", "no_such_tool"])},
    optional={"arguments": st.dictionaries(st.text(max_size=6), _json, max_size=2)},
)


@st.composite
def _request(draw: st.DrawFn) -> Sent:
    request_id = _fresh_id()
    method = draw(_methods)
    params = draw(_tool_calls) if method == "tools/call" and draw(st.booleans()) else draw(_params)
    message: dict[str, object] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return Sent(json.dumps(message), True, request_id)


@st.composite
def _notification(draw: st.DrawFn) -> Sent:
    method = draw(st.sampled_from(["notifications/progress", "notifications/roots/list_changed", "no/such/note"]))
    return Sent(json.dumps({"jsonrpc": "2.0", "method": method, "params": {"x": draw(_json)}}), False)


@st.composite
def _response(draw: st.DrawFn) -> Sent:
    """A response to a request the server never sent: consumed, and JSON-RPC forbids answering it."""
    return Sent(json.dumps({"jsonrpc": "2.0", "id": draw(st.integers(10**6, 10**9)), "result": {}}), False)


_bad_ids = (
    st.none()
    | st.booleans()
    | st.floats(allow_nan=False, allow_infinity=False)  # 2.0 too: a JSON number with a fraction is no id
    | st.lists(_json_leaf, max_size=2)
    | st.dictionaries(st.text(max_size=3), _json_leaf, max_size=2)
)


@st.composite
def _bad_id(draw: st.DrawFn) -> Sent:
    message = {"jsonrpc": "2.0", "id": draw(_bad_ids), "method": draw(_methods)}
    return Sent(json.dumps(message), True)


@st.composite
def _broken_envelope(draw: st.DrawFn) -> Sent:
    """A fresh, valid id on a message that is not a request (wrong version, method or params)."""
    request_id = _fresh_id()
    fault = draw(
        st.sampled_from(
            [
                {"jsonrpc": "1.0", "method": "ping"},
                {"jsonrpc": "2.0", "method": draw(st.integers() | st.none() | st.lists(_json_leaf, max_size=2))},
                {"jsonrpc": "2.0", "method": "ping", "params": draw(st.integers() | st.text(max_size=5))},
                {"jsonrpc": "2.0"},
            ]
        )
    )
    return Sent(json.dumps({**fault, "id": request_id}), True, request_id)


@st.composite
def _too_deep(draw: st.DrawFn) -> Sent:
    request_id = _fresh_id()
    return Sent(nested_ping(draw(st.integers(MAX_NESTING + 1, 400)), request_id), True, request_id)


# Lines that are not JSON at all, or JSON that is not an object: each gets one answer with a null id.
_garbage = (
    st.text(st.characters(exclude_characters="\n", exclude_categories=("Cs",)), min_size=1, max_size=40)
    .filter(lambda t: t.strip() != "")
    .map(lambda t: Sent(t, True))
)
_not_an_object = (_json_leaf | st.lists(_json, max_size=3)).map(lambda v: Sent(json.dumps(v), True))
_blank = st.sampled_from(["", " ", "\t", "\r"]).map(lambda t: Sent(t, False))

wire_message = st.one_of(
    _request(),
    _notification(),
    _response(),
    _bad_id(),
    _broken_envelope(),
    _too_deep(),
    _garbage,
    _not_an_object,
    _blank,
)
