"""The tables python_code.py reads Python code against: which functions run programs or code, which
names hold a module that does, and which modules are known whole.

Every name is a qualified name as the code reaches it from an import (`subprocess.run`); a module
reached through another module (`shutil.os`, `tempfile._os`) is first renamed to the module it is
(MODULE_ALIASES), so one table entry covers every way the standard library re-exports it.
"""

from __future__ import annotations

# qualified name -> how its arguments name what runs
#   shell: the argument at this index is a shell command line
#   popen: subprocess-style (a list is an argv, a string is a program, or a script with shell=True)
#   exec:  (index of the program, index of the argv list) of os.exec*/spawn*/posix_spawn
#   star:  the program and its arguments as separate arguments from this index
#   code:  Python code to run (eval, exec, compile, timeit, pdb.run)
#   module: a module to import (its import runs code that could be anything)
#   path:  a file of code to run (runpy.run_path)
SHELL = {n: 0 for n in ("os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput")}
SHELL |= {n: 0 for n in ("asyncio.create_subprocess_shell", "asyncio.subprocess.create_subprocess_shell")}
SHELL |= {n: 0 for n in ("commands.getoutput", "platform.popen", "pexpect.run", "pexpect.spawn")}
# pydoc's pagers hand their second argument to /bin/sh
SHELL |= {
    "pydoc.pipepager": 1,
    "pydoc.tempfilepager": 1,
    "_pyrepl.pager.pipe_pager": 1,
    "_pyrepl.pager.tempfile_pager": 1,
}
SHELL |= {"imaplib.IMAP4_stream": 0}  # runs its command through /bin/sh to talk IMAP over a pipe
POPEN = {f"subprocess.{n}" for n in ("run", "call", "check_call", "check_output", "Popen")}
POPEN |= {"distutils.spawn.spawn"}
EXEC_LIST = {f"os.exec{s}": (0, 1) for s in ("v", "ve", "vp", "vpe")}
EXEC_LIST |= {f"os.spawn{s}": (1, 2) for s in ("v", "ve", "vp", "vpe")}
EXEC_LIST |= {"os.posix_spawn": (0, 1), "os.posix_spawnp": (0, 1), "multiprocessing.util.spawnv_passfds": (0, 1)}
EXEC_STAR = {f"os.exec{s}": 0 for s in ("l", "le", "lp", "lpe")}
EXEC_STAR |= {f"os.spawn{s}": 1 for s in ("l", "le", "lp", "lpe")}
EXEC_STAR |= {"asyncio.create_subprocess_exec": 0, "asyncio.subprocess.create_subprocess_exec": 0, "os.startfile": 0}
CODE = {"eval", "exec", "compile", "builtins.eval", "builtins.exec", "builtins.compile"}
CODE |= {"timeit.timeit", "timeit.repeat", "timeit.Timer", "pdb.run", "pdb.runeval", "code.compile_command"}
CODE |= {"cProfile.run", "profile.run", "cProfile.runctx", "profile.runctx", "codeop.compile_command"}
MODULE = {"__import__", "builtins.__import__", "importlib.import_module", "importlib.__import__"}
MODULE |= {"runpy.run_module", "importlib.metadata.import_module"}
# a program set for later: multiprocessing starts its children with it
EXEC_STAR |= {"multiprocessing.set_executable": 0}
PATH = {"runpy.run_path", "doctest.testfile"}  # doctest runs the examples the file holds
# doctest.testmod(module): the examples in the docstrings of a module the code imports (python_calls)
DOCSTRINGS = {"doctest.testmod"}
# code from the terminal, native code, code found by a name in a string (pydoc.locate("os.system")),
# objects whose methods run code strings (trace.Trace().run, cProfile.Profile().runctx): never literal.
# (pydoc's pager and help() run $PAGER: python_env.py keeps the code from setting it.)
NEVER = {"code.interact", "code.InteractiveConsole", "code.InteractiveInterpreter", "pty.fork", "os.forkpty"}
NEVER |= {"ctypes.CDLL", "ctypes.cdll", "ctypes.PyDLL", "ctypes.pydll", "ctypes.CFUNCTYPE", "ctypes.pythonapi"}
NEVER |= {"pickle.loads", "pickle.load", "pickle.Unpickler", "marshal.loads", "marshal.load", "pdb.set_trace"}
NEVER |= {"breakpoint", "sys.modules", "pty.spawn", "os.fork", "os.register_at_fork", "sys.settrace"}
NEVER |= {"sys.setprofile", "webbrowser.open", "webbrowser.open_new", "webbrowser.open_new_tab", "webbrowser.get"}
NEVER |= {"vars", "globals", "locals", "_posixsubprocess.fork_exec", "subprocess._fork_exec"}
NEVER |= {"doctest.run_docstring_examples", "doctest.DocTestRunner"}
NEVER |= {"doctest.DebugRunner", "doctest.DocTestSuite", "doctest.DocFileSuite", "doctest.debug", "doctest.debug_src"}
NEVER |= {"doctest.script_from_examples", "trace.Trace", "cProfile.Profile", "profile.Profile", "pdb.Pdb", "bdb.Bdb"}
NEVER |= {"pydoc.locate", "pkgutil.resolve_name", "logging.config.dictConfig", "pickle.Unpickler"}
NEVER |= {"logging.config.fileConfig", "logging.config.listen", "unittest.mock.patch", "sys.addaudithook"}
# every object, code object or member at once: what they hold goes where names cannot follow
NEVER |= {"gc.get_objects", "gc.get_referrers", "gc.get_referents", "inspect.getmembers", "inspect.getmembers_static"}
NEVER |= {"types.CodeType", "types.FunctionType", "types.LambdaType", "sys.breakpointhook", "sys.__breakpointhook__"}
NEVER |= {"shelve.open", "shelve.Shelf", "shelve.DbfilenameShelf"}
# a module's command line with arguments the code builds: timeit's are statements, cProfile's a script
NEVER |= {"timeit.main", "cProfile.main", "profile.main"}
CODE |= {"typing.ForwardRef"}
RUNNERS = set(SHELL) | POPEN | set(EXEC_LIST) | set(EXEC_STAR) | CODE | MODULE | PATH | DOCSTRINGS | NEVER
BUILTINS = frozenset({"eval", "exec", "compile", "__import__", "breakpoint", "vars", "globals", "locals", "getattr"})

