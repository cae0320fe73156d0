"""The config file's one definition: pydantic models that validate files and emit the JSON Schema.

Keys are wcli0's camelCase vocabulary. Every model forbids unknown keys and validates strictly
(`"30"` is not a number), so a typo or a wrong type is an error, never a silently ignored line.
Per-shell `overrides` sections are derived from the global ones (`partial_of`), so a constraint
is written once. Defaults for keys a file leaves out are wcli0's defaults or stricter, so a
wcli0 config.json gives the same policy or a stricter one.
"""

from __future__ import annotations

import os
import re
from typing import Annotated, Any, Literal, Optional, Union, cast, get_args

import regex
from pydantic import AfterValidator, BaseModel, ConfigDict, Discriminator, Field, Tag, create_model, model_validator
from pydantic.alias_generators import to_camel

from secure_shell.policy.arguments import argument_pattern
from secure_shell.policy.operators import KNOWN_OPERATORS
from secure_shell.policy.paths import PathSyntaxError, check_absolute_entry
from secure_shell.sandbox.memory import default_memory_bytes
from secure_shell.sandbox.net_hosts import parse_entry
from secure_shell.sandbox.reach import CREDENTIAL_PATHS
from secure_shell.shells import ShellKind

# The shell kinds' names, as the file writes them: the Literal is for the type checker and the
# schema; the import-time check keeps it equal to ShellKind, the one list of kinds.
ShellName = Literal["bash", "wsl", "cmd", "powershell", "gitbash"]
SHELL_NAMES: tuple[str, ...] = tuple(kind.value for kind in ShellKind)
if set(get_args(ShellName)) != set(SHELL_NAMES):
    raise ImportError(f"config/schema: ShellName {get_args(ShellName)} does not name every ShellKind {SHELL_NAMES}")

_MODEL_CONFIG = ConfigDict(
    extra="forbid",
    strict=True,
    frozen=True,
    alias_generator=to_camel,
    validate_by_alias=True,
    validate_by_name=False,
    serialize_by_alias=True,
)


MAX_COMMAND_ENTRY_WORDS = 16


def _command_name(value: str) -> str:
    """A program name, or a program and the words that lead its arguments (`git status`), one
    space apart."""
    words = value.split(" ")
    if not value or any(not word or any(ch.isspace() for ch in word) for word in words):
        raise ValueError(
            f"{value!r} is not a command entry: a program name, or a program and its leading words "
            "one space apart (`git status`); put arguments to refuse anywhere in blockedArguments"
        )
    if len(words) > MAX_COMMAND_ENTRY_WORDS:
        raise ValueError(f"{value!r} has more than {MAX_COMMAND_ENTRY_WORDS} words")
    return value


def _argument_entry(value: str) -> str:
    if not value:
        raise ValueError("empty argument entry")
    pattern = argument_pattern(value)
    if pattern is not None:
        try:
            regex.compile(pattern, regex.IGNORECASE)
        except regex.error as exc:
            raise ValueError(f"{value!r} is not a valid regular expression: {exc}") from None
    return value


def _operator(value: str) -> str:
    if value not in KNOWN_OPERATORS:
        known = " ".join(repr(op) for op in KNOWN_OPERATORS)
        raise ValueError(f"unknown operator {value!r}; known operators: {known}")
    return value


def _absolute_path(value: str) -> str:
    try:
        check_absolute_entry(value)
    except PathSyntaxError as exc:
        raise ValueError(str(exc)) from None
    return value


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _env_names(value: dict[str, str]) -> dict[str, str]:
    for name in value:
        if not _ENV_NAME.match(name):
            raise ValueError(f"{name!r} is not an environment variable name")
    return value


CommandName = Annotated[str, AfterValidator(_command_name)]
ArgumentEntry = Annotated[str, AfterValidator(_argument_entry)]
OperatorEntry = Annotated[str, AfterValidator(_operator)]
AbsolutePath = Annotated[str, AfterValidator(_absolute_path)]


WORD_TAG = "<word>"  # sandbox.network: deny or allow
HOSTS_TAG = "<hosts>"  # sandbox.network: a host list


def _network_entry(value: str) -> str:
    """One host of sandbox.network, checked (net_hosts.parse_entry names what is wrong)."""
    parse_entry(value)
    return value.strip()


def _word_or_hosts(value: Any) -> str:
    return HOSTS_TAG if isinstance(value, list) else WORD_TAG


