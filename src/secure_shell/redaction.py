"""Masking secrets in text that is written down (the audit trail): what a secret looks like in a
command line, and how to hide it without changing the command's shape.

Every rule is a pattern whose named group `secret` is replaced by `***`; everything around it, the
quotes, the `=`, the `;` and `&&` of the command, stays as it was, so a masked record still shows
the command's structure. An unquoted value ends where the shell would end the word (white space or
an operator character), a quoted one at its closing quote.
"""

from __future__ import annotations

from typing import Iterable

import regex

MASK = "***"
REDACTION_SECONDS = 0.2

# A value as a shell or a config file writes it: double-quoted, single-quoted, or a bare word that
# ends at white space or at a character that would end a shell word.
_VALUE = r"""(?:"(?P<secret>[^"\n]*)"|'(?P<secret>[^'\n]*)'|(?P<secret>[^\s'"`;&|<>()]+))"""
# The same, for a value inside structured data (JSON, YAML, URLs): a bare value also ends at , } ]
# and a value may sit between escaped quotes (JSON inside a shell string).
_DATA_VALUE = (
    r"""(?:\\"(?P<secret>(?:[^"\\\n]|\\[^"\n])*)\\"|"(?P<secret>(?:[^"\\\n]|\\.)*)"|"""
    r"""'(?P<secret>[^'\n]*)'|(?P<secret>(?:[^\s'"`;&|<>(),}\]\\]|\\(?![nrt]))+))"""
)
# Names that hold a secret: anywhere in the name for the unambiguous words, as a whole segment for
# the short ones (DB_PASS, PWD, AUTH), so `BYPASS` or `author` are left alone.
_SENSITIVE = (
    r"(?:[A-Za-z0-9_.-]*(?:passw(?:or)?d|passphrase|secret|token|api[-_]?key|apikey|access[-_]?key|"
    r"private[-_]?key|credentials?|session[-_]?key|signing[-_]?key|client[-_]?secret)[A-Za-z0-9_.-]*"
    r"|(?:[A-Za-z0-9.-]*_)?(?:pass|pwd|pw|auth)(?:_[A-Za-z0-9_.-]*)?)"
)
# Long flags (and Windows /flag:) that take a secret.
_SECRET_FLAG = (
    r"(?:password|passwd|pass|pwd|passphrase|token|auth-token|access-token|secret|client-secret|"
    r"api[-_]?key|access[-_]?key|secret[-_]?key|private[-_]?key)"
)

