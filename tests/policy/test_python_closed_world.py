"""Python's closed world of reach: every way code can reach a function that runs a program or code
is followed to that function or refused, each refusal beside an allowed twin of the same construct.
The tables themselves are checked against the standard library of the interpreter running the
tests: every module it keeps under another module's name is followed, and every module called inert
holds nothing that reaches a runner."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import textwrap

import pytest

from secure_shell.policy.python_members import COMMON_NAMES, FAR_NAMES, INERT, MODULE_ALIASES, MODULES, RUNNERS
from tests.helpers.policy import B, I, P, V, assert_allowed, assert_denied, check

# (code, rule, twin): the code is refused for `rule`, the twin (the same construct, ordinary) allowed
CASES = [
    # a module another module keeps is the module itself: shutil.os.system is os.system
    ('import shutil; shutil.os.system("r" + "m x")', I, 'import shutil; shutil.os.system("git status")'),
    ('import shutil; shutil.os.system("rm x")', B, "import shutil; print(shutil.os.getcwd())"),
    ('import tempfile; tempfile._os.system("r" + "m x")', I, "import tempfile; print(tempfile._os.sep)"),
    ('import os.path as p; p.os.popen("r" + "m x")', I, "import os.path as p; print(p.os.sep)"),
    ('import typing; typing.sys.modules["os"]', I, "import typing; print(typing.List[int])"),
    ('from subprocess import os; os.execvp("r" + "m", ["x"])', I, "from subprocess import os; print(os.sep)"),
    ('import posix; posix.system("r" + "m x")', I, "import posix; print(posix.getcwd())"),
    ('import __main__, os; __main__.os.system("r" + "m x")', I, "import __main__; print(__main__.__name__)"),
    # a runner's name read off an object the policy cannot follow
    (
        'import importlib; m = importlib.import_module("shutil"); m.os.system("x")',
        I,
        'import importlib; m = importlib.import_module("shutil"); print(m.which("git"))',
    ),
    ("def f(o): return o.system", I, "def f(o): return o.name"),
    (
        'import asyncio; asyncio.get_event_loop().subprocess_shell(None, "x")',
        I,
        "import asyncio; print(asyncio.run(asyncio.sleep(0, 1)))",
    ),
    (
        'import sqlite3; sqlite3.connect(":memory:").load_extension("x")',
        I,
        'import sqlite3; print(sqlite3.connect(":memory:").execute("select 1").fetchone())',
    ),
    (
        'import string; string.Formatter().get_field("0.os", [1], {})',
        I,
        'import string; print(string.Formatter().format("{0}", 1))',
    ),
    (
        'import subprocess; p = subprocess.Popen(["ls"]); p._execute_child()',
        I,
        'import subprocess; subprocess.Popen(["ls"]).wait()',
    ),
    # runners as values, and getattr as one
    (
        "import os, threading; threading.Thread(target=os.system, args=('ls',))",
        I,
        "import threading; threading.Thread(target=print, args=('ls',))",
    ),
    ("import os, functools; functools.partial(os.system, 'ls')", I, "import functools; functools.partial(int, base=2)"),
    ("import os; list(map(os.system, ['ls']))", I, "import os; list(map(os.path.basename, ['a/b']))"),
    (
        "import functools, shutil; functools.reduce(getattr, ['os'], shutil)",
        I,
        "import functools, operator; functools.reduce(operator.add, [1])",
    ),
    ("import subprocess; subprocess.Popen.__init__", I, "import subprocess; print(subprocess.PIPE)"),
    # getattr: a literal name, names a `for` takes from literals, or any name on an inert module
    (
        "import os\nfor n in ('getcwd', 'system'): getattr(os, n)",
        I,
        "import os\nfor n in ('getcwd', 'getpid'): getattr(os, n)()",
    ),
    ("import pathlib; getattr(pathlib.Path('.'), input())", I, "import math; print(getattr(math, input())(4))"),
    ("import os; getattr(os, 'sys' + 'tem')", I, "import os; print(getattr(os, 'sep'))"),
    # sys.modules only for the names it holds; a class's own __dict__
    ("import sys; sys.modules.get('os')", I, "import sys; print('json' in sys.modules, sorted(sys.modules)[:1])"),
    ("class A:\n    import os\nprint(A.__dict__)", I, "class A:\n    x = 1\nprint(A.__dict__.keys())"),
    ("import os\nclass A: pass\nA = os\nA.__dict__", I, "class A:\n    def f(self): return 1\nprint(A.__dict__['f'])"),
    # every member at once, code objects, frames, string annotations, names resolved from strings
    ("import gc; gc.get_objects()", I, "import gc; print(gc.collect() >= 0)"),
    ("import inspect, os; inspect.getmembers(os)", I, "import inspect; print(inspect.signature(len))"),
    (
        "import types; types.FunctionType(compile('1', 'x', 'eval'), {})()",
        I,
        "import types; print(types.SimpleNamespace(a=1))",
    ),
    ("import sys; sys._getframe().f_globals", I, "import sys; print(sys._getframe().f_lineno)"),
    ("def f(x: \"__import__('os').system('r' + 'm x')\"): pass", I, 'def f(x: "int") -> "str": pass'),
    ("import pydoc; pydoc.locate('os.system')", I, "import pydoc; print(pydoc.render_doc(len))"),
    ("import pkgutil; pkgutil.resolve_name('os:system')", I, "import pkgutil; print(pkgutil.get_data.__name__)"),
    ("import typing; typing.ForwardRef(input())", I, "import typing; typing.ForwardRef('int')"),
    # modules known whole: only their known members
    ("import tkinter; tkinter.Tcl().eval('exec ls')", I, "import sys; print(sys.version)"),
    ('import sh; sh.rm("x")', I, "import json; print(json.dumps(1))"),
    ("import ctypes; ctypes.memmove(0, 0, 1)", I, "import ctypes; print(ctypes.sizeof(ctypes.c_int))"),
    ("import _posixsubprocess as p; p.fork_exec()", I, "import _posixsubprocess; print(_posixsubprocess.__name__)"),
    ("import doctest; doctest.testmod()", I, "import doctest; doctest.testfile('notes.txt')"),
    ("import doctest, app; app.f.__doc__ = x; doctest.testmod(app)", I, "import doctest, app; doctest.testmod(app)"),
    ("import doctest, app; setattr(app, n, x); doctest.testmod(app)", I, "import doctest, app; setattr(app, 'y', 1)"),
    ("import trace; trace.Trace().run('print(1)')", I, "import cProfile; cProfile.run('sum(range(3))')"),
    # the stdlib runners not modelled before
    ('import pydoc; pydoc.pipepager("", "r" + "m x")', I, 'import pydoc; pydoc.pipepager("hi", "cat")'),
    ('from pydoc import tempfilepager as t; t("", "rm x")', B, 'from pydoc import tempfilepager as t; t("hi", "cat")'),
    (
        'from distutils.spawn import spawn; spawn(["r" + "m", "x"])',
        I,
        'from distutils.spawn import spawn; spawn(["git", "status"])',
    ),
    (
        "from multiprocessing.util import spawnv_passfds as s; s(b'rm', [b'rm', b'x'], ())",
        B,
        "from multiprocessing.util import spawnv_passfds as s; s(b'git', [b'git'], ())",
    ),
    (
        "import multiprocessing as m; m.set_executable(input())",
        I,
        "import multiprocessing as m, sys; m.set_executable(sys.executable)",
    ),
    (
        "import asyncio; asyncio.subprocess.create_subprocess_shell(input())",
        I,
        "import asyncio; asyncio.subprocess.create_subprocess_exec('git', 'status')",
    ),
    # the standard library's private members run programs no table models (uuid._get_command_stdout)
    ('import uuid; uuid._get_command_stdout("r" + "m", "x")', I, "import uuid; print(uuid.uuid4())"),
    ('from os import _execvpe; _execvpe("x", [])', I, "import os; os._exit(0)"),
    ("import _osx_support; _osx_support._read_output('x')", I, "import app; print(app._private)"),
    ("m = __import__('uuid'); m._get_command_stdout('x')", I, "m = __import__('uuid'); print(m.uuid4())"),
    ('import imaplib; imaplib.IMAP4_stream("r" + "m x")', I, "import imaplib; print(imaplib.IMAP4_PORT)"),
    ("import pipes; pipes.Template().append('x', '--')", I, "import pipes; print(pipes.quote('a b'))"),
    (
        "import mailcap; mailcap.findmatch({}, 'text/plain')",
        I,
        "import mimetypes; print(mimetypes.guess_type('a.txt'))",
    ),
    # a module's command line with arguments the code sets (timeit's arguments are statements)
    ("import runpy; runpy.run_module('timeit', run_name='__main__')", I, "import runpy; runpy.run_module('json')"),
    ("import timeit; timeit.main(['x'])", I, "import timeit; print(timeit.timeit('1+1', number=10))"),
    ("import pip; pip.main(['install', 'x'])", I, "import pip; print(pip.__version__)"),
    # a runner found by its dotted name in a string, and a main() fed the argv the code built
    (
        'import unittest; unittest.TestLoader().loadTestsFromName("timeit.main")',
        I,
        'import unittest; unittest.TestLoader().discover("tests")',
    ),
    (
        'import sys, unittest; sys.argv = ["x", "timeit.main"]; unittest.main()',
        I,
        'import sys, unittest; sys.argv = ["x", "tests.test_x"]; unittest.main()',
    ),
    (
        "import sys; sys.argv.append(input())",
        I,
        'import sys; sys.argv = ["prog", "--top", "3"]; from app.cli import main; main()',
    ),
    (
        'import inspect, shutil; inspect.getattr_static(shutil, "o" + "s")',
        I,
        'import inspect, shutil; inspect.getattr_static(shutil, "which")',
    ),
    (
        'import logging.config; logging.config.BaseConfigurator({}).resolve("x")',
        I,
        'import logging; logging.getLogger("app.core").info("x")',
    ),
    (
        "import concurrent.futures as f; f.__getattr__('x')",
        I,
        "import concurrent.futures as f; print(f.ThreadPoolExecutor)",
    ),
    # environment variables that name programs, set where the code's programs see them
    (
        'import os; os.environ["PAGER"] = "r" + "m x"; help("os")',
        V,
        'import os; os.environ["PAGER"] = "cat"; help("len")',
    ),
    ('import os; os.environ["MANPAGER"] = "less"', V, 'import os; os.environ["LANG"] = "C"'),
    ('import os; os.environ["GIT_" + "EDITOR"] = "true"', V, 'import os; os.environ["GIT_EDITOR"] = "true"'),
    ('import os; os.putenv("EDITOR", input())', V, 'import os; os.putenv("LANG", "C")'),
    ('import os; os.environ.update({"BROWSER": "x"})', V, 'import os; os.environ.update({"PYTHONPATH": "src"})'),
    ("import os; os.environ.update(d)", V, "import os; os.environ.setdefault('LANG', 'C')"),
    ('import os; os.environ["LD_PRELOAD"] = "x.so"', V, 'import os; print(os.environ.get("HOME"))'),
    ('import os; os.environ._data[b"PAGER"] = b"x"', V, 'import os; print(dict(os.environ).get("HOME"))'),
    ("import os; e = os.environ; e['EDITOR'] = 'x'", V, "import os; e = os.environ.copy(); e['PYTHONPATH'] = 'src'"),
    (
        'import os, subprocess; subprocess.run(["git", "log"], env={"GIT_PAGER": input()})',
        V,
        'import os, subprocess; subprocess.run(["git", "log"], env={**os.environ, "GIT_PAGER": "cat"})',
    ),
    (
        "import os, subprocess; e = dict(os.environ); e[k] = v; subprocess.run(['git'], env=e)",
        V,
        "import os, subprocess; e = dict(os.environ); e['X'] = v; subprocess.run(['git'], env=e)",
    ),
    (
        "import os, subprocess; subprocess.run(['git'], env=make())",
        V,
        "import os, subprocess; subprocess.run(['git'], env=None)",
    ),
    (
        "import os; os.execve('/bin/ls', ['ls'], {'GIT_SSH_COMMAND': input()})",
        V,
        "import os; os.execve('ls', ['ls'], {'LANG': 'C'})",
    ),
    # sys.executable is the interpreter: checked as python3 would be
    (
        "import subprocess, sys; subprocess.run([sys.executable, '-c', 'import os; os.system(input())'])",
        I,
        "import subprocess, sys; subprocess.run([sys.executable, '-m', 'pip', '--version'])",
    ),
    # a string is a command only where it reaches a runner; a path is always checked
    ("import os; os.system('rm -f x')", B, "print('rm -f x')"),
    ("import shutil; shutil.copy('/etc/shadow', 'x')", P, "import shutil; print(shutil.which('rm'))"),
]

# the rule a code's refusal names: inline-code for what the code reaches, except where the twin
# table says blocked-command (a literal that reaches a runner) or a path
_RULES = {V: I}


@pytest.mark.parametrize("code, rule, twin", CASES, ids=[c for c, _, _ in CASES])
def test_reaching_a_runner_is_followed_or_refused(code: str, rule: str, twin: str) -> None:
    command = f"python3 -c {shlex.quote(code)}"
    assert_denied(check("bash", command), _RULES.get(rule, rule), command)


@pytest.mark.parametrize("code, rule, twin", CASES, ids=[t for _, _, t in CASES])
def test_the_same_construct_used_ordinarily_is_allowed(code: str, rule: str, twin: str) -> None:
    command = f"python3 -c {shlex.quote(twin)}"
    assert_allowed(check("bash", command), command)


@pytest.mark.parametrize("code, rule, twin", CASES[:12], ids=[c for c, _, _ in CASES[:12]])
def test_repl_input_gets_the_same_closed_world(code: str, rule: str, twin: str) -> None:
    from secure_shell.policy.decide import decide
    from tests.helpers.policy import ENV, cwd_for, policy_for

    policy = policy_for("bash")
    # split at the first statement: the state the later input uses was made by the earlier one
    first, _, rest = code.partition("; ")
    text = f"{first}\n{rest}\n" if rest else f"{code}\n"
    assert_denied(
        decide("python3 -i -q", policy, cwd_for("bash"), ENV, session_input=text), _RULES.get(rule, rule), text
    )
    first, _, rest = twin.partition("; ")
    text = f"{first}\n{rest}\n" if rest else f"{twin}\n"
    assert_allowed(decide("python3 -i -q", policy, cwd_for("bash"), ENV, session_input=text), text)


# Run in a child interpreter: importing the whole standard library is no business of the test process.
_SURVEY = textwrap.dedent(
    """
    import contextlib, importlib, io, json, sys, types, warnings
    warnings.simplefilter("ignore")
    skip = ("antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo", "__main__", "lib2to3")
    skip += ("ensurepip", "test")
    runners = json.loads(sys.argv[1])
    for name in sorted(sys.stdlib_module_names):
        if name.startswith(skip):
            continue
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                importlib.import_module(name)
        except BaseException:
            continue
    functions = {}
    for qualified in runners:
        module, _, leaf = qualified.rpartition(".")
        found = sys.modules.get(module)
        if found is not None and hasattr(found, leaf):
            functions[id(getattr(found, leaf))] = qualified
    kept, inert = [], {}
    for holder, module in list(sys.modules.items()):
        if not isinstance(module, types.ModuleType) or holder.startswith(skip):
            continue
        for attr, value in list(vars(module).items()):
            if isinstance(value, types.ModuleType):
                kept.append([holder, attr, value.__name__])
            elif id(value) in functions:
                inert.setdefault(holder, []).append(attr)
    print(json.dumps({"kept": kept, "runner_holders": inert}))
    """
)


@pytest.fixture(scope="module")
def survey() -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _SURVEY, json.dumps(sorted(name for name in RUNNERS if "." in name))],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def _runner_module(name: str) -> bool:
    top = name.split(".")[0]
    return top in {"os", "posix", "subprocess", "_posixsubprocess", "builtins", "pty", "runpy", "ctypes", "pdb"} or (
        name in MODULE_ALIASES.values() and name != "shutil"
    )


def test_every_module_the_stdlib_keeps_under_a_name_is_followed(survey: dict[str, object]) -> None:
    """A module held by a module that may be used as a value (`x = shutil`) is reached as `x.NAME`:
    NAME must be refused on an object the policy cannot follow, or be followed to the module."""
    kept = survey["kept"]
    assert isinstance(kept, list)
    missing = set()
    for holder, attr, module in kept:
        if not _runner_module(module) or holder in MODULES or holder in ("__main__", "__mp_main__"):
            continue
        if attr not in FAR_NAMES and attr not in MODULE_ALIASES:
            missing.add(f"{holder}.{attr} is {module}")
        if attr in COMMON_NAMES:
            missing.add(f"{holder}.{attr} is {module} under a name too common to refuse")
    assert not missing, sorted(missing)


def test_inert_modules_hold_nothing_that_reaches_a_runner(survey: dict[str, object]) -> None:
    kept = survey["kept"]
    holders = survey["runner_holders"]
    assert isinstance(kept, list) and isinstance(holders, dict)
    for holder, attr, module in kept:
        assert holder not in INERT, f"{holder}.{attr} is the module {module}: {holder} is not inert"
    for holder in INERT:
        assert holder not in holders, f"{holder} holds runners {holders[holder]}"


def test_each_runner_is_refused_off_an_object_the_policy_cannot_follow() -> None:
    """Its leaf name, or the name of every module that holds it, is refused on an unknown object."""
    uncovered = []
    for name in RUNNERS:
        module, _, leaf = name.rpartition(".")
        if not module:
            continue
        aliases = [alias for alias, target in MODULE_ALIASES.items() if target == module]
        if leaf not in FAR_NAMES and not (aliases and all(alias in FAR_NAMES for alias in aliases)):
            uncovered.append(name)
    # the leaves too common to refuse belong to modules refused whole as values (MODULES)
    loose = [name for name in uncovered if name.rpartition(".")[0] not in MODULES]
    assert not loose, sorted(loose)
