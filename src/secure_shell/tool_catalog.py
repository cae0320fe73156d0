"""What the server offers, as data: each tool's arguments (typed with pydantic), description,
annotations and result model, and the resources. The one definition both consumers read: server.py
registers the handlers with the SDK under these signatures, and early_lists.py answers `tools/list`
and `resources/list` from them before the SDK is imported.

It imports pydantic (already loaded by the configuration) and nothing of the SDK. Annotations are
evaluated at import (no `from __future__ import annotations`): they are the argument types.
"""

import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, Field, StrictBool, StrictInt

from secure_shell.shells import SHELL_FACTS, ShellKind

if TYPE_CHECKING:
    from secure_shell.config.resolve import ResolvedConfig


class ExecuteResult(BaseModel):
    exitCode: Optional[int]
    durationMs: int
    executionId: Optional[str]
    status: str
    totalLines: int
    returnedLines: int
    truncated: bool
    timedOut: bool
    allowed: bool = True
    reasons: list[dict[str, Any]] = []
    error: Optional[str] = None  # what failed once it had started (storage, the server, the client)


class OutputResult(BaseModel):
    executionId: str
    status: str
    totalLines: int
    returnedLines: int
    lines: list[dict[str, Any]]
    totalMatches: Optional[int] = None
    truncated: bool = False
    droppedLines: Optional[list[int]] = None
    pending: Optional[str] = None  # a running command's unfinished last line (a prompt)


class InputResult(BaseModel):
    executionId: str
    status: str
    allowed: bool
    writtenBytes: int
    stdinOpen: bool
    totalLines: int
    returnedLines: int
    lines: list[dict[str, Any]]
    pending: Optional[str] = None
    truncated: bool = False
    reasons: list[dict[str, Any]] = []


# The result a tool declares: a model (a CallToolResult whose structured content is that model), a
# plain dict of JSON (structured, any keys), or None (a CallToolResult without structured content).
Result = Union[type[BaseModel], type[dict], None]  # type: ignore[type-arg]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: tuple[inspect.Parameter, ...]  # what an agent sends, keyword-only, in order
    result: Result
    annotations: dict[str, bool]  # ToolAnnotations as on the wire (readOnlyHint, ...)
    context: bool  # the handler gets the request's context as `ctx`
    blocking: bool  # a plain function (the SDK runs it in a worker thread), else a coroutine


@dataclass(frozen=True)
class ResourceSpec:
    uri: str  # a URI, or a URI template when it has {placeholders}
    name: str
    mime_type: str
    description: str


RESOURCES = (
    ResourceSpec("cli://config", "config_resource", "application/json", "The effective policy"),
    ResourceSpec("cli://config/shells/{name}", "shell_resource", "application/json", "One shell's policy"),
    ResourceSpec("cli://logs/list", "logs_resource", "application/json", "Stored executions"),
    ResourceSpec(
        "cli://logs/commands/{id}{?startLine,endLine,search}",
        "log_resource",
        "text/plain",
        "One execution's output: a line range or a search",
    ),
)

# Argument types shared by several tools.
ExecutionId = Annotated[str, Field(description="The id execute_command returned.", max_length=64)]
Timeout = Annotated[
    Optional[StrictInt], Field(ge=1, le=3600, description="Seconds, 1..3600 (default: the shell's commandTimeout).")
]
MaxLines = Annotated[Optional[StrictInt], Field(ge=1, le=10000, description="Lines of output in the reply, 1..10000.")]
WorkingDir = Annotated[
    Optional[str], Field(description="Working directory (default: the session's current directory).", max_length=4096)
]
Command = Annotated[
    str, Field(description="The command text, exactly as the shell will run it.", min_length=1, max_length=65536)
]
BackgroundFlag = Annotated[StrictBool, Field(description="Start it and return at once; poll with get_command_output.")]
InteractiveFlag = Annotated[
    StrictBool, Field(description="Keep its stdin open for send_input (runs in the background).")
]
PtyFlag = Annotated[
    StrictBool, Field(description="With interactive: give it a pseudo-terminal (POSIX) for programs that need one.")
]
Status = Literal["running", "completed", "failed", "timed out", "stopped"]

READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}
DESTRUCTIVE = {"destructiveHint": True, "openWorldHint": True}
_NONE = inspect.Parameter.empty


def arg(name: str, annotation: Any, default: Any = _NONE) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)


def tool_specs(config: "ResolvedConfig", shells: list[ShellKind]) -> list[ToolSpec]:
    """Every tool this server offers for `config`'s `shells`, in the order tools/list gives them."""
    names = [kind.value for kind in shells]
    Shells: Any = Literal[tuple(names)] if names else str
    command_tools = _command_tools(config, shells) if shells else []
    return [*command_tools, *_output_tools(), *_policy_tools(Shells)]


