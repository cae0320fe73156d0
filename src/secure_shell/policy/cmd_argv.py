"""How a program cmd starts splits its own command line: the C runtime's rules (CommandLineToArgvW,
MSVCRT's parse_cmdline), not cmd's.

cmd hands an external program the rest of the line as text, carets removed, quotes and `,;=` kept;
the program splits it. Its rules differ from cmd's: `,`, `;` and `=` do not separate (`powershell -c
echo a;ri x` gives PowerShell `echo a;ri x`), and `\\"` is a literal quote that does not toggle
quoting (`git diff --src-prefix=a\\"b x ..\\secret` gives git three arguments where cmd sees one
quoted word). The engine checks the words the program receives.

Rules (Microsoft, "Parsing C++ command-line arguments"): arguments are separated by spaces and tabs
outside quotes; 2n backslashes before a `"` give n backslashes and the `"` toggles quoting; 2n+1 give
n backslashes and a literal `"`; other backslashes are literal; inside quotes `""` is a literal `"`.
"""

from __future__ import annotations

from secure_shell.policy.parsed import Word


def msvcrt_words(text: str) -> list[Word]:
    """The arguments a C-runtime program reads from `text`, each with its text as written."""
    words: list[Word] = []
    value: list[str] = []
    start: int | None = None
    quoted = False
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch in " \t" and not quoted:
            if start is not None:
                words.append(Word(text[start:i], "".join(value), "".join(value)))
                value, start = [], None
            i += 1
            continue
        if start is None:
            start = i
        if ch == "\\":
            j = i
            while j < n and text[j] == "\\":
                j += 1
            count = j - i
            if j < n and text[j] == '"':
                value.append("\\" * (count // 2))
                if count % 2:
                    value.append('"')
                    i = j + 1
                else:
                    i = j  # the quote toggles below
                continue
            value.append("\\" * count)
            i = j
            continue
        if ch == '"':
            if quoted and i + 1 < n and text[i + 1] == '"':
                value.append('"')
                i += 2
                continue
            quoted = not quoted
            i += 1
            continue
        value.append(ch)
        i += 1
    if start is not None:
        words.append(Word(text[start:], "".join(value), "".join(value)))
    return words