# The names under which the standard library keeps a module that runs programs or code, and the
# module each is (found by importing every stdlib module and listing its globals that are one of
# these modules; tests/policy/test_python_closed_world.py does it again on the interpreter it runs).
MODULE_ALIASES = {
    "os": "os",
    "_os": "os",
    "posix": "os",
    "nt": "os",
    "sys": "sys",
    "_sys": "sys",
    "builtins": "builtins",
    "bltns": "builtins",
    "__builtins__": "builtins",
    "subprocess": "subprocess",
    "_subprocess": "subprocess",
    "_posixsubprocess": "_posixsubprocess",
    "_fork_exec": "_posixsubprocess",
    "_winapi": "_winapi",
    "_imp": "_imp",
    "imp": "_imp",
    "_bootstrap": "importlib._bootstrap",
    "_bootstrap_external": "importlib._bootstrap_external",
    "_frozen_importlib": "importlib._bootstrap",
    "_frozen_importlib_external": "importlib._bootstrap_external",
    "importlib": "importlib",
    "_shutil": "shutil",
    "pty": "pty",
    "pdb": "pdb",
    "bdb": "bdb",
    "pydoc": "pydoc",
    "pickle": "pickle",
    "_pickle": "pickle",
    "marshal": "marshal",
    "ctypes": "ctypes",
    "runpy": "runpy",
    "doctest": "doctest",
    "webbrowser": "webbrowser",
    "cProfile": "cProfile",
    "_pyprofile": "profile",
    "timeit": "timeit",
    "multiprocessing": "multiprocessing",
    "base_subprocess": "asyncio.base_subprocess",
    "unix_events": "asyncio.unix_events",
    "code": "code",
    "spawn": "distutils.spawn",
}
# Real submodules whose name is also an alias above (asyncio.subprocess is not subprocess).
SUBMODULES = frozenset({"asyncio.subprocess", "distutils.spawn", "multiprocessing.util", "importlib.util"})
# Attribute names too common to refuse on an object the policy cannot follow (`error.code`,
# `args.spawn`); the runners of their modules are caught by their own leaf names instead.
COMMON_NAMES = frozenset({"code", "spawn", "run", "call", "eval", "exec", "compile", "open", "get", "load", "loads"})
COMMON_NAMES |= {"modules", "timeit", "repeat", "Timer", "help", "pager", "locate", "patch", "listen", "debug"}
COMMON_NAMES |= {"globals", "locals", "vars", "getattr", "ForwardRef", "open_new", "Error"}

