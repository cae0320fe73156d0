"""Python code read on its syntax tree (the `ast` module), not on its text: a closed world of reach.

Every way the code's own text can reach a function that runs a program or code is followed to that
function or refused (python_checker.py walks the tree; python_members.py holds the tables):

- Runners (RUNNERS: `os.system`, `subprocess.*`, `os.exec*`/`spawn*`, `pydoc.pipepager`, `eval`,
  `exec`, `compile`, `__import__`, `importlib`, `runpy`...) are checked on their arguments
  (python_calls.py): literal ones become what the engine checks anyway (a shell script, an argv, more
  Python code, a module, a file); anything else is a refusal. Those that can never be literal (NEVER:
  `pty.spawn`, `ctypes`, `pickle.loads`, `trace.Trace`, `gc.get_objects`...) are refused.
- Names: import bindings are followed, and a module another module keeps (`shutil.os`,
  `tempfile._os`, `os.path.os`: MODULE_ALIASES) is the module itself.
- Off the import chain (a call's result, a local, the REPL's `_`) the policy cannot know what an
  object is: an attribute named like a runner module or a runner (FAR_NAMES) is refused there.
- Values: a runner, `getattr`, or a module that runs things (MODULES) used other than by calling it
  or reading one of its attributes is refused; `getattr` takes a literal name, names a `for` binds
  to literals, or any name on an INERT module; dunders that reach around names (REACH) are refused,
  except `__dict__` of a class the code defines without imports; `sys.modules` only for its names.
- Modules known whole (OPAQUE: ctypes, pdb, pydoc, sh, ...): a member outside their table is refused.
- Environment variables the code sets for itself or its programs are checked (python_env.py).
- String annotations are code (`typing.get_type_hints` evaluates them).

Modules the engine does not read (the project's own, third-party ones outside the tables) run what
their source says, as a program file does; SECURITY.md says so. REPL input is checked as one
program: each statement the interpreter would run, in order (repl_source), so a name bound in one
input is known when a later one uses it.
"""

from __future__ import annotations

import codeop
import sys
import warnings

from secure_shell.policy.python_calls import refusal
from secure_shell.policy.python_checker import Checker, parse
from secure_shell.policy.resolution import Resolution

MAX_ENTRY_LINES = 200  # lines of one unfinished REPL entry read one at a time


def check_python(code: str, label: str, *, lenient: bool = False) -> list[Resolution]:
    """What the code runs (Script, Inner, PathUse), or a Refusal; [] when it runs nothing the engine
    checks. `lenient`: text that does not parse is not Python and runs nothing."""
    try:
        tree = parse(code, label)
    except SyntaxError as error:
        if lenient:
            return []
        return [refusal(label, f"does not parse as Python {sys.version_info[0]}.{sys.version_info[1]} ({error.msg})")]
    return Checker(label, 0).run(tree)


def check_repl(text: str, label: str) -> list[Resolution]:
    """Input typed into a Python REPL, checked as the one program the interpreter runs from it."""
    try:
        parse(text, label)
        whole = True
    except SyntaxError:
        whole = False
    if whole:  # every line is a statement of one module: the REPL runs the same statements
        return check_python(text, label)
    source = repl_source(text)
    if source is None:
        return [refusal(label, f"has an entry of more than {MAX_ENTRY_LINES} lines still open")]
    return check_python(source, label)


def repl_source(text: str) -> str | None:
    """The statements a Python REPL runs from `text`, in order: each complete entry as
    `codeop.compile_command` finds it (a compound statement ends at a blank line); an entry that
    does not compile runs nothing and is left out; an unfinished one at the end has not run yet but
    is kept, so it is checked before it can."""
    entries: list[str] = []
    pending: list[str] = []
    for line in text.split("\n"):
        pending.append(line)
        if len(pending) > MAX_ENTRY_LINES:  # each line recompiles the entry: bound the work
            return None
        source = "\n".join(pending)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                compiled = codeop.compile_command(source, "<input>", "single")
        except (SyntaxError, ValueError, OverflowError):
            pending = []
            continue
        if compiled is not None:
            entries.append(source)
            pending = []
    tail = "\n".join(pending).strip("\n")
    if tail:
        entries.append(tail + "\n")
    return "\n".join(entry for entry in entries if entry.strip()) + "\n"