def _command_tools(config: "ResolvedConfig", shells: list[ShellKind]) -> list[ToolSpec]:
    ShellName: Any = Literal[tuple(kind.value for kind in shells)]
    ProfileName: Any = Literal[tuple(config.profiles)] if config.profiles else str
    profile = (
        # no profile to choose: the argument is not offered at all
        [arg("profile", Annotated[Optional[ProfileName], Field(description="Environment profile.")], None)]
        if config.profiles
        else []
    )
    execute = ToolSpec(
        "execute_command",
        execute_description(config, shells),
        (
            arg("shell", Annotated[ShellName, Field(description="Which shell runs the command.")]),
            arg("command", Command),
            arg("workingDir", WorkingDir, None),
            arg("timeout", Timeout, None),
            arg("maxOutputLines", MaxLines, None),
            arg("background", BackgroundFlag, False),
            *profile,
            arg("interactive", InteractiveFlag, False),
            arg("pty", PtyFlag, False),
        ),
        ExecuteResult,
        DESTRUCTIVE,
        context=True,
        blocking=False,
    )
    send_input = ToolSpec(
        "send_input",
        "Write input to an interactive command (execute_command with interactive: true), "
        "after the policy checks it as that program would read it: a shell's input as "
        "commands, an interpreter's as code. Returns the output that followed, with line "
        "numbers, and the line it is waiting after (a prompt).",
        (
            arg("executionId", ExecutionId),
            arg(
                "input",
                Annotated[
                    str,
                    Field(
                        description="Text for its stdin; a newline is added unless it ends with one.",
                        max_length=1 << 20,
                    ),
                ],
                "",
            ),
            arg(
                "closeStdin",
                Annotated[StrictBool, Field(description="Close stdin after the input (a terminal gets EOF).")],
                False,
            ),
            arg(
                "waitMs",
                Annotated[StrictInt, Field(ge=0, le=30000, description="Wait up to this long for output, 0..30000.")],
                1000,
            ),
        ),
        InputResult,
        DESTRUCTIVE,
        context=True,
        blocking=False,
    )
    return [execute, send_input]


def _output_tools() -> list[ToolSpec]:
    """Reading, listing and stopping stored and running commands."""
    line = "; negative counts from the end."
    output = ToolSpec(
        "get_command_output",
        "Read stored output of a command: a line range (negative counts from the end), the "
        "lines after one you saw (since), or a regex search with context and the total number "
        "of matches. Works while a background command is still running.",
        (
            arg("executionId", ExecutionId),
            arg("startLine", Annotated[Optional[StrictInt], Field(description="First line, 1-based" + line)], None),
            arg("endLine", Annotated[Optional[StrictInt], Field(description="Last line, inclusive" + line)], None),
            arg(
                "search",
                Annotated[
                    Optional[str],
                    Field(description="Regular expression (case-insensitive) to find lines.", max_length=1000),
                ],
                None,
            ),
            arg(
                "context",
                Annotated[StrictInt, Field(ge=0, le=50, description="Lines of context around each match.")],
                0,
            ),
            arg(
                "maxLines",
                Annotated[Optional[StrictInt], Field(ge=1, le=10000, description="Most lines returned.")],
                None,
            ),
            arg(
                "since",
                Annotated[
                    Optional[StrictInt],
                    Field(ge=0, description="Only the lines after this line number (the last one you saw)."),
                ],
                None,
            ),
        ),
        OutputResult,
        READ_ONLY,
        context=False,
        blocking=True,
    )
    listing = ToolSpec(
        "list_commands",
        "Stored and background commands with their status, runtime, exit code, and for "
        "interactive ones whether stdin is open.",
        (arg("status", Annotated[Optional[Status], Field(description="Only commands in this state.")], None),),
        dict,
        READ_ONLY,
        context=False,
        blocking=False,
    )
    stop = ToolSpec(
        "stop_command",
        "Stop a background command this session started: its whole process tree is killed.",
        (arg("executionId", Annotated[str, Field(description="A running background command.", max_length=64)]),),
        dict,
        {"destructiveHint": True, "openWorldHint": False},
        context=True,
        blocking=True,
    )
    return [output, listing, stop]


def _policy_tools(Shells: Any) -> list[ToolSpec]:
    """The policy, the directories it allows, and the session's current directory."""
    return [
        ToolSpec(
            "get_config",
            "The effective policy (global settings and each enabled shell's merged rules) and the "
            "file it came from. Read-only: no tool can change the policy.",
            (
                arg(
                    "shell", Annotated[Optional[Shells], Field(description="Only this shell's effective policy.")], None
                ),
            ),
            None,
            READ_ONLY,
            context=False,
            blocking=False,
        ),
        ToolSpec(
            "validate_directories",
            "Whether each directory may be a working directory, per shell, and why.",
            (
                arg(
                    "directories",
                    Annotated[list[Annotated[str, Field(max_length=4096)]], Field(min_length=1, max_length=100)],
                ),
                arg(
                    "shell",
                    Annotated[Optional[Shells], Field(description="Check for this shell (default: all enabled).")],
                    None,
                ),
            ),
            dict,
            READ_ONLY,
            context=False,
            blocking=True,
        ),
        ToolSpec(
            "get_current_directory",
            "This session's current directory (used when execute_command gets no workingDir).",
            (),
            dict,
            READ_ONLY,
            context=True,
            blocking=False,
        ),
        ToolSpec(
            "set_current_directory",
            "Change this session's current directory; it must be allowed by the policy.",
            (arg("path", Annotated[str, Field(min_length=1, max_length=4096, description="An allowed directory.")]),),
            dict,
            {"readOnlyHint": False, "openWorldHint": False},
            context=True,
            blocking=True,
        ),
    ]


def execute_description(config: "ResolvedConfig", shells: list[ShellKind]) -> str:
    """execute_command's description: each shell's path format, timeout and directories."""
    shell_lines = "\n".join(
        f"- {k.value}: paths like {SHELL_FACTS[k].path_format}; timeout {config.shells[k].command_timeout} s"
        + (
            f"; working directories in {', '.join(config.shells[k].allowed_paths)}"
            if config.shells[k].restrict_working_directory
            else ""
        )
        for k in shells
    )
    return (
        "Run a command in one of the enabled shells, after the policy checks every command it would run "
        "(blocked programs, arguments, operators, directories; anything it cannot read is refused).\n"
        f"{shell_lines}\nReturns the exit code and the last lines of output; the rest stays retrievable "
        "with get_command_output. Set background=true for long-running processes, interactive=true to "
        "send it input with send_input."
    )
