"""Masking secrets for the audit trail: each form hides the secret and keeps the command's shape."""

from __future__ import annotations

import pytest

from secure_shell.redaction import Redactor

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