def _credential_path(value: str) -> str:
    """`~/...` or an absolute POSIX path; a glob only in its last part (the rest must name a place)."""
    if not (value.startswith("~/") or value.startswith("/")) or value.rstrip("/") in ("", "~"):
        raise ValueError(f"{value!r}: a credential path is absolute or starts with ~/, and names more than a root")
    if any(c in os.path.dirname(value.rstrip("/")) for c in "*?["):
        raise ValueError(f"{value!r}: only the last part of a credential path may be a pattern")
    return value


class Section(BaseModel):
    model_config = _MODEL_CONFIG


class Security(Section):
    max_command_length: Annotated[int, Field(ge=1, le=65536)] = Field(
        2000, description="Longest command accepted, in characters."
    )
    command_timeout: Annotated[int, Field(ge=1, le=3600)] = Field(
        30, description="Default timeout of a command in seconds (1..3600)."
    )
    enable_injection_protection: bool = Field(
        True, description="Check blockedOperators. Commands are always parsed and enumerated."
    )
    restrict_working_directory: bool = Field(
        True, description="Working directory, cd targets, path arguments and redirections must lie in allowedPaths."
    )
    ask_timeout: Annotated[int, Field(ge=1, le=3600)] = Field(
        120, description="Seconds to wait for the user to confirm an askCommands command; then it is denied."
    )


WCLI0_BLOCKED_COMMANDS = ("format", "shutdown", "restart", "reg", "regedit", "net", "netsh", "takeown", "icacls")
WCLI0_BLOCKED_ARGUMENTS = (
    "--exec",
    "-e",
    "/c",
    "-enc",
    "-encodedcommand",
    "-command",
    "--interactive",
    "-i",
    "--login",
    "--system",
)
WCLI0_BLOCKED_OPERATORS = ("&", "|", ";", "`")


class Restrictions(Section):
    blocked_commands: list[CommandName] = Field(
        default_factory=lambda: list(WCLI0_BLOCKED_COMMANDS),
        description="Commands that never run: a name (basename; case-insensitive and extension-free on Windows "
        "shells; * ? [ ] wildcards), or a name and its leading words after the program's global options "
        "(`git push --force`: the words before the first option lead, the rest appear anywhere after them).",
    )
    blocked_arguments: list[ArgumentEntry] = Field(
        default_factory=lambda: list(WCLI0_BLOCKED_ARGUMENTS),
        description="Arguments that are refused. An entry with regex characters is also an anchored, "
        "case-insensitive pattern; prefix an entry with 're:' to make it a pattern only.",
    )
    blocked_operators: list[OperatorEntry] = Field(
        default_factory=lambda: list(WCLI0_BLOCKED_OPERATORS),
        description="Shell operators that are refused where the grammar says they are operators.",
    )
    allowed_commands: Optional[list[CommandName]] = Field(
        None,
        description="When present, default-deny: only these commands may run. An entry of several words "
        "allows only that form (`git status`: git whose arguments begin with status, after git's global options).",
    )
    ask_commands: list[CommandName] = Field(
        default_factory=list,
        description="Commands that run only after the user confirms through MCP elicitation (names or forms, "
        "matched as blockedCommands matches).",
    )


class Paths(Section):
    allowed_paths: list[AbsolutePath] = Field(
        default_factory=list,
        description="Absolute directories commands may work in; POSIX and Windows entries may be mixed.",
    )
    initial_dir: Optional[AbsolutePath] = Field(None, description="The session's starting directory.")


class Logging(Section):
    max_output_lines: Annotated[int, Field(ge=1, le=10000)] = 20
    enable_truncation: bool = True
    truncation_message: str = "[Output truncated: Showing last {returnedLines} of {totalLines} lines]"
    max_stored_logs: Annotated[int, Field(ge=1, le=1000)] = 50
    max_log_size: Annotated[int, Field(ge=1024, le=1 << 30)] = Field(
        32 << 20,
        description="Bytes of each execution's output kept in full (on disk); past it the head and a tail are kept.",
    )
    max_total_storage_size: Annotated[int, Field(ge=10240, le=1 << 34)] = Field(
        1 << 30, description="Bytes of output kept for all executions together; the oldest finished go first."
    )
    enable_log_resources: bool = True
    log_retention_minutes: Annotated[int, Field(ge=1, le=10080)] = 1440
    cleanup_interval_minutes: Annotated[int, Field(ge=1, le=1440)] = 5
    log_directory: Optional[AbsolutePath] = None
    log_retention_days: Optional[Annotated[int, Field(ge=1, le=365)]] = None
    max_total_log_size: Annotated[int, Field(ge=1 << 20, le=1 << 30)] = 100 << 20
    max_return_lines: Annotated[int, Field(ge=1, le=10000)] = 500
    max_return_bytes: Annotated[int, Field(ge=1024, le=10 << 20)] = 1 << 20
    expose_full_path: bool = False