# Modules whose every member the policy knows: a member outside RUNNERS and the listed harmless ones
# is refused (ctypes.CDLL is in RUNNERS; ctypes.memmove reaches memory the policy cannot read).
# Third-party modules that run programs under their members' own names (sh.rm, plumbum.local["rm"])
# are here with nothing harmless.
OPAQUE: dict[str, frozenset[str]] = {
    "ctypes": frozenset({"c_int", "c_char_p", "c_double", "sizeof", "Structure", "c_uint", "c_long"}),
    "_ctypes": frozenset(),
    "_posixsubprocess": frozenset(),
    "_winapi": frozenset(),
    "_imp": frozenset(),
    "importlib._bootstrap": frozenset(),
    "importlib._bootstrap_external": frozenset(),
    "pty": frozenset({"openpty", "STDIN_FILENO", "STDOUT_FILENO", "STDERR_FILENO"}),
    "code": frozenset(),
    "pdb": frozenset(),
    "bdb": frozenset({"BdbQuit"}),
    "trace": frozenset(),
    "doctest": frozenset({"ELLIPSIS", "NORMALIZE_WHITESPACE", "IGNORE_EXCEPTION_DETAIL", "OutputChecker"}),
    "runpy": frozenset(),
    "webbrowser": frozenset({"Error"}),
    "marshal": frozenset({"dumps", "dump", "version"}),
    # getpager, pager and help run $PAGER/$MANPAGER: the command's environment is checked where it is
    # set, and python_env.py checks what the code sets
    "pydoc": frozenset({"render_doc", "plain", "describe", "getdoc", "splitdoc", "synopsis", "plaintext", "getpager"})
    | {"pager", "help", "Helper", "ttypager", "plainpager"},
    "distutils.spawn": frozenset({"find_executable"}),
    "multiprocessing.util": frozenset({"get_logger", "log_to_stderr"}),
    "asyncio.base_subprocess": frozenset(),
    "asyncio.unix_events": frozenset(),
    "sh": frozenset(),
    "plumbum": frozenset(),
    "invoke": frozenset(),
    "fabric": frozenset(),
    "sarge": frozenset(),
    "delegator": frozenset(),
    "envoy": frozenset(),
    "ptyprocess": frozenset(),
    "pexpect": frozenset({"EOF", "TIMEOUT", "ExceptionPexpect"}),
    "cffi": frozenset(),
    "tkinter": frozenset(),  # Tcl().eval("exec ...") runs programs in an interpreter of its own
    "_tkinter": frozenset(),
    "distutils": frozenset(),
    "distutils.ccompiler": frozenset(),
    "pipes": frozenset({"quote"}),  # pipes.Template runs its commands through os.popen
    "mailcap": frozenset(),  # findmatch runs the test= commands of the entries it is given
    "pip": frozenset(),
    "idlelib": frozenset(),
    # its configurators find any function by a dotted name in a string (BaseConfigurator.resolve)
    "logging.config": frozenset(),  # pip.main(args) installs and builds what its arguments name
}
# Private members (`_name`) are implementation details no table models (uuid._get_command_stdout,
# os._execvpe, _osx_support._read_output run programs): refused on a module, except these. A
# private module is known to have nothing harmless. A module kept under a private name
# (tempfile._os) is followed as MODULE_ALIASES says.
PRIVATE_OK = frozenset({"os._exit", "sys._getframe", "sys._xoptions", "os._Environ", "sys._git"})
PUBLIC_MODULES = frozenset({"__main__", "__future__"})
# private helpers of the standard library that run programs, refused off an object the policy
# cannot follow (a module held in a local: `m = uuid; m._get_command_stdout(...)`)
_PRIVATE_RUNNERS = {"_get_command_stdout", "_read_output", "_read_cmd_output", "_syscmd_file", "_syscmd_ver"}
_PRIVATE_RUNNERS |= {"_execvpe", "_spawnvef", "_findLib_gcc", "_findLib_ld", "_findSoname_ldconfig", "_get_soname"}
_PRIVATE_RUNNERS |= {"_call_new_python", "_setup_pip", "_aix_bos_rte", "from_subprocess", "run_cgi", "open_r", "open_w"}
# names any module has that say only what it is
HARMLESS_MEMBERS = frozenset({"__name__", "__version__", "__file__", "__doc__", "__all__"})

