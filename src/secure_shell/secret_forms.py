"""What a secret looks like in a command line: the rules redaction.py applies, built from tables.

Every rule is a pattern whose named group `secret` is the part to hide (a pattern without one hides
all it matches); everything around it, the quotes, the `=`, the `;` and `&&` of the command, stays.
An unquoted value ends where the shell would end the word (white space or an operator character),
a quoted one at its closing quote. Programs, flags and token shapes are rows of tables below, so a
new program or token format is one row, not a new branch.
"""

from __future__ import annotations

from dataclasses import dataclass

# A value as a shell or a config file writes it: double-quoted (where \" does not end it),
# single-quoted, or a bare word that ends at white space or at a character that would end a shell word.
VALUE = r"""(?:"(?P<secret>(?:[^"\\\n]|\\.)*)"|'(?P<secret>[^'\n]*)'|(?P<secret>[^\s'"`;&|<>()]+))"""
# The same, for a value inside structured data (JSON, YAML, URLs): a bare value also ends at , } ]
# and a value may sit between escaped quotes (JSON inside a shell string).
DATA_VALUE = (
    r"""(?:\\"(?P<secret>(?:[^"\\\n]|\\[^"\n])*)\\"|"(?P<secret>(?:[^"\\\n]|\\.)*)"|"""
    r"""'(?P<secret>[^'\n]*)'|(?P<secret>(?:[^\s'"`;&|<>(),}\]\\]|\\(?![nrt]))+))"""
)
# Names that hold a secret: anywhere in the name for the unambiguous words, as a whole segment for
# the short ones (DB_PASS, PWD, AUTH), so `BYPASS` or `author` are left alone.
SENSITIVE_NAME = (
    r"(?:[A-Za-z0-9_.-]*(?:passw(?:or)?d|passphrase|secret|token|api[-_]?key|apikey|access[-_]?key|"
    r"private[-_]?key|credentials?|session[-_]?key|signing[-_]?key|client[-_]?secret)[A-Za-z0-9_.-]*"
    r"|(?:[A-Za-z0-9.-]*_)?(?:pass|pwd|pw|auth)(?:_[A-Za-z0-9_.-]*)?)"
)
# The last word of a long flag (or Windows /flag:) that takes a secret; a flag may name what the
# secret is for first (--db-password, --registry-token, --http-password), but not `no-`.
_SECRET_FLAG_WORD = (
    r"(?:password|passwd|pass|pwd|passphrase|token|auth-token|access-token|secret|client-secret|"
    r"api[-_]?key|access[-_]?key|secret[-_]?key|private[-_]?key)"
)
_SECRET_FLAG = rf"(?:(?!no-)[a-z0-9]+-)*{_SECRET_FLAG_WORD}"
# Where a command's words end: the rest of a command may not cross an operator.
_SAME_COMMAND = r"[^;&|\n]*?"
_WORD = r"[^\s;&|<>()]+"


@dataclass(frozen=True)
class ShortFlag:
    """A short option that takes a password for these programs (after one of `subcommands`, when
    given): `docker login -p PASSWORD`, `ldapsearch -w PASSWORD`, `7z -pPASSWORD`."""

    programs: tuple[str, ...]
    flag: str
    subcommands: tuple[str, ...] = ()
    glued_only: bool = False  # `-pSECRET` only: a lone `-p` prompts or means something else

    def pattern(self) -> str:
        program = rf"(?i:\b(?:{'|'.join(self.programs)})(?:\.exe)?\b)"
        after = rf"{_SAME_COMMAND}\s(?:{'|'.join(self.subcommands)})\b" if self.subcommands else ""
        if self.glued_only:
            return rf"{program}{after}{_SAME_COMMAND}\s-{self.flag}(?P<secret>[^\s;&|<>()'\"`]+)"
        return rf"{program}{after}{_SAME_COMMAND}\s-{self.flag}(?:\s*=\s*|\s+|(?=\S)){VALUE}"


# A registry or service login whose `-p` is the password; mysql-style `-pSECRET`; tools with a
# single-letter password flag of their own.
SHORT_FLAGS = (
    ShortFlag(
        ("docker", "podman", "buildah", "skopeo", "oras", "nerdctl", "cosign", "crane", "finch", "helm", "regctl"),
        "p",
        ("login",),
    ),
    ShortFlag(("oc", "cf", "az"), "p", ("login",)),
    ShortFlag(("twine",), "p", ("upload", "register")),
    ShortFlag(("mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport", "mongostat"), "p"),
    ShortFlag(("sshpass",), "p"),
    ShortFlag(("redis-cli",), "a"),
    ShortFlag(("ldapsearch", "ldapadd", "ldapmodify", "ldapdelete", "ldapwhoami", "ldappasswd", "ldapcompare"), "w"),
    ShortFlag(("sqlcmd", "bcp", "osql", "isql"), "P"),
    ShortFlag(("zip", "unzip", "zipcloak"), "P"),
    ShortFlag(
        ("mysql", "mysqladmin", "mysqldump", "mysqlimport", "mysqlshow", "mysqlcheck", "mariadb", "mariadb-dump"),
        "p",
        glued_only=True,
    ),
    ShortFlag(("7z", "7za", "7zr", "rar", "unrar"), "p", glued_only=True),
)