def _environment_name(value: str) -> str:
    if not re.match(r"^[A-Za-z_][A-Za-z0-9_()]*\*?$", value):
        raise ValueError(f"{value!r} is not an environment variable name (a trailing * matches a prefix)")
    return value


class Environment(Section):
    """What commands see of the server's environment: a documented allowlist, not everything."""

    passthrough: list[Annotated[str, AfterValidator(_environment_name)]] = Field(
        default_factory=list,
        description="Variables passed from the server's environment on top of the default list (NAME or PREFIX*).",
    )
    set: Annotated[dict[str, str], AfterValidator(_env_names)] = Field(
        default_factory=dict, description="Variables set for every command."
    )


class Resources(Section):
    """How much one command, and all commands together, may take. POSIX limits apply per process."""

    max_concurrent_commands: Annotated[int, Field(ge=1, le=1000)] = Field(
        32, description="Commands running at once in this server; past it a clear error, never a queue."
    )
    max_background_commands: Annotated[int, Field(ge=1, le=1000)] = Field(
        8, description="Background commands running at once per session."
    )
    max_interactive_commands: Annotated[int, Field(ge=0, le=100)] = Field(
        4, description="Interactive commands (stdin open for send_input) running at once; 0 turns the feature off."
    )
    max_input_bytes: Annotated[int, Field(ge=1, le=1 << 20)] = Field(
        65536, description="Bytes of one send_input (UTF-8, with its newline)."
    )
    max_inputs_per_minute: Annotated[int, Field(ge=1, le=6000)] = Field(
        120, description="send_input calls per interactive command in any 60 seconds."
    )
    interactive_idle_seconds: Annotated[int, Field(ge=5, le=86400)] = Field(
        600, description="An interactive command that gets no input for this long is stopped."
    )
    cpu_seconds: Optional[Annotated[int, Field(ge=1, le=1 << 31)]] = Field(
        14400, description="RLIMIT_CPU per process (4 CPU-hours: a build's longest process stays under it)."
    )
    file_size_bytes: Optional[Annotated[int, Field(ge=1 << 20, le=1 << 50)]] = Field(
        16 << 30, description="RLIMIT_FSIZE: the largest file a command may write (16 GiB)."
    )
    open_files: Optional[Annotated[int, Field(ge=64, le=1 << 20)]] = Field(
        8192, description="RLIMIT_NOFILE (never above the server's own hard limit)."
    )
    memory_bytes: Optional[Annotated[int, Field(ge=64 << 20, le=1 << 50)]] = Field(
        default_factory=default_memory_bytes,
        description="RLIMIT_DATA for every process of a command (private writable memory). Default: half of "
        "physical memory or of the server's cgroup memory limit, whichever is lower, at most 8 GiB; null: no "
        "limit (sanitizer builds need null: their shadow memory counts).",
    )
    address_space_bytes: Optional[Annotated[int, Field(ge=64 << 20, le=1 << 50)]] = Field(
        None, description="RLIMIT_AS; unset by default: V8, the JVM and Go reserve far more than they use."
    )
    processes: Optional[Annotated[int, Field(ge=16, le=1 << 22)]] = Field(
        None, description="RLIMIT_NPROC; unset by default: the count is per user, not per command."
    )


def _redaction_pattern(value: str) -> str:
    try:
        regex.compile(value)
    except regex.error as exc:
        raise ValueError(f"{value!r} is not a valid regular expression: {exc}") from None
    return value


class Audit(Section):
    """One JSON line per decision and execution, with secrets masked."""

    enabled: bool = True
    path: Optional[AbsolutePath] = Field(None, description="Default: the user log directory's audit.jsonl.")
    max_bytes: Annotated[int, Field(ge=1 << 16, le=1 << 30)] = Field(10 << 20, description="Rotate past this size.")
    backups: Annotated[int, Field(ge=0, le=100)] = Field(5, description="Rotated files kept.")
    redact_patterns: list[Annotated[str, AfterValidator(_redaction_pattern)]] = Field(
        default_factory=list,
        description="Extra regexes to mask (a named group `secret` masks only that part), on top of the built-in ones.",
    )


