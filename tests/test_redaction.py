"""Masking secrets: each form hides the secret and keeps the command's shape in the audit trail, and
the stored output of a command is masked for the values its command and the server's environment hold."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client

from secure_shell.redaction import MASK, Redactor, StreamMasker, environment_secrets, output_masking
from tests.helpers.server import config_for, server
from tests.places import audit_file, outside
from tests.secret_cases import AWS_SECRET
from tests.secret_cases import SECRET_FORMS as SECRETS_IN_FORMS

# (text, masked): every separator, quote and operator of the text survives the masking.
SECRET_FORMS = [
    # shell assignments, exported or inline, quoted or not
    ("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI", "export AWS_SECRET_ACCESS_KEY=***"),
    ('export AWS_SECRET_ACCESS_KEY="wJalr XUtn"', 'export AWS_SECRET_ACCESS_KEY="***"'),
    ("export API_TOKEN='abc def'", "export API_TOKEN='***'"),
    ("DB_PASS=hunter2 ./migrate", "DB_PASS=*** ./migrate"),
    ("PGPASSWORD=hunter2 psql -h db", "PGPASSWORD=*** psql -h db"),
    ("DB_PASS=hunter2; ls", "DB_PASS=***; ls"),
    ("TOKEN=abc&&make", "TOKEN=***&&make"),
    ("SECRET=abc|cat", "SECRET=***|cat"),
    ("GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123 gh pr list", "GITHUB_TOKEN=*** gh pr list"),
    ('set "API_KEY=abc123" & run', 'set "API_KEY=***" & run'),
    ('$env:OPENAI_API_KEY = "abc123"; python x.py', '$env:OPENAI_API_KEY = "***"; python x.py'),
    ("docker run -e DB_PASSWORD=pw1 img", "docker run -e DB_PASSWORD=*** img"),
    (
        "kubectl create secret generic s --from-literal=password=pw1",
        "kubectl create secret generic s --from-literal=password=***",
    ),
    (
        '[Environment]::SetEnvironmentVariable("API_TOKEN", "tok1")',
        '[Environment]::SetEnvironmentVariable("API_TOKEN", "***")',
    ),
    # flags
    ("mysql --password=hunter2 db", "mysql --password=*** db"),
    ("tool -p x --token abc123", "tool -p x --token ***"),
    ("tool --token=abc123;ls", "tool --token=***;ls"),
    ("docker login -u me --password 'pw 1' reg", "docker login -u me --password '***' reg"),
    ("az login --client-secret=abc", "az login --client-secret=***"),
    ("openssl enc -pass pass:hunter2 -in f", "openssl enc -pass ***:hunter2 -in f".replace("***:hunter2", "***")),
    ("tool.exe /password:hunter2 /quiet", "tool.exe /password:*** /quiet"),
    ("mysql -u root -phunter2 db", "mysql -u root -p*** db"),
    ("mysqldump -uroot -phunter2 db > d.sql", "mysqldump -uroot -p*** db > d.sql"),
    ("sshpass -p hunter2 ssh host", "sshpass -p *** ssh host"),
    ("sshpass -phunter2 ssh host", "sshpass -p*** ssh host"),
    ("redis-cli -h r -a hunter2 ping", "redis-cli -h r -a *** ping"),
    ("curl -u user:hunter2 https://x", "curl -u user:*** https://x"),
    ("curl --user 'user:hunter2' https://x", "curl --user 'user:***' https://x"),
    ("aws configure set aws_secret_access_key wJalrXUtn", "aws configure set aws_secret_access_key ***"),
    ("aws configure set aws_session_token tok1 --profile p", "aws configure set aws_session_token *** --profile p"),
    ("npm config set //registry.npmjs.org/:_authToken npmtok1", "npm config set //registry.npmjs.org/:_authToken ***"),
    ('ConvertTo-SecureString "P@ss1" -AsPlainText -Force', 'ConvertTo-SecureString "***" -AsPlainText -Force'),
    # headers
    ("curl -H 'Authorization: Bearer eyJhbGciOi' u", "curl -H 'Authorization: Bearer ***' u"),
    ('curl -H "Authorization: Basic dXNlcjpwdw==" u', 'curl -H "Authorization: Basic ***" u'),
    ("curl -H 'X-Api-Key: k123' u", "curl -H 'X-Api-Key: ***' u"),
    ("curl -H 'PRIVATE-TOKEN: glp1' u", "curl -H 'PRIVATE-TOKEN: ***' u"),
    ("curl -H 'Cookie: session=abc; csrf=def' u", "curl -H 'Cookie: ***' u"),
    ("curl --cookie 'session=abc' u", "curl --cookie '***' u"),
    # structured data
    ('echo \'{"password": "hunter2", "user": "me"}\' > c.json', 'echo \'{"password": "***", "user": "me"}\' > c.json'),
    ("printf 'db:\\n  password: hunter2\\n'", "printf 'db:\\n  password: ***\\n'"),
    ('bash -c "echo {\\"token\\": \\"t1\\"}"', 'bash -c "echo {\\"token\\": \\"***\\"}"'),
    ("@{ ApiKey = 'k1'; Name = 'x' }", "@{ ApiKey = '***'; Name = 'x' }"),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY-----",
        "-----BEGIN RSA PRIVATE KEY-----***-----END RSA PRIVATE KEY-----",
    ),
    (
        "echo '-----BEGIN OPENSSH PRIVATE KEY-----\\nb3Blbn\\n-----END OPENSSH PRIVATE KEY-----' > k",
        "echo '-----BEGIN OPENSSH PRIVATE KEY-----***-----END OPENSSH PRIVATE KEY-----' > k",
    ),
    # URLs
    ("git clone https://user:s3cret@example.com/r.git", "git clone https://user:***@example.com/r.git"),
    ("curl 'https://api.x/v1?access_token=abc&x=1'", "curl 'https://api.x/v1?access_token=***&x=1'"),
    ("curl https://hooks.slack.com/services/T000/B000/XXXX", "curl https://hooks.slack.com/services/***"),
    # well-known token formats, bare
    ("aws s3 ls --profile AKIAIOSFODNN7EXAMPLE", "aws s3 ls --profile ***"),
    ("gh auth login --with-token ghp_abcdefghijklmnopqrstuvwxyz0123", "gh auth login --with-token ***"),
    ("echo github_pat_11ABCDEFG0123456789_abcdefghij", "echo ***"),
    ("echo glpat-abcdefghij0123456789", "echo ***"),
    ("echo xoxb-1234567890-abcdefghij", "echo ***"),
    ("echo sk-proj-abcdefghijklmnopqrstuvwx", "echo ***"),
    ("echo sk-ant-api03-abcdefghijklmnopqrstuvwx", "echo ***"),
    ("echo AIzaSyA1234567890abcdefghijklmnopqrstuv", "echo ***"),
    ("echo sk_live_abcdefghijklmnop1234", "echo ***"),
    ("echo eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijklmnop", "echo ***"),
    (f"echo {AWS_SECRET}", "echo ***"),  # a bare AWS secret access key: 40 base64 characters of high entropy
    (f"aws configure import {AWS_SECRET}:x", "aws configure import ***:x"),
    ("echo whsec_abcdefghijklmnopqrstuvwxyz12", "echo ***"),
    ("echo hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "echo ***"),
    ("echo hvs.CAESIabcdefghijklmnopqrstuvwx", "echo ***"),
    (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----***-----END PGP PRIVATE KEY BLOCK-----",
    ),
    # a login-style subcommand's -p, spaced, glued or after global options
    ("docker login -u me -p PASSWORD registry", "docker login -u me -p *** registry"),
    ("docker --config d login -pPASSWORD registry", "docker --config d login -p*** registry"),
    ("podman login -u me -p 'pw 1' quay.io && podman pull x", "podman login -u me -p '***' quay.io && podman pull x"),
    ("helm registry login r.io -u me -p pw1", "helm registry login r.io -u me -p ***"),
    ("twine upload -u __token__ -p pw1 dist/*", "twine upload -u __token__ -p *** dist/*"),
    ("oc login -u me -p pw1 https://api", "oc login -u me -p *** https://api"),
    ("ldapsearch -x -w pw1 -b dc=x", "ldapsearch -x -w *** -b dc=x"),
    ("sqlcmd -S db -U sa -P pw1", "sqlcmd -S db -U sa -P ***"),
    ("7z x -ppw1 a.7z", "7z x -p*** a.7z"),
    ("mongosh -u me -p pw1", "mongosh -u me -p ***"),
    ("wget --http-password=pw1 --db-password pw2 u", "wget --http-password=*** --db-password *** u"),
    (
        "keytool -importkeystore -srcstorepass pw1 -deststorepass pw2",
        "keytool -importkeystore -srcstorepass *** -deststorepass ***",
    ),
    ("openssl rsa -passin pass:pw1 -in k", "openssl rsa -passin pass:*** -in k"),
    (
        "skopeo copy --src-creds me:pw1 --dest-creds=me:pw2 a b",
        "skopeo copy --src-creds me:*** --dest-creds=me:*** a b",
    ),
    ("smbclient //h/s -U me%pw1", "smbclient //h/s -U me%***"),
    ("echo pw1 | docker login -u me --password-stdin r", "echo *** | docker login -u me --password-stdin r"),
    ("cargo login tok1 && cargo publish", "cargo login *** && cargo publish"),
    ("poetry config http-basic.repo me pw1", "poetry config http-basic.repo me ***"),
    ("htpasswd -bc users me pw1", "htpasswd -bc users me ***"),
    ("htpasswd -nb me pw1", "htpasswd -nb me ***"),
    ("rabbitmqctl change_password me pw1", "rabbitmqctl change_password me ***"),
]

# Text that looks close to a secret but is not one: left exactly as it is.
NOT_SECRETS = [
    "echo nothing secret here",
    "BYPASS=1 make",
    "author=me git log",
    "docker login --password-stdin < pw.txt",
    "mysql -p db",
    "git checkout -b feature",
    "curl https://example.com/path?page=2",
    "export PATH=/usr/bin:$PATH",
    "echo $PASSWORD",
    "ls -la; echo done && exit 0",
    "git show 3f786850e387550fdab836ed7e6dc881de23001b",  # a hash is 40 characters too, but hex
    "ls src/components/header/index/file1/abcde",  # 40 base64 characters, one case
    "cat /home/user/Projects/MyApp2/src/component",  # mixed case and a digit, but a path's low entropy
    "docker run -p 8080:80 img",  # -p is a port outside a login
    "psql -p 5432 -U me db",
    "mysql -P 3306 -h db",
    "tool --no-password x",
    "docker login --password-stdin < pw.txt",
]


@pytest.mark.parametrize("text, masked", SECRET_FORMS, ids=[t for t, _ in SECRET_FORMS])
def test_secret_forms_are_masked_and_the_command_keeps_its_shape(text: str, masked: str) -> None:
    assert Redactor()(text) == masked


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_look_alikes_are_left_alone(text: str) -> None:
    assert Redactor()(text) == text


def test_the_table_covers_at_least_forty_forms() -> None:
    assert len(SECRET_FORMS) >= 40


def test_configured_patterns_are_added() -> None:
    redact = Redactor([r"project-(?P<secret>\d+)"])
    assert redact("deploy project-4711 now") == "deploy project-*** now"


def test_a_pattern_that_cannot_finish_masks_everything() -> None:
    redact = Redactor([r"(a|aa)+$"])
    assert redact("a" * 30 + "!") == "***"


# --- the values found, and output --------------------------------------------------------------


def test_the_audit_masking_reports_the_values_it_hid() -> None:
    masked, found = Redactor().mask("docker login -u me -p PASSWORD r && curl -H 'X-Api-Key: k123' u")
    assert masked == "docker login -u me -p *** r && curl -H 'X-Api-Key: ***' u"
    assert found == ["k123", "PASSWORD"]  # in the rules' order


def test_output_masking_takes_the_commands_values_and_the_servers_secret_variables(tmp_path: Path) -> None:
    environ = {
        "DEPLOY_API_TOKEN": "env-token-4711",
        "DB_PASSWORD": "env-pw-4711",
        "AUTH_ENABLED": "true",  # too short to mask in output: `true` is everywhere
        "SSH_AUTH_SOCK": "/tmp/ssh-x/agent.1",  # names a place, not a secret
        "PASSWORD_STORE_DIR": "/home/me/.password-store",
        "PWD": "/home/me/project",
        "GOOGLE_APPLICATION_CREDENTIALS": str(tmp_path),  # a path that exists
        "HOME": "/home/me",
    }
    masking = output_masking('docker login -p "pw\\"4711" r; DB_PASS=short ./m', environ=environ)
    assert masking.command == 'docker login -p "***" r; DB_PASS=*** ./m'
    assert masking.secrets == ('pw\\"4711', 'pw"4711', "env-token-4711", "env-pw-4711")
    assert environment_secrets(environ) == ["env-token-4711", "env-pw-4711", "true"]


def _one_shot(text: str, secrets: list[str]) -> str:
    ordered = sorted(set(secrets), key=len, reverse=True)
    return re.sub("|".join(map(re.escape, ordered)), MASK, text)


_secret = st.text("abcxyz01", min_size=1, max_size=12)


@settings(max_examples=400, deadline=None)
@given(
    secrets=st.lists(_secret, min_size=1, max_size=4),
    parts=st.lists(st.one_of(st.text("abcxyz01 \n", max_size=10), st.integers(0, 3)), max_size=12),
    cuts=st.lists(st.integers(0, 200), max_size=8),
)
def test_a_stream_is_masked_as_if_it_came_whole(secrets: list[str], parts: list[str | int], cuts: list[int]) -> None:
    """Secrets split anywhere across chunks, overlapping, one inside another: the stream's output is
    the whole text masked at once, and no secret is left in it."""
    text = "".join(secrets[p % len(secrets)] if isinstance(p, int) else p for p in parts)
    edges = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    masker = StreamMasker(secrets)
    out = "".join(masker.feed(text[a:b]) for a, b in zip(edges, edges[1:], strict=False)) + masker.feed("", final=True)
    assert out == _one_shot(text, secrets)


def test_the_stream_holds_back_only_what_may_start_a_secret() -> None:
    masker = StreamMasker(["hunter2-secret"])
    assert masker.feed("Password: ") == "Password: "  # a prompt is shown at once
    assert masker.feed("x" * 1_000_000) == "x" * 1_000_000  # nothing kept
    assert masker.feed("say hunter2-sec") == "say "  # the possible start is held, and only it
    assert masker.feed("ret!\n") == "***!\n"
    assert masker.feed("hunt") == ""
    assert masker.feed("ing\n") == "hunting\n"
    assert masker.feed("hunter", final=True) == "hunter"


# --- through the real server ----------------------------------------------------------------------

ENV_SECRET = "env-secret-4711-abcdef"


@pytest.mark.anyio
async def test_every_secret_form_is_masked_in_the_audit_and_in_the_stored_output(tmp_path: Path) -> None:
    """Each form runs as a here-document that cat prints back: the audit record of the command and
    its stored output (the reply, get_command_output, the logDirectory files) must hold no secret."""
    logs = outside(tmp_path) / "logs"
    extra = f"    logDirectory: '{logs}'\n    maxStoredLogs: 500\n  environment:\n    passthrough: [DEPLOY_API_TOKEN]\n"
    params = server(tmp_path, "--config", str(config_for(tmp_path, extra)))
    params.env = {**(params.env or {}), "DEPLOY_API_TOKEN": ENV_SECRET}
    leaks: list[str] = []
    async with Client(params) as client:
        for form, secret in SECRETS_IN_FORMS:
            command = f"cat <<'EOF'\n{form}\nEOF"
            result = await client.call_tool("execute_command", {"shell": "bash", "command": command})
            assert not result.is_error, (form, result.content[0].text)
            run = result.structured_content["executionId"]
            stored = await client.call_tool("get_command_output", {"executionId": run})
            for where, text in (("reply", result.content[0].text), ("get_command_output", stored.content[0].text)):
                if secret.strip() in text or MASK not in text:
                    leaks.append(f"{where}: {form!r}")
        # The server's own secret-named variable, printed in two pieces a moment apart.
        split = 'printf %s "${DEPLOY_API_TOKEN:0:9}"; sleep 0.3; printf "%s\\n" "${DEPLOY_API_TOKEN:9}"'
        result = await client.call_tool("execute_command", {"shell": "bash", "command": split})
        assert not result.is_error, result.content[0].text
        assert ENV_SECRET not in result.content[0].text and MASK in result.content[0].text
    audit = audit_file(tmp_path).read_text()
    stored_files = {path.name: path.read_text() for path in logs.iterdir()}
    assert len(stored_files) == 2 * (len(SECRETS_IN_FORMS) + 1)  # a .log and a .json for each
    for form, secret in SECRETS_IN_FORMS:
        if secret.strip() in audit:
            leaks.append(f"audit: {form!r}")
        leaks += [f"{name}: {form!r}" for name, text in stored_files.items() if secret.strip() in text]
    assert ENV_SECRET not in "".join(stored_files.values())
    started = [r["command"] for r in map(json.loads, audit.splitlines()) if r["event"] == "started"]
    assert all(MASK in command for command in started[: len(SECRETS_IN_FORMS)])
    assert leaks == []
