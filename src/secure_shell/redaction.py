"""Masking secrets in what is written down: the audit trail's records and each command's stored
output.

A record is masked by the rules of secret_forms (a secret's place in a command, or its shape), each
secret replaced by `***` and the command's shape kept. Output cannot be read that way (a program
prints whatever it likes), so a command's output is masked for known values instead: those the
rules found in its command line and those of the server's own secret-named environment variables,
wherever they appear in stdout or stderr, by a streaming filter that holds back only the few
characters that may be the start of a secret.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Protocol

import regex

from secure_shell.secret_forms import (
    CONTEXT_RULES,
    POSITIONALS,
    PRIVATE_KEY_BLOCK,
    SENSITIVE_NAME,
    SHORT_FLAGS,
    TOKEN_SHAPES,
)

MASK = "***"
REDACTION_SECONDS = 0.2

DEFAULT_REDACTIONS: tuple[str, ...] = (
    PRIVATE_KEY_BLOCK.pattern,
    *CONTEXT_RULES,
    *(flag.pattern() for flag in SHORT_FLAGS),
    *(rule.pattern() for rule in POSITIONALS),
    *(shape.pattern for shape in TOKEN_SHAPES),
)
_MIN_ENTROPY = {shape.pattern: shape.min_entropy for shape in TOKEN_SHAPES if shape.min_entropy is not None}


class Redactor:
    """Applies the built-in rules and a config's own patterns; a pattern that cannot finish in time
    masks the whole text rather than leak it. The patterns are compiled once per set, and the masking
    of a short text is remembered: every audit record repeats the same paths, names and config
    source, and a command's text is masked for its output and its two records."""

    def __init__(self, extra: Iterable[str] = ()) -> None:
        self.key = tuple(extra)
        self.patterns = _compiled(self.key)

    def __call__(self, text: str) -> str:
        return self.mask(text)[0]

    def mask(self, text: str) -> tuple[str, list[str]]:
        """The masked text and the secrets taken out of it (empty when a rule ran out of time)."""
        if len(text) > MEMO_TEXT:
            masked, found = _mask(self.patterns, text)
        else:
            masked, found = _remembered_mask(self.key, text)
        return masked, list(found)


MEMO_TEXT = 2048  # characters: longer texts are masked anew each time
MEMO_ENTRIES = 128  # with MEMO_TEXT, under 1 MB of remembered texts


@lru_cache(maxsize=8)
def _compiled(extra: tuple[str, ...]) -> list[tuple[regex.Pattern[str], float | None]]:
    return [(regex.compile(p), _MIN_ENTROPY.get(p)) for p in (*DEFAULT_REDACTIONS, *extra)]


@lru_cache(maxsize=MEMO_ENTRIES)
def _remembered_mask(extra: tuple[str, ...], text: str) -> tuple[str, tuple[str, ...]]:
    return _mask(_compiled(extra), text)


def _mask(patterns: list[tuple[regex.Pattern[str], float | None]], text: str) -> tuple[str, tuple[str, ...]]:
    found: list[str] = []
    for pattern, min_entropy in patterns:
        try:
            text = pattern.sub(partial(_masked, min_entropy=min_entropy, found=found), text, timeout=REDACTION_SECONDS)
        except TimeoutError:
            return MASK, ()
    return text, tuple(found)


def _masked(match: regex.Match[str], min_entropy: float | None, found: list[str]) -> str:
    """The match with its secret masked; the secret is added to `found`."""
    whole = match.group(0)
    if "secret" not in match.re.groupindex or match.start("secret") < 0:
        start, end = 0, len(whole)  # a rule (or a configured pattern) without a secret part: all of it
    else:
        start, end = match.start("secret") - match.start(), match.end("secret") - match.start()
    secret = whole[start:end]
    if not secret or secret == MASK or (min_entropy is not None and _entropy(secret) < min_entropy):
        return whole
    found.append(secret)
    return whole[:start] + MASK + whole[end:]