class Sandbox(Section):
    """Kernel containment of every command on Linux (Landlock, seccomp, a pids limit)."""

    mode: Literal["auto", "require", "off"] = Field(
        "auto",
        description="auto: enforce what the kernel supports and say what is not; require: refuse to run "
        "commands unless all of it is enforced; off: no containment.",
    )
    network: Annotated[
        Union[
            Annotated[Literal["deny", "allow"], Tag(WORD_TAG)],
            Annotated[list[Annotated[str, AfterValidator(_network_entry)]], Field(max_length=1000), Tag(HOSTS_TAG)],
        ],
        Discriminator(_word_or_hosts),
    ] = Field(
        "deny",
        description="deny: no TCP connect or bind, no UDP or other sockets (unix sockets stay); allow: as the host; "
        "a list of hosts (names, `*.` patterns, IP literals with IPv6 in brackets, each optionally `:port`; "
        "without a port 80 and 443): only those, through the server's HTTP/HTTPS proxy, which resolves the "
        "names itself and refuses loopback, private and link-local addresses no entry names.",
    )
    ports: list[Annotated[int, Field(ge=1, le=65535)]] = Field(
        default_factory=list,
        description="In a session pod with the network denied or listed: these ports of the host's 127.0.0.1 "
        "forward to the pod's own 127.0.0.1 (the pod of the session that ran a command last), so a person "
        "can open a dev server a command started.",
    )
    ask_network: bool = Field(
        False,
        description="With a host list: ask the person (MCP elicitation) once per host per session before "
        "refusing an unlisted host; a client that cannot ask gets the refusal.",
    )
    readable_paths: list[AbsolutePath] = Field(
        default_factory=list,
        description="Read and execute also beneath these (besides the system directories, PATH and the allowed paths).",
    )
    writable_paths: list[AbsolutePath] = Field(
        default_factory=list, description="Write also beneath these (besides the allowed paths and a private TMPDIR)."
    )
    max_processes: Optional[Annotated[int, Field(ge=8, le=1 << 20)]] = Field(
        512,
        description="Processes one command may have at once (a cgroup pids limit where the server can make "
        "one); null: no limit.",
    )
    session_pod: bool = Field(
        True,
        description="Run each session's commands in its own namespaces (a private /tmp, its own loopback, "
        "PID and mount namespaces) where the host allows unprivileged user namespaces; false: the "
        "Landlock-only layer for every command.",
    )
    credential_paths: list[Annotated[str, AfterValidator(_credential_path)]] = Field(
        default_factory=lambda: list(CREDENTIAL_PATHS),
        description="Files and directories no command may read or write, even inside a readable or writable "
        "directory (`~/` is the home directory; the last part may be a glob). Replaces the default list.",
    )


class Global(Section):
    audit: Audit = Field(default_factory=Audit)
    sandbox: Sandbox = Field(default_factory=Sandbox)
    environment: Environment = Field(default_factory=Environment)
    resources: Resources = Field(default_factory=Resources)
    security: Security = Field(default_factory=Security)
    restrictions: Restrictions = Field(default_factory=Restrictions)
    paths: Paths = Field(default_factory=Paths)
    logging: Logging = Field(default_factory=Logging)


# Tags of the list-or-{replace} union; the loader drops them from error locations.
LIST_TAG = "<list>"
REPLACE_TAG = "<replace>"
UNION_TAGS = frozenset({LIST_TAG, REPLACE_TAG, WORD_TAG, HOSTS_TAG})


def _list_or_replace(value: Any) -> str:
    return REPLACE_TAG if isinstance(value, dict) else LIST_TAG


def partial_of(model: type[Section], name: str, replaceable: tuple[str, ...] = ()) -> type[Section]:
    """The same section with every key optional (absent = inherit), constraints kept.

    Keys named in `replaceable` also accept `{replace: [...]}`: the list then replaces the
    global one instead of extending it.
    """
    fields: dict[str, Any] = {}
    for field_name, info in model.model_fields.items():
        annotation: Any = Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
        if field_name in replaceable:
            replace_list = create_model(
                f"Replace{to_camel(field_name)[0].upper()}{to_camel(field_name)[1:]}",
                __base__=Section,
                __doc__="`{replace: [...]}`: this list replaces the global one instead of extending it.",
                replace=(cast(Any, info.annotation), ...),
            )
            annotation = Annotated[
                Union[Annotated[annotation, Tag(LIST_TAG)], Annotated[replace_list, Tag(REPLACE_TAG)]],
                Discriminator(_list_or_replace),
            ]
        fields[field_name] = (Optional[annotation], Field(None, description=info.description))
    return create_model(name, __base__=Section, __doc__=f"Per-shell override of {model.__name__}.", **fields)