DEFAULT_REDACTIONS: tuple[str, ...] = (
    # PEM private keys, including one cut off by the field cap.
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?P<secret>(?s:.*?))(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)",
    # Assignments: export X=…, inline X=… cmd, set "X=…", $env:X = "…", --from-literal=password=….
    rf"(?i)(?<![A-Za-z0-9_.-]){_SENSITIVE}\s*=\s*{_VALUE}",
    # Keys in JSON, YAML, TOML, PowerShell hashtables: "password": "…", token: …, 'api_key' => '…'.
    rf"(?i)(?P<q>\\?[\"'])?(?<![A-Za-z0-9_.-]){_SENSITIVE}(?P=q)?\s*(?::(?!//)|=>)\s*{_DATA_VALUE}",
    # A secret key and its value given as two arguments: SetEnvironmentVariable("API_TOKEN", "…").
    rf"(?i)(?P<q>[\"']){_SENSITIVE}(?P=q)\s*,\s*{_VALUE}",
    # Config tools that take KEY VALUE: aws configure set aws_secret_access_key …, npm config set _authToken ….
    rf"(?i)\bconfig(?:ure)?\s+(?:set\s+)?(?:--?[\w-]+(?:=\S+)?\s+)*(?:[^\s=]*[:/])?{_SENSITIVE}\s+{_VALUE}",
    # Flags: --password X, --token=X, -token X, /password:X.
    rf"(?i)(?<![\w-])(?:--?|/){_SECRET_FLAG}(?:\s*[=:]\s*|\s+){_VALUE}",
    # mysql-family -pSECRET (glued; `-p` alone prompts), sshpass -p X, redis-cli -a X.
    r"(?i)\b(?:mysql|mysqladmin|mysqldump|mysqlimport|mysqlshow|mariadb|mariadb-dump)\b[^;&|\n]*?\s-p(?P<secret>[^\s;&|<>()'\"`]+)",
    rf"(?i)\bsshpass\b(?:\s+-[a-oq-z]\S*)*\s+-p\s*{_VALUE}",
    rf"(?i)\bredis-cli\b[^;&|\n]*?\s-a\s+{_VALUE}",
    # user:password after -u / --user / --proxy-user (curl, wget --user with --password handled above).
    r"""(?i)(?:(?<![\w-])-[uU]\s*|--(?:proxy-)?user(?:\s*=\s*|\s+))["']?[^\s:'"]*:(?P<secret>[^\s'"`;&|<>()]+)""",
    # HTTP headers, quoted or not: Authorization: Bearer …, X-Api-Key: …, Private-Token: ….
    r"(?i)\b(?:proxy-)?authorization\s*:\s*(?:(?:bearer|basic|token|digest|bot|negotiate)\s+)?(?P<secret>[^\s'\"`;&|<>()]+)",
    r"(?i)\b(?:x-api-key|api-key|apikey|x-auth-token|x-access-token|private-token|job-token|x-goog-api-key|"
    r"ocp-apim-subscription-key)\s*:\s*(?P<secret>[^\s'\"`;&|<>()]+)",
    # Cookies: the whole quoted header value; unquoted, up to the end of the word.
    r"(?i)(?P<q>[\"'])(?:set-)?cookie\s*:\s*(?P<secret>[^\"'\n]+)(?P=q)",
    r"(?i)\b(?:set-)?cookie\s*:\s*(?P<secret>[^\s'\"`;&|<>()]+)",
    rf"(?i)(?<![\w-])--cookie(?:\s*=\s*|\s+){_VALUE}",
    # Credentials in URLs: scheme://user:secret@host and ?access_token=… query parameters.
    r"(?i)\b[a-z][a-z0-9+.-]*://[^:/\s@'\"]*:(?P<secret>[^@\s'\"/]+)@",
    r"(?i)[?&](?:access_token|token|api_?key|apikey|key|secret|password|client_secret|sig|signature|auth)="
    r"(?P<secret>[^&\s'\"#;|<>()]+)",
    # PowerShell secure strings made from plain text.
    rf"(?i)\bConvertTo-SecureString\s+(?:-String\s+)?{_VALUE}",
    # Well-known token formats, wherever they appear.
    r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b",
    r"\bgh[pousr]_[A-Za-z0-9]{20,}\b",
    r"\bgithub_pat_[A-Za-z0-9_]{20,}\b",
    r"\bgl(?:pat|dt|ptt|rt|cbt|oas|ft|imt|soat|ffct)-[A-Za-z0-9_-]{16,}",
    r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
    r"\bsk-(?:proj-|svcacct-|admin-|ant-)?[A-Za-z0-9_-]{20,}",
    r"\bAIza[0-9A-Za-z_-]{35}\b",
    r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}",
    r"\bnpm_[A-Za-z0-9]{36}\b",
    r"\bpypi-[A-Za-z0-9_-]{50,}",
    r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    r"(?i)https://hooks\.slack\.com/services/(?P<secret>[A-Za-z0-9/]+)",
)


class Redactor:
    """Applies the built-in rules and a config's own patterns; a pattern that cannot finish in time
    masks the whole text rather than leak it."""

    def __init__(self, extra: Iterable[str] = ()) -> None:
        self.patterns = [regex.compile(p) for p in (*DEFAULT_REDACTIONS, *extra)]

    def __call__(self, text: str) -> str:
        for pattern in self.patterns:
            try:
                text = pattern.sub(_masker, text, timeout=REDACTION_SECONDS)
            except TimeoutError:
                return MASK
        return text


def _masker(match: regex.Match[str]) -> str:
    if "secret" not in match.re.groupindex:
        return MASK
    start, end = match.span("secret")
    if start < 0:
        return MASK  # a configured pattern whose secret group took no part: mask all it matched
    if start == end:
        return match.group(0)  # an empty value: nothing to hide
    whole_start = match.start()
    text = match.group(0)
    if text[start - whole_start : end - whole_start] == MASK:
        return text
    return text[: start - whole_start] + MASK + text[end - whole_start :]