@dataclass(frozen=True)
class Positional:
    """A secret given as a plain word after a subcommand: `cargo login TOKEN`, `poetry config
    http-basic.repo USER PASSWORD` (skip 1), `htpasswd -b FILE USER PASSWORD` (skip 2)."""

    program: str
    subcommand: str  # a regex for the words before the secret's position
    skip: int = 0

    def pattern(self) -> str:
        skipped = rf"(?:\s+{_WORD}){{{self.skip}}}" if self.skip else ""
        return rf"(?i)\b{self.program}\b{_SAME_COMMAND}\s{self.subcommand}(?:\s+-{_WORD})*{skipped}\s+{VALUE}"


POSITIONALS = (
    Positional("cargo", "login"),
    Positional("vault", "login"),
    Positional("poetry", r"config\s+pypi-token\.\S+"),
    Positional("poetry", r"config\s+http-basic\.\S+", skip=1),
    Positional("rabbitmqctl", "(?:add_user|change_password)", skip=1),
    Positional("htpasswd", r"-[a-zA-Z]*b[a-zA-Z]*", skip=2),  # htpasswd -b FILE USER PASSWORD
    Positional("htpasswd", r"-(?:[a-zA-Z]*n[a-zA-Z]*b|[a-zA-Z]*b[a-zA-Z]*n)[a-zA-Z]*", skip=1),  # -nb USER PASSWORD
    Positional("net", "user", skip=1),
)


@dataclass(frozen=True)
class TokenShape:
    """A credential recognisable by its shape alone, wherever it stands. A shape that ordinary
    words can take too (40 base64 characters) also needs `min_entropy` bits per character."""

    name: str
    pattern: str
    min_entropy: float | None = None


# Characters of base64 and the lookarounds that make a run of them stand alone.
_B64 = "[A-Za-z0-9/+]"
_ALONE_BEFORE, _ALONE_AFTER = r"(?<![A-Za-z0-9/+_-])", r"(?![A-Za-z0-9/+=_-])"  # `=` after: padding