SecurityOverride = partial_of(Security, "SecurityOverride")
RestrictionsOverride = partial_of(
    Restrictions, "RestrictionsOverride", replaceable=("blocked_commands", "blocked_arguments", "ask_commands")
)
PathsOverride = partial_of(Paths, "PathsOverride")
SandboxOverride = partial_of(Sandbox, "SandboxOverride")


class Overrides(Section):
    security: Optional[SecurityOverride] = None  # type: ignore[valid-type]
    restrictions: Optional[RestrictionsOverride] = None  # type: ignore[valid-type]
    paths: Optional[PathsOverride] = None  # type: ignore[valid-type]
    sandbox: Optional[SandboxOverride] = None  # type: ignore[valid-type]


class Executable(Section):
    command: Annotated[str, Field(min_length=1)]
    args: list[str] = Field(default_factory=list)


def _mount_point(value: str) -> str:
    if not value.startswith("/"):
        raise ValueError(f"mountPoint must be an absolute POSIX path, got {value!r}")
    return value if value.endswith("/") else value + "/"


class WslConfig(Section):
    mount_point: Annotated[str, AfterValidator(_mount_point)] = "/mnt/"
    inherit_global_paths: bool = True


class Shell(Section):
    type: Optional[ShellName] = Field(None, description="wcli0 compatibility; must match the shell's key.")
    enabled: bool = True
    executable: Optional[Executable] = None
    overrides: Optional[Overrides] = None
    wsl_config: Optional[WslConfig] = None


class Shells(Section):
    bash: Optional[Shell] = None
    wsl: Optional[Shell] = None
    cmd: Optional[Shell] = None
    powershell: Optional[Shell] = None
    gitbash: Optional[Shell] = None

    @model_validator(mode="after")
    def _type_matches_key(self) -> Shells:
        for name in SHELL_NAMES:
            shell = getattr(self, name)
            if shell is not None and shell.type is not None and shell.type != name:
                raise ValueError(f"shells.{name}.type is {shell.type!r}; it must be {name!r} or left out")
        return self


if tuple(Shells.model_fields) != SHELL_NAMES:  # a kind without its section could not be configured
    raise ImportError(f"config/schema: Shells has sections {tuple(Shells.model_fields)}, not {SHELL_NAMES}")


# wcli0's per-shell defaults, kept so that a wcli0 file without a shells section is not weaker
# here than there; a file that sets the shell's blockedCommands decides for itself.
WCLI0_SHELL_BLOCKED_COMMANDS: dict[str, tuple[str, ...]] = {
    "cmd": ("del", "rd", "rmdir"),
    "gitbash": ("rm",),
}


class Profile(Section):
    description: Optional[str] = None
    allowed_shells: Optional[list[ShellName]] = None
    env: Annotated[dict[str, str], Field(min_length=1), AfterValidator(_env_names)]


class Transport(Section):
    mode: Literal["stdio", "http", "sse"] = "stdio"
    http_host: str = "127.0.0.1"
    http_port: Annotated[int, Field(ge=1, le=65535)] = 9444
    http_allowed_origins: list[str] = Field(default_factory=list)
    sse_host: str = "127.0.0.1"
    sse_port: Annotated[int, Field(ge=1, le=65535)] = 9444
    sse_allowed_origins: list[str] = Field(default_factory=list)


class ConfigFile(Section):
    """A secure-shell (or wcli0) configuration file."""

    schema_ref: Optional[str] = Field(None, alias="$schema", description="Editor hint; ignored.")
    global_: Global = Field(default_factory=Global, alias="global")
    shells: Shells = Field(default_factory=Shells)
    profiles: dict[str, Profile] = Field(default_factory=dict)
    transport: Transport = Field(default_factory=Transport)


def json_schema() -> dict[str, Any]:
    """The JSON Schema of the config file, for editors and YAML language servers."""
    schema = ConfigFile.model_json_schema(by_alias=True, mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "secure-shell configuration"
    return schema