def _entropy(text: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


# --- output -------------------------------------------------------------------------------------

MIN_OUTPUT_SECRET = 6  # shorter values (`1`, `true`, a port) would mask ordinary output
MAX_OUTPUT_SECRET = 4096  # longer values are masked by their first MAX_OUTPUT_SECRET characters
MAX_OUTPUT_SECRETS = 64
_SECRET_VARIABLE = regex.compile(rf"(?i){SENSITIVE_NAME}")
# Secret-looking names that hold a place or a setting, not a secret: the shell's PWD, a socket, a file.
_PLACE_VARIABLE = regex.compile(r"(?i)(?:OLD)?PWD|.*_(?:SOCK|DIR|DIRECTORY|FILE|PATH|HOME|STORE|URL|HELPER)")


class Decoder(Protocol):
    """Bytes of one stream to text, a chunk at a time (as output_store.Decoder)."""

    def decode(self, data: bytes, final: bool = False) -> str: ...


class StreamMasker:
    """Replaces every occurrence of the given values in a stream of text by `***`, whatever the
    chunks' boundaries: the end of a chunk that may be the start of a value is held back until the
    next chunk shows whether it is (at most the longest value less one character, and only then)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        self._secrets = sorted(set(secrets), key=len, reverse=True)
        self._longest = len(self._secrets[0]) if self._secrets else 0
        self._by_first: dict[str, list[str]] = {}
        for secret in self._secrets:
            self._by_first.setdefault(secret[0], []).append(secret)
        self._held = ""

    def feed(self, text: str, final: bool = False) -> str:
        """The masked text that can be given out now; the rest is kept for the next call (all of
        it given out when `final`)."""
        if not self._secrets:
            return text
        text, self._held = self._held + text, ""
        hold = len(text) if final else self._unfinished(text, 0)
        pieces: list[str] = []
        position = 0
        for start, end in self._occurrences(text):
            if position > hold and not final:  # the last mask swallowed the held start: look again
                hold = self._unfinished(text, position)
            if start >= hold:
                break
            pieces += (text[position:start], MASK)
            position = end
        if position > hold and not final:
            hold = self._unfinished(text, position)
        pieces.append(text[position:hold])
        self._held = text[hold:]
        return "".join(pieces)

    def _occurrences(self, text: str) -> list[tuple[int, int]]:
        """Where values occur in `text`, left to right without overlap, the longest where two start
        at one place (as a regex alternation of the values, longest first, would find them); found
        with str.find, several times faster than a regex over the same text."""
        found: list[tuple[int, int]] = []
        for secret in self._secrets:
            index = text.find(secret)
            while index != -1:
                found.append((index, -len(secret)))
                index = text.find(secret, index + 1)
        found.sort()
        chosen: list[tuple[int, int]] = []
        position = 0
        for start, negative_length in found:
            if start >= position:
                position = start - negative_length
                chosen.append((start, position))
        return chosen

    def _unfinished(self, text: str, start: int) -> int:
        """Where the first tail of `text` from `start` on that is the beginning of a value (and not
        all of it) starts; len(text) when there is none."""
        first = len(text)
        window = max(start, len(text) - self._longest + 1)
        for char, secrets in self._by_first.items():
            index = text.find(char, window, first)  # str.find: the candidates, at C speed
            while index != -1:
                tail = text[index:]
                if any(len(s) > len(tail) and s.startswith(tail) for s in secrets):
                    first = index
                    break
                index = text.find(char, index + 1, first)
        return first


class MaskingDecoder:
    """A stream's decoder whose text passes through a StreamMasker."""

    def __init__(self, decoder: Decoder, masker: StreamMasker) -> None:
        self.decoder, self.masker = decoder, masker

    def decode(self, data: bytes, final: bool = False) -> str:
        return self.masker.feed(self.decoder.decode(data, final), final)


@dataclass(frozen=True)
class OutputMasking:
    """How one command is stored: its text masked as the audit masks it, and the values to mask in
    its output."""

    command: str
    secrets: tuple[str, ...]

    def decoders(self, decoders: Mapping[str, Decoder]) -> Mapping[str, Decoder]:
        """`decoders` (one per stream), each with the masking after it."""
        if not self.secrets:
            return decoders
        return {stream: MaskingDecoder(decoder, StreamMasker(self.secrets)) for stream, decoder in decoders.items()}


def output_masking(
    command: str, patterns: Iterable[str] = (), environ: Mapping[str, str] | None = None
) -> OutputMasking:
    """The masking for a command about to run: what the rules (with the config's `patterns`) mask
    in its text, and the values of the secret-named variables in `environ` (the server's own)."""
    masked, found = _redactor(tuple(patterns)).mask(command)
    values = [*found, *(value for secret in found if "\\" in secret for value in [_unescaped(secret)])]
    values += _server_secrets() if environ is None else environment_secrets(environ)
    usable = (v[:MAX_OUTPUT_SECRET] for v in values if len(v.strip()) >= MIN_OUTPUT_SECRET and MASK not in v)
    return OutputMasking(masked, tuple(dict.fromkeys(usable))[:MAX_OUTPUT_SECRETS])


def environment_secrets(environ: Mapping[str, str]) -> list[str]:
    """The values of the variables whose names say they hold a secret (API_TOKEN, DB_PASSWORD),
    but not of those that name a place (SSH_AUTH_SOCK, PWD) or whose value is a path that exists
    (GOOGLE_APPLICATION_CREDENTIALS=/home/me/key.json): masking a path would mask it everywhere."""
    return [
        value
        for name, value in environ.items()
        if value
        and _SECRET_VARIABLE.fullmatch(name)
        and not _PLACE_VARIABLE.fullmatch(name)
        and not (os.path.isabs(value) and os.path.exists(value))
    ]


@lru_cache(maxsize=1)
def _server_secrets() -> tuple[str, ...]:
    return tuple(environment_secrets(os.environ))  # the server's environment is fixed once it serves


def _unescaped(text: str) -> str:
    """A value as a program receives it from a quoted or escaped word (`a\\"b` prints as `a"b`)."""
    return re.sub(r"\\(.)", r"\1", text)


@lru_cache(maxsize=8)
def _redactor(patterns: tuple[str, ...]) -> Redactor:
    return Redactor(patterns)
