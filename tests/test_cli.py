"""The secure-shell command line, run as a real subprocess the way a user or CI runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from tests.helpers.cli import run, run_config
from tests.places import outside, state_env
from tests.waiting import PATIENCE

REPO = Path(__file__).resolve().parents[1]
SHIPPED = sorted((REPO / "config").glob("*.yaml")) + sorted((REPO / "config").glob("*.json"))


def test_config_show_prints_the_embedded_default(tmp_path: Path) -> None:
    result = run("config", "show", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    shown = yaml.safe_load(result.stdout)
    assert shown["source"] == "embedded default"
    assert shown["shells"]["bash"]["paths"]["allowedPaths"] == [str(tmp_path)]
    assert "sudo" in shown["shells"]["bash"]["restrictions"]["blockedCommands"]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_config_passes_config_check(tmp_path: Path, path: Path) -> None:
    result = run("config", "check", str(path), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "OK" in result.stdout


def test_init_config_writes_the_embedded_default_with_the_project_as_its_allowed_path(tmp_path: Path) -> None:
    result = run("init-config", "-", cwd=tmp_path)
    shipped = (REPO / "config" / "default.yaml").read_text(encoding="utf-8")
    assert yaml.safe_load(result.stdout)["global"]["paths"]["allowedPaths"] == [str(tmp_path)]
    assert yaml.safe_load(shipped)["global"]["paths"]["allowedPaths"] == []
    written, original = result.stdout.splitlines(), shipped.splitlines()
    assert [line for line in written if line not in original][-2:] == ["    allowedPaths:", f'      - "{tmp_path}"']
    missing = run("init-config", "-", "--project", str(tmp_path / "p"), cwd=tmp_path)
    assert missing.returncode == 2 and f"--project {tmp_path / 'p'}: no such directory" in missing.stderr
    (tmp_path / "p").mkdir()
    named = run("init-config", "-", "--project", str(tmp_path / "p"), cwd=tmp_path)
    assert yaml.safe_load(named.stdout)["global"]["paths"]["allowedPaths"] == [str(tmp_path / "p")]


@pytest.mark.parametrize("where", ["/", "/etc", "~"])
def test_init_config_refuses_a_project_that_is_the_whole_machine(tmp_path: Path, where: str) -> None:
    result = run("init-config", "-", "--project", os.path.expanduser(where), cwd=tmp_path)
    assert result.returncode == 2 and "too broad to be the allowed path" in result.stderr and result.stdout == ""


def test_init_config_refuses_to_write_the_policy_inside_its_own_allowed_path(tmp_path: Path) -> None:
    result = run("init-config", str(tmp_path / "secure-shell.yaml"), cwd=tmp_path)
    assert result.returncode == 2 and "lies inside the bash shell's allowed path" in result.stderr
    assert not (tmp_path / "secure-shell.yaml").exists()


def test_config_check_names_the_typo_and_the_fix(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("global:\n  security:\n    comandTimeout: 5\n")
    result = run("config", "check", str(bad), cwd=tmp_path)
    assert result.returncode == 1
    assert f"{bad}:3: global.security.comandTimeout: unknown key (did you mean 'commandTimeout'?)" in result.stderr


def test_config_check_lists_every_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"global": {"security": {"commandTimeout": 0, "maxCommandLength": "x"}}}')
    result = run("config", "check", str(bad), cwd=tmp_path)
    assert result.returncode == 1
    assert "2 errors" in result.stderr
    assert "commandTimeout" in result.stderr and "maxCommandLength" in result.stderr


def test_config_check_of_missing_file_fails(tmp_path: Path) -> None:
    result = run("config", "check", str(tmp_path / "nope.yaml"), cwd=tmp_path)
    assert result.returncode == 1


@pytest.mark.parametrize(
    "command",
    [["config", "show"], ["config", "schema"], ["config", "check", "OTHER"], ["init-config", "-"], ["serve"], []],
    ids=lambda c: " ".join(c) or "(no command)",
)
def test_broken_config_is_fatal_for_every_subcommand(tmp_path: Path, command: list[str]) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("global:\n  security: {maxCommandLength: 10\n")
    other = tmp_path / "other.yaml"
    other.write_text("{}\n")
    args = [str(other) if a == "OTHER" else a for a in command]
    result = run("--config", str(broken), *args, cwd=tmp_path)
    assert result.returncode == 2, result.stdout
    assert f"{broken}:" in result.stderr and "YAML syntax error" in result.stderr
    assert result.stdout == ""


def test_config_option_is_accepted_after_the_subcommand(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("nope: 1\n")
    result = run("config", "show", "--config", str(broken), cwd=tmp_path)
    assert result.returncode == 2 and "nope: unknown key" in result.stderr


def test_environment_variable_config_is_used(tmp_path: Path) -> None:
    conf = tmp_path / "env.yaml"
    conf.write_text("global:\n  security: {commandTimeout: 77}\n")
    result = run(
        "config", "show", "--shell", "bash", "--format", "json", cwd=tmp_path, env={"SECURE_SHELL_CONFIG": str(conf)}
    )
    assert json.loads(result.stdout)["shells"]["bash"]["security"]["commandTimeout"] == 77


def test_wcli0_config_shows_the_merged_per_shell_list(tmp_path: Path) -> None:
    result = run(
        "--config",
        str(REPO / "config" / "wcli0-example.json"),
        "config",
        "show",
        "--shell",
        "bash",
        "--format",
        "json",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    assert shown["source"] == str(REPO / "config" / "wcli0-example.json")
    assert shown["shells"]["bash"]["restrictions"]["blockedCommands"] == [
        "format",
        "shutdown",
        "restart",
        "reg",
        "regedit",
        "net",
        "netsh",
        "takeown",
        "icacls",
        "rm",
        "mkfs",
        "dd",
    ]


def test_config_show_of_a_disabled_shell_is_an_error(tmp_path: Path) -> None:
    result = run("--config", str(REPO / "config" / "strict.yaml"), "config", "show", "--shell", "cmd", cwd=tmp_path)
    assert result.returncode == 2 and "disabled" in result.stderr


def test_init_config_writes_a_file_that_passes_check_and_refuses_to_overwrite(tmp_path: Path) -> None:
    target = outside(tmp_path) / "sub" / "mine.yaml"
    assert run("init-config", str(target), cwd=tmp_path).returncode == 0
    assert run("config", "check", str(target), cwd=tmp_path).returncode == 0
    target.write_text("# edited\n")
    again = run("init-config", str(target), cwd=tmp_path)
    assert again.returncode == 1 and "--force" in again.stderr
    assert target.read_text() == "# edited\n"
    assert run("init-config", str(target), "--force", cwd=tmp_path).returncode == 0
    assert target.read_text().startswith("# secure-shell")


def test_init_config_writes_the_projects_own_policy_which_no_other_project_uses(tmp_path: Path) -> None:
    """init-config --project A used to write the user-wide default, which then held every server to A."""
    home = tmp_path / "home"
    (home / "A" / "src").mkdir(parents=True)
    (home / "B").mkdir()
    env = {"HOME": str(home), **state_env(tmp_path)}  # one user config directory, wherever it runs
    # from a directory above the home directory, naming the project
    written = run("init-config", "--project", "home/A", cwd=tmp_path, env=env)
    assert written.returncode == 0, written.stderr
    projects = outside(tmp_path) / ".xdg" / "secure-shell" / "projects"
    [policy] = projects.iterdir()
    assert f"the policy of the project {home / 'A'}" in written.stderr and str(policy) in written.stderr
    assert not (outside(tmp_path) / ".xdg" / "secure-shell" / "config.yaml").exists()
    assert yaml.safe_load(policy.read_text())["global"]["paths"]["allowedPaths"] == [str(home / "A")]
    shown = {where: yaml.safe_load(run("config", "show", cwd=where, env=env).stdout) for where in (home / "A" / "src",)}
    assert shown[home / "A" / "src"]["source"] == str(policy)
    assert (
        shown[home / "A" / "src"]["foundBy"]
        == f"the policy of the project {home / 'A'}, written by init-config --project"
    )
    # B has no policy of its own: its server allows B, and config show says why
    in_b = run("run", "--shell", "bash", "--", "pwd", cwd=home / "B", env=env)
    assert in_b.stdout.strip() == str(home / "B"), in_b.stderr
    other = yaml.safe_load(run("config", "show", cwd=home / "B", env=env).stdout)
    assert other["source"] == "embedded default" and f"no project policy for {home / 'B'}" in other["foundBy"]
    # --project names it from anywhere: the policy of A, with A's directory
    named = run("run", "--project", str(home / "A"), "--shell", "bash", "--", "pwd", cwd=tmp_path, env=env)
    assert named.stdout.strip() == str(home / "A"), named.stderr
    assert run("init-config", "--project", "home/A", cwd=tmp_path, env=env).returncode == 1  # exists: --force


def test_init_config_user_writes_the_user_wide_default_that_follows_the_start_directory(tmp_path: Path) -> None:
    assert run("init-config", "--user", cwd=tmp_path).returncode == 0
    written = outside(tmp_path) / ".xdg" / "secure-shell" / "config.yaml"
    assert yaml.safe_load(written.read_text())["global"]["paths"]["allowedPaths"] == []
    shown = yaml.safe_load(run("config", "show", cwd=tmp_path).stdout)
    assert shown["source"] == str(written)
    assert shown["shells"]["bash"]["paths"]["allowedPaths"] == [str(tmp_path)]
    assert run("init-config", "--user", "--project", str(tmp_path), cwd=tmp_path).returncode == 2


def test_config_schema_is_the_loader_schema(tmp_path: Path) -> None:
    result = run("config", "schema", cwd=tmp_path)
    schema = json.loads(result.stdout)
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == {"$schema", "global", "shells", "profiles", "transport"}
    security = schema["$defs"]["Security"]["properties"]["commandTimeout"]
    assert (security["minimum"], security["maximum"]) == (1, 3600)


def test_serve_says_on_stderr_which_directory_it_allows(tmp_path: Path) -> None:
    base = {k: v for k, v in os.environ.items() if k != "SECURE_SHELL_CONFIG"}
    result = subprocess.run(
        [sys.executable, "-m", "secure_shell", "serve"],
        cwd=tmp_path,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        env={**base, **state_env(tmp_path)},
    )
    assert f"config embedded default (no config file found: no project policy for {tmp_path}; " in result.stderr
    notes = [line for line in result.stderr.splitlines() if "the one allowed path" in line]
    absent = [line for line in result.stderr.splitlines() if "not available on this host" in line]
    # once, for the shells this host runs; the ones it lacks named on one line
    assert notes == [
        f"  note: bash: no allowedPaths or initialDir configured; the start directory {tmp_path} "
        "is the one allowed path"
    ]
    assert len(absent) == 1 and all(name in absent[0] for name in ("wsl", "cmd", "powershell", "gitbash"))


def check_config(tmp_path: Path) -> Path:
    conf = tmp_path / "policy.yaml"
    conf.write_text(
        "global:\n  restrictions:\n    blockedCommands: [rm, del, Remove-Item, sudo]\n    blockedOperators: []\n"
        f"  paths:\n    allowedPaths: ['{tmp_path}', 'C:\\\\proj']\n"
    )
    return conf


def test_check_allows_with_exit_0_and_denies_with_exit_1(tmp_path: Path) -> None:
    conf = str(check_config(tmp_path))
    ok = run("--config", conf, "check", "--shell", "bash", "--", "ls -la | wc -l", cwd=tmp_path)
    assert ok.returncode == 0 and ok.stdout.startswith("allowed")
    bad = run("--config", conf, "check", "--shell", "bash", "--", "echo $(r''m x)", cwd=tmp_path)
    assert bad.returncode == 1
    assert "blocked-command" in bad.stdout and "runs rm: rm x (via $(...))" in bad.stdout


def test_check_applies_wcli0_default_operators_when_the_file_leaves_them_out(tmp_path: Path) -> None:
    conf = tmp_path / "wcli0.json"
    conf.write_text(json.dumps({"global": {"paths": {"allowedPaths": [str(tmp_path)]}}}))
    result = run("--config", str(conf), "check", "--shell", "bash", "--json", "--", "ls | wc -l", cwd=tmp_path)
    assert json.loads(result.stdout)["reasons"][0]["rule"] == "blocked-operator"
    quoted = run("--config", str(conf), "check", "--shell", "bash", "--", "echo 'a|b'", cwd=tmp_path)
    assert quoted.returncode == 0


def test_check_json_has_allowed_and_reasons(tmp_path: Path) -> None:
    conf = str(check_config(tmp_path))
    result = run(
        "--config", conf, "check", "--shell", "cmd", "--cwd", "C:\\proj", "--json", "--", "d^el x", cwd=tmp_path
    )
    verdict = json.loads(result.stdout)
    assert result.returncode == 1
    assert verdict["allowed"] is False and verdict["reasons"][0]["rule"] == "blocked-command"


def test_check_usage_errors_exit_2(tmp_path: Path) -> None:
    assert run("check", "--", "ls", cwd=tmp_path).returncode == 2
    assert run("check", "--shell", "bash", cwd=tmp_path).returncode == 2


def test_check_batch_answers_every_line_in_order(tmp_path: Path) -> None:
    conf = str(check_config(tmp_path))
    lines = [
        json.dumps({"shell": "bash", "command": "ls", "cwd": str(tmp_path)}),
        json.dumps({"shell": "bash", "command": "cd ~ && ls", "cwd": str(tmp_path), "env": {"HOME": "/home/x"}}),
        "not json",
        "",
        json.dumps({"shell": "zsh", "command": "ls"}),
        json.dumps({"shell": "powershell", "command": "iex $a", "cwd": "C:\\proj"}),
        json.dumps(["a list"]),
        json.dumps({"shell": "cmd", "command": "dir", "cwd": "C:\\proj"}),
    ]
    result = subprocess.run(
        [sys.executable, "-m", "secure_shell", "--config", conf, "check", "--batch"],
        input="\n".join(lines) + "\n",
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    verdicts = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(verdicts) == len(lines)
    assert [v["allowed"] for v in verdicts] == [True, False, False, False, False, False, False, True]
    assert verdicts[1]["reasons"][0]["rule"] == "path-outside-allowed"
    assert "error" in verdicts[2] and "error" in verdicts[4] and "error" in verdicts[6]
    assert verdicts[5]["reasons"][0]["rule"] == "nested-script-unreadable"
    assert result.returncode == 1


def test_validate_dirs_says_why_for_each(tmp_path: Path) -> None:
    conf = str(check_config(tmp_path))
    (tmp_path / "sub").mkdir()
    result = run("--config", conf, "validate-dirs", str(tmp_path / "sub"), "/etc", "C:\\proj\\src", cwd=tmp_path)
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"allowed  {tmp_path / 'sub'}")
    assert lines[1].startswith("denied  /etc") and "outside the allowed paths" in lines[1]
    assert lines[2].startswith("allowed  C:\\proj\\src")
    assert result.returncode == 1
    only_ok = run("--config", conf, "validate-dirs", "--shell", "bash", str(tmp_path), cwd=tmp_path)
    assert only_ok.returncode == 0


def test_validate_dirs_follows_symlinks_out_of_the_project(tmp_path: Path) -> None:
    conf = str(check_config(tmp_path))
    (tmp_path / "escape").symlink_to("/etc")
    result = run("--config", conf, "validate-dirs", "--shell", "bash", str(tmp_path / "escape"), cwd=tmp_path)
    assert result.returncode == 1 and "outside" in result.stdout


def test_run_streams_output_and_exits_with_the_command_code(tmp_path: Path) -> None:
    conf = str(run_config(tmp_path))
    result = run("--config", conf, "run", "--shell", "bash", "--", "echo out; echo err >&2; exit 5", cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (5, "out\n", "err\n")


def test_run_refuses_with_126_and_runs_nothing(tmp_path: Path) -> None:
    conf = str(run_config(tmp_path))
    (tmp_path / "victim").write_text("x")
    result = run("--config", conf, "run", "--shell", "bash", "--", "r''m victim", cwd=tmp_path)
    assert result.returncode == 126 and "blocked-command" in result.stderr
    assert (tmp_path / "victim").exists()


def test_run_times_out_with_124(tmp_path: Path) -> None:
    conf = str(run_config(tmp_path))
    # run() gives the CLI its patience (a minute); the sleep is an hour: only the 1 s timeout can end it in time.
    result = run("--config", conf, "run", "--shell", "bash", "--timeout", "1", "--", "sleep 3600", cwd=tmp_path)
    assert result.returncode == 124 and "timed out after 1 s" in result.stderr


def test_run_applies_a_profile_and_the_fixed_environment(tmp_path: Path) -> None:
    conf = str(run_config(tmp_path))
    result = run(
        "--config",
        conf,
        "run",
        "--shell",
        "bash",
        "--profile",
        "greet",
        "--",
        'echo "$GREETING $PAGER $TERM"',
        cwd=tmp_path,
        env={"USER_NAME": "ada"},
    )
    assert result.stdout == "hello ada cat dumb\n"


def test_run_reports_a_missing_shell_executable(tmp_path: Path) -> None:
    conf = run_config(tmp_path)
    conf.write_text(conf.read_text() + "shells:\n  bash:\n    executable: {command: /nonexistent/bash, args: [-c]}\n")
    result = run("--config", str(conf), "run", "--shell", "bash", "--", "ls", cwd=tmp_path)
    assert result.returncode == 2 and "/nonexistent/bash" in result.stderr


def test_commands_see_an_allowlisted_environment_not_the_servers(tmp_path: Path) -> None:
    conf = run_config(tmp_path)
    secrets_env = {"SECRET_TOKEN": "s3", "AWS_SECRET_ACCESS_KEY": "k3", "OPENED": "o", "MY_VAR_1": "m"}
    command = 'echo "[$SECRET_TOKEN][$AWS_SECRET_ACCESS_KEY][$OPENED][$MY_VAR_1][$FIXED][${HOME:+home}]"'
    closed = run("--config", str(conf), "run", "--shell", "bash", "--", command, cwd=tmp_path, env=secrets_env)
    assert closed.stdout == "[][][][][][home]\n"
    conf.write_text(
        conf.read_text().replace(
            "global:\n", "global:\n  environment:\n    passthrough: [OPENED, MY_VAR_*]\n    set: {FIXED: 'yes'}\n", 1
        )
    )
    opened = run("--config", str(conf), "run", "--shell", "bash", "--", command, cwd=tmp_path, env=secrets_env)
    assert opened.stdout == "[][][o][m][yes][home]\n"


def test_environment_entries_are_validated(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("global:\n  environment:\n    passthrough: ['NOT VALID']\n")
    result = run("config", "check", str(bad), cwd=tmp_path)
    assert result.returncode == 1 and "global.environment.passthrough[0]" in result.stderr


def test_resource_limits_apply_to_every_process(tmp_path: Path) -> None:
    conf = run_config(tmp_path)
    conf.write_text(
        conf.read_text().replace(
            "global:\n",
            "global:\n  resources:\n    cpuSeconds: 100\n    fileSizeBytes: 1048576\n    openFiles: 256\n",
            1,
        )
    )
    result = run("--config", str(conf), "run", "--shell", "bash", "--", "ulimit -t; ulimit -f; ulimit -n", cwd=tmp_path)
    assert result.stdout.split() == ["100", "1024", "256"]  # bash counts -f in KiB
    too_big = run(
        "--config", str(conf), "run", "--shell", "bash", "--", "head -c 2000000 /dev/zero > big.bin", cwd=tmp_path
    )
    assert too_big.returncode != 0 and (tmp_path / "big.bin").stat().st_size <= 1048576


def test_validate_dirs_reads_relative_directories_from_where_it_runs(tmp_path: Path) -> None:
    conf = str(check_config(tmp_path))
    (tmp_path / "sub").mkdir()
    result = run("--config", conf, "validate-dirs", "--shell", "bash", ".", "sub", "..", cwd=tmp_path)
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"allowed  {tmp_path}") and lines[1].startswith(f"allowed  {tmp_path / 'sub'}")
    assert lines[2].startswith(f"denied  {tmp_path.parent}")


def test_a_reader_that_goes_away_ends_the_output_quietly(tmp_path: Path) -> None:
    conf = str(check_config(tmp_path))
    base = {k: v for k, v in os.environ.items() if k != "SECURE_SHELL_CONFIG"}
    base.update(state_env(tmp_path))
    lines = json.dumps({"shell": "bash", "command": "ls"}) + "\n"
    writer = subprocess.Popen(
        [sys.executable, "-m", "secure_shell", "--config", conf, "check", "--batch"],
        cwd=tmp_path,
        env=base,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert writer.stdin is not None and writer.stdout is not None and writer.stderr is not None

    def feed() -> None:
        try:
            for _ in range(5000):
                writer.stdin.write(lines)  # type: ignore[union-attr]
            writer.stdin.close()  # type: ignore[union-attr]
        except (BrokenPipeError, ValueError):
            pass

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    writer.stdout.readline()
    writer.stdout.close()  # like `| head -1`
    assert writer.wait(timeout=120) in (0, 1)
    err = writer.stderr.read()
    assert "BrokenPipeError" not in err and "Traceback" not in err


def test_a_shell_this_host_cannot_run_is_named_as_such(tmp_path: Path) -> None:
    conf = str(REPO / "config" / "wcli0-example.json")
    ran = run("--config", conf, "run", "--shell", "cmd", "--", "dir", cwd=tmp_path)
    assert ran.returncode != 0 and "shell 'cmd' is not available on this host: cmd.exe not found" in ran.stderr
    checked = run("config", "check", conf, cwd=tmp_path)
    assert "shells enabled and available here: bash; not available on this host: " in checked.stdout
    assert "cmd (cmd.exe not found)" in checked.stdout


def test_start_up_names_the_shells_this_host_lacks_in_one_line(tmp_path: Path) -> None:
    conf = str(REPO / "config" / "wcli0-example.json")
    base = {k: v for k, v in os.environ.items() if k != "SECURE_SHELL_CONFIG"}
    base.update(state_env(tmp_path))
    served = subprocess.run(
        [sys.executable, "-m", "secure_shell", "--config", conf, "serve"],
        cwd=tmp_path,
        env=base,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = [line for line in served.stderr.splitlines() if "not available" in line]
    assert len(lines) == 1 and "cmd (cmd.exe not found)" in lines[0] and "gitbash (" in lines[0]


def test_a_terminal_on_stdin_is_told_the_server_waits_for_an_mcp_client(tmp_path: Path) -> None:
    conf = str(REPO / "config" / "wcli0-example.json")
    base = {k: v for k, v in os.environ.items() if k != "SECURE_SHELL_CONFIG"}
    base.update(state_env(tmp_path))
    primary, secondary = os.openpty()
    served = subprocess.Popen(
        [sys.executable, "-m", "secure_shell", "--config", conf, "serve"],
        cwd=tmp_path,
        env=base,
        stdin=secondary,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    os.close(secondary)
    try:
        assert served.stderr is not None
        seen = ""
        deadline = time.monotonic() + PATIENCE
        while "not an MCP client" not in seen and time.monotonic() < deadline:
            line = served.stderr.readline()
            if not line:
                break
            seen += line
        assert "serving MCP on stdin and stdout; this terminal is not an MCP client" in seen
    finally:
        served.terminate()
        served.wait(PATIENCE)
        os.close(primary)


def test_run_says_what_a_foreground_command_left_running_was_ended(tmp_path: Path) -> None:
    conf = outside(tmp_path) / "ops.yaml"
    conf.write_text("global:\n  restrictions:\n    blockedOperators: []\n")
    ran = run("--config", str(conf), "run", "--shell", "bash", "--", "sleep 298.5 & echo hi", cwd=tmp_path)
    assert ran.returncode == 0 and ran.stdout == "hi\n", ran.stderr
    assert "1 process(es) it left running (a job started with `&`, or one that detached) ended" in ran.stderr


def test_check_contained_leaves_run_time_paths_to_the_kernel_and_not_contained_refuses_them(tmp_path: Path) -> None:
    """The same command, decided for a host whose kernel holds bash and for one where nothing does."""
    conf = str(check_config(tmp_path))
    command = 'f=$(mktemp); echo x > "$f"'
    held = run("--config", conf, "check", "--contained", "--json", "--shell", "bash", "--", command, cwd=tmp_path)
    verdict = json.loads(held.stdout)
    assert held.returncode == 0 and verdict["allowed"] is True
    assert [r["rule"] for r in verdict["reasons"]] == ["allowed", "kernel-checks-path"]
    assert verdict["reasons"][1]["text"] == '"$f"' and "Landlock" in verdict["reasons"][1]["message"]
    loose = run("--config", conf, "check", "--not-contained", "--json", "--shell", "bash", "--", command, cwd=tmp_path)
    assert loose.returncode == 1 and json.loads(loose.stdout)["reasons"][0]["rule"] == "path-unresolvable"
    # system directories the kernel lets a command read: allowed only where the kernel holds the shell
    readable = ["--shell", "bash", "--", "cat /usr/share/doc /etc/hostname"]
    assert run("--config", conf, "check", "--contained", *readable, cwd=tmp_path).returncode == 0
    assert run("--config", conf, "check", "--not-contained", *readable, cwd=tmp_path).returncode == 1
    # a Windows shell is never contained, whatever the flag says
    windows = ["check", "--contained", "--json", "--shell", "cmd", "--cwd", "C:\\proj", "--", "type %X%"]
    assert run("--config", conf, *windows, cwd=tmp_path).returncode == 1
    assert run("--config", conf, "check", "--contained", "--not-contained", cwd=tmp_path).returncode == 2
