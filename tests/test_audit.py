"""The audit trail: every decision and execution, secrets masked, rotated, private."""

from __future__ import annotations

import json
from pathlib import Path

from secure_shell.audit import AuditLog, read_records
from secure_shell.redaction import Redactor
from tests.helpers.cli import run, run_config
from tests.places import audit_file


def test_records_are_whole_lines_rotated_and_private(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "logs" / "audit.jsonl", max_bytes=1 << 16, backups=2, redactor=Redactor())
    for number in range(2000):
        log.record("finished", command=f"echo {number} --password=p{number}", exitCode=0)
    assert (tmp_path / "logs" / "audit.jsonl.1").exists() and (tmp_path / "logs" / "audit.jsonl.2").exists()
    assert not (tmp_path / "logs" / "audit.jsonl.3").exists()
    assert oct((tmp_path / "logs" / "audit.jsonl").stat().st_mode & 0o777) == "0o600"
    assert oct((tmp_path / "logs").stat().st_mode & 0o777) == "0o700"
    records = list(read_records(tmp_path / "logs" / "audit.jsonl", 2))
    assert records[-1]["command"] == "echo 1999 --password=***"
    numbers = [int(r["command"].split()[1]) for r in records]
    assert numbers == sorted(numbers) and numbers[-1] == 1999


def test_run_and_denial_are_audited_and_audit_prints_them(tmp_path: Path) -> None:
    conf = str(run_config(tmp_path))
    run("--config", conf, "run", "--shell", "bash", "--", "echo --token=abc", cwd=tmp_path)
    run("--config", conf, "run", "--shell", "bash", "--", "sudo ls", cwd=tmp_path)
    log = audit_file(tmp_path)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["event"] for r in records] == ["started", "finished", "denied"]
    assert records[0]["executionId"] == records[1]["executionId"] and records[0]["allowed"] is True
    assert records[1]["command"] == "echo --token=***" and records[1]["exitCode"] == 0
    assert records[1]["outputBytes"] == len("--token=abc\n") and records[1]["session"] == "cli"
    assert records[2]["allowed"] is False and records[2]["reasons"][0]["rule"] == "blocked-command"
    denied = run("--config", conf, "audit", "--denied", cwd=tmp_path)
    assert denied.stdout.count("\n") == 1 and "sudo ls" in denied.stdout and "[blocked-command]" in denied.stdout
    last = run("--config", conf, "audit", "--tail", "1", "--json", cwd=tmp_path)
    assert json.loads(last.stdout)["event"] == "denied"
    assert run("--config", conf, "audit", "--since", "1h", cwd=tmp_path).stdout.count("\n") == 3
    assert run("--config", conf, "audit", "--since", "2999-01-01", cwd=tmp_path).stdout == ""


def test_audit_can_be_turned_off(tmp_path: Path) -> None:
    conf = run_config(tmp_path)
    conf.write_text(conf.read_text().replace("global:\n", "global:\n  audit:\n    enabled: false\n", 1))
    run("--config", str(conf), "run", "--shell", "bash", "--", "echo hi", cwd=tmp_path)
    assert not audit_file(tmp_path).exists()


def test_a_long_field_is_cut_before_it_is_masked(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl", max_bytes=1 << 20, backups=0, redactor=Redactor())
    log.record("started", command="echo --token=abc " + "x" * 200_000)
    record = next(iter(read_records(tmp_path / "audit.jsonl", 0)))
    assert record["command"].startswith("echo --token=*** x") and record["command"].endswith("...[cut]")
    assert len(record["command"]) < 9000


def test_records_say_which_policy_and_project_they_belong_to(tmp_path: Path) -> None:
    conf = str(run_config(tmp_path))
    run("--config", conf, "run", "--shell", "bash", "--", "echo one", cwd=tmp_path)
    records = [json.loads(line) for line in audit_file(tmp_path).read_text().splitlines()]
    assert records[0]["config"] == conf and str(tmp_path) in records[0]["allowedPaths"]
    # another project's record in the same trail
    other = dict(records[0], cwd="/srv/other", allowedPaths=["/srv/other"], config="/etc/other.yaml", command="x")
    with audit_file(tmp_path).open("a") as trail:
        trail.write(json.dumps(other) + "\n")
    everything = run("--config", conf, "audit", cwd=tmp_path).stdout
    mine = run("--config", conf, "audit", "--project", ".", cwd=tmp_path).stdout
    same_config = run("--config", conf, "audit", "--this-config", cwd=tmp_path).stdout
    assert "/srv/other" in everything and "/srv/other" not in mine and "/srv/other" not in same_config
    assert mine.count("\n") == 2 and same_config.count("\n") == 2