TOKEN_SHAPES = (
    TokenShape("AWS access key id", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b"),
    # 40 base64 characters with upper and lower case and a digit, / or +: never a git hash (hex).
    TokenShape(
        "AWS secret access key",
        rf"{_ALONE_BEFORE}(?={_B64}{{0,39}}[A-Z])(?={_B64}{{0,39}}[a-z])(?={_B64}{{0,39}}[0-9/+]){_B64}{{40}}{_ALONE_AFTER}",
        min_entropy=4.3,  # random keys: 4.8 typical, under 4.3 about once in a thousand; paths: 3.9-4.2
    ),
    TokenShape("GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{20,}\b"),
    TokenShape("GitHub fine-grained token", r"\bgithub_pat_[A-Za-z0-9_]{20,}\b"),
    TokenShape("GitLab token", r"\bgl(?:pat|dt|ptt|rt|cbt|oas|ft|imt|soat|ffct)-[A-Za-z0-9_-]{16,}"),
    TokenShape("Slack token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}"),
    TokenShape("Slack app token", r"\bxapp-\d-[A-Za-z0-9-]{10,}"),
    TokenShape(
        "Slack webhook", r"(?i)https://hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9/]+)"
    ),
    TokenShape("OpenAI or Anthropic key", r"\bsk-(?:proj-|svcacct-|admin-|ant-)?[A-Za-z0-9_-]{20,}"),
    TokenShape("Google API key", r"\bAIza[0-9A-Za-z_-]{35}\b"),
    TokenShape("Google OAuth access token", r"\bya29\.[0-9A-Za-z_-]{20,}"),
    TokenShape("Stripe secret or restricted key", r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    TokenShape("Stripe webhook secret", r"\bwhsec_[A-Za-z0-9]{24,}"),
    TokenShape("npm token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    TokenShape("PyPI token", r"\bpypi-[A-Za-z0-9_-]{50,}"),
    TokenShape("Docker Hub token", r"\bdckr_pat_[A-Za-z0-9_-]{20,}"),
    TokenShape("Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}\b"),
    TokenShape("DigitalOcean token", r"\bdo[por]_v1_[a-f0-9]{64}\b"),
    TokenShape("Shopify token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
    TokenShape("HashiCorp Vault token", r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}"),
    TokenShape("Terraform Cloud token", r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_-]{60,}"),
    TokenShape("SendGrid key", r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b"),
    TokenShape("Twilio key", r"\bSK[0-9a-f]{32}\b"),
    TokenShape("Databricks token", r"\bdapi[0-9a-f]{32}(?:-\d)?\b"),
    TokenShape("Grafana token", r"\bgl(?:sa|c)_[A-Za-z0-9_+/=-]{32,}"),
    TokenShape("age secret key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b"),
    TokenShape("JSON Web Token", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
)
# A private key block, including one cut off by the field cap. Applied before every other rule: the
# lines of a key must not feed them.
PRIVATE_KEY_BLOCK = TokenShape(
    "private key block",
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?P<secret>(?s:.*?))"
    r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
)

# Rules for where a secret stands in a command: assignments, keys, flags, headers, URLs.
CONTEXT_RULES: tuple[str, ...] = (
    # Assignments: export X=…, inline X=… cmd, set "X=…", $env:X = "…", --from-literal=password=….
    rf"(?i)(?<![A-Za-z0-9_.-]){SENSITIVE_NAME}\s*=\s*{VALUE}",
    # Keys in JSON, YAML, TOML, PowerShell hashtables: "password": "…", token: …, 'api_key' => '…'.
    rf"(?i)(?P<q>\\?[\"'])?(?<![A-Za-z0-9_.-]){SENSITIVE_NAME}(?P=q)?\s*(?::(?!//)|=>)\s*{DATA_VALUE}",
    # A secret key and its value given as two arguments: SetEnvironmentVariable("API_TOKEN", "…").
    rf"(?i)(?P<q>[\"']){SENSITIVE_NAME}(?P=q)\s*,\s*{VALUE}",
    # Config tools that take KEY VALUE: aws configure set aws_secret_access_key …, npm config set _authToken ….
    rf"(?i)\bconfig(?:ure)?\s+(?:set\s+)?(?:--?[\w-]+(?:=\S+)?\s+)*(?:[^\s=]*[:/])?{SENSITIVE_NAME}\s+{VALUE}",
    # Long flags: --password X, --token=X, -token X, --db-password X, /password:X.
    rf"(?i)(?<![\w-])(?:--?|/){_SECRET_FLAG}(?:\s*[=:]\s*|\s+){VALUE}",
    # Java keystores: -storepass X, -keypass X, -srcstorepass X.
    rf"(?i)(?<![\w-])-(?:src|dest|new)?(?:store|key)pass(?:\s+|=){VALUE}",
    # openssl's pass:SECRET argument (-passin, -passout, -pass).
    r"(?<![\w-])pass:(?P<secret>[^\s'\"`;&|<>()]+)",
    # user:password after -u / --user / --proxy-user (curl, wget), and registry credentials (--creds).
    r"""(?i)(?:(?<![\w-])-[uU]\s*|--(?:proxy-)?user(?:\s*=\s*|\s+))["']?[^\s:'"]*:(?P<secret>[^\s'"`;&|<>()]+)""",
    r"""(?i)(?<![\w-])--(?:src-|dest-|registry-)?creds(?:\s*=\s*|\s+)["']?[^\s:'"]*:(?P<secret>[^\s'"`;&|<>()]+)""",
    # Samba's user%password (smbclient, rpcclient, net -U).
    r"""(?<![\w-])-U\s*["']?[^\s%'"]+%(?P<secret>[^\s'"`;&|<>()]+)""",
    # A literal password piped into a login that reads it from stdin.
    rf"(?i)\becho\s+(?:-[neE]+\s+)?{VALUE}\s*\|\s*{_SAME_COMMAND}\blogin\b{_SAME_COMMAND}--password-stdin",
    # HTTP headers, quoted or not: Authorization: Bearer …, X-Api-Key: …, Private-Token: ….
    r"(?i)\b(?:proxy-)?authorization\s*:\s*(?:(?:bearer|basic|token|digest|bot|negotiate)\s+)?(?P<secret>[^\s'\"`;&|<>()]+)",
    r"(?i)\b(?:x-api-key|api-key|apikey|x-auth-token|x-access-token|private-token|job-token|x-goog-api-key|"
    r"ocp-apim-subscription-key)\s*:\s*(?P<secret>[^\s'\"`;&|<>()]+)",
    # Cookies: the whole quoted header value; unquoted, up to the end of the word.
    r"(?i)(?P<q>[\"'])(?:set-)?cookie\s*:\s*(?P<secret>[^\"'\n]+)(?P=q)",
    r"(?i)\b(?:set-)?cookie\s*:\s*(?P<secret>[^\s'\"`;&|<>()]+)",
    rf"(?i)(?<![\w-])--cookie(?:\s*=\s*|\s+){VALUE}",
    # Credentials in URLs: scheme://user:secret@host and ?access_token=… query parameters.
    r"(?i)\b[a-z][a-z0-9+.-]*://[^:/\s@'\"]*:(?P<secret>[^@\s'\"/]+)@",
    r"(?i)[?&](?:access_token|token|api_?key|apikey|key|secret|password|client_secret|sig|signature|auth)="
    r"(?P<secret>[^&\s'\"#;|<>()]+)",
    # PowerShell secure strings made from plain text.
    rf"(?i)\bConvertTo-SecureString\s+(?:-String\s+)?{VALUE}",
)