# Modules whose functions run programs or code: used other than through one of their attributes
# (`x = os`, `f(os)`), the module goes where the names this module reads cannot follow.
MODULES = (
    frozenset(
        "os subprocess builtins importlib ctypes code pdb bdb timeit commands platform webbrowser sys operator asyncio "
        "trace doctest pydoc pickle marshal cProfile profile multiprocessing inspect pkgutil logging.config shelve "
        "typing unittest.mock setuptools._distutils gc".split()
    )
    | frozenset(OPAQUE)
    | (frozenset(MODULE_ALIASES.values()) - {"shutil"})
)

# Modules with no module among their attributes (nor their attributes' attributes) and no function
# that reaches one: any of their attributes, by any name, is harmless (getattr(math, name)).
INERT = frozenset({"math", "cmath", "itertools", "bisect", "heapq", "binascii", "zlib", "unicodedata", "time"})

# dunder names that reach functions and modules around the names this module reads
REACH = frozenset(
    {
        "__dict__",
        "__globals__",
        "__builtins__",
        "__subclasses__",
        "__getattribute__",
        "__code__",
        "__loader__",
        "__spec__",
        "__closure__",
        "__func__",
        "__self__",
        "__reduce__",
        "__reduce_ex__",
        "__base__",
        "__bases__",
        "__mro__",
        "__setitem__",
        "__annotations__",
        "__getattr__",
        "__setattr__",
        "f_globals",
        "f_locals",
        "f_builtins",
    }
)
REACH_STRINGS = REACH | {"__builtins__", "__import__"}

# the leaf names of the runners: read off an object the policy cannot follow, or given as a string to
# operator.attrgetter/methodcaller, each is refused unless too common a word (COMMON_NAMES)
LEAVES = frozenset(name.rsplit(".", 1)[-1] for name in RUNNERS)
# methods that run programs or code on objects of their own (an event loop, a sqlite3 connection,
# a Popen, a string.Formatter that reads attributes by a dotted name)
_METHODS = {"runctx", "runsource", "runcode", "runcall", "runfunc", "subprocess_shell", "subprocess_exec"}
_METHODS |= {"load_extension", "enable_load_extension", "_execute_child", "get_field"} | _PRIVATE_RUNNERS
_METHODS |= {"loadTestsFromName", "loadTestsFromNames", "getattr_static"}  # a function found by a dotted name
FAR_NAMES = (LEAVES | frozenset(MODULE_ALIASES) | _METHODS) - COMMON_NAMES
# modules a star import would bring runners in from unseen
RUNNER_MODULES = frozenset(name.split(".")[0] for name in RUNNERS if "." in name) | MODULES
