"""Secret forms with the secret each one holds, for the tests of the audit's and the stored output's
masking: one row per way a secret is written, every secret long enough for output masking (6+)."""

from __future__ import annotations

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

# (text, the secret in it)
SECRET_FORMS = [
    # assignments and keys
    (f"export AWS_SECRET_ACCESS_KEY={AWS_SECRET}", AWS_SECRET),
    ("export API_TOKEN='tok en 4711'", "tok en 4711"),
    ("DB_PASS=dbpass4711 ./migrate", "dbpass4711"),
    ('$env:OPENAI_API_KEY = "psk-4711x"; python x.py', "psk-4711x"),
    ('set "API_KEY=abc4711" & run', "abc4711"),
    ('[Environment]::SetEnvironmentVariable("API_TOKEN", "tok4711")', "tok4711"),
    ("kubectl create secret generic s --from-literal=password=literal4711", "literal4711"),
    ('{"password": "hunter2x", "user": "me"}', "hunter2x"),
    ("db:\n  password: hunter3y\n", "hunter3y"),
    ("@{ ApiKey = 'key4711'; Name = 'x' }", "key4711"),
    ("aws configure set aws_secret_access_key cfg4711s", "cfg4711s"),
    ("npm config set //registry.npmjs.org/:_authToken npm4711tok", "npm4711tok"),
    # long flags
    ("mysql --password=hunter4z db", "hunter4z"),
    ("tool --token abc4711x", "abc4711x"),
    ("docker login -u me --password 'pw 4711' reg", "pw 4711"),
    ("wget --http-password=web4711 https://x", "web4711"),
    ("deploy --db-password dbpw4711", "dbpw4711"),
    ("az login --client-secret=cli4711s", "cli4711s"),
    ("tool.exe /password:win4711 /quiet", "win4711"),
    ("keytool -list -keystore k -storepass store4711", "store4711"),
    ("openssl rsa -passin pass:ossl4711 -in k.pem", "ossl4711"),
    # short flags after a login-style subcommand, and tools with a short password flag
    ("docker login -u me -p PASSWORD registry", "PASSWORD"),
    ("podman login -u me -p podman4711 quay.io", "podman4711"),
    ("buildah login -u me -pglued4711 quay.io", "glued4711"),
    ("helm registry login r.io -u me -p helm4711", "helm4711"),
    ("oras login -u me -p oras4711 r.io", "oras4711"),
    ("skopeo login -u me -p skopeo4711 r.io", "skopeo4711"),
    ("twine upload -u me -p twine4711 dist/*", "twine4711"),
    ("oc login -u me -p ocpw4711 https://api", "ocpw4711"),
    ("mysql -u root -phunter5w db", "hunter5w"),
    ("sshpass -p sshpw4711 ssh host", "sshpw4711"),
    ("redis-cli -h r -a redis4711 ping", "redis4711"),
    ("ldapsearch -x -w ldap4711 -b dc=x", "ldap4711"),
    ("sqlcmd -S db -U sa -P sqlpw4711", "sqlpw4711"),
    ("zip -P zippw4711 a.zip f", "zippw4711"),
    ("7z x -psevenz4711 a.7z", "sevenz4711"),
    ("mongosh -u me -p mongo4711", "mongo4711"),
    # credentials as user:password, user%password, positional words, piped into a login
    ("curl -u user:curl4711 https://x", "curl4711"),
    ("skopeo copy --src-creds me:creds4711 a b", "creds4711"),
    ("smbclient //h/s -U me%smb4711", "smb4711"),
    ("echo piped4711 | docker login -u me --password-stdin r", "piped4711"),
    ("cargo login cargo4711tok", "cargo4711tok"),
    ("poetry config http-basic.repo me poetry4711", "poetry4711"),
    ("htpasswd -b users me htpw4711", "htpw4711"),
    ("rabbitmqctl add_user me rabbit4711", "rabbit4711"),
    # headers, cookies, URLs
    ("curl -H 'Authorization: Bearer bearer4711' u", "bearer4711"),
    ("curl -H 'X-Api-Key: xkey4711' u", "xkey4711"),
    ("curl -H 'Cookie: session=sess4711' u", "session=sess4711"),
    ("git clone https://user:git4711@example.com/r.git", "git4711"),
    ("curl 'https://api.x/v1?access_token=qtok4711&x=1'", "qtok4711"),
    # bare tokens of known shapes
    (f"echo {AWS_SECRET}", AWS_SECRET),
    ("aws s3 ls --profile AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("gh auth login --with-token ghp_abcdefghijklmnopqrstuvwxyz0123", "ghp_abcdefghijklmnopqrstuvwxyz0123"),
    ("echo github_pat_11ABCDEFG0123456789_abcdefghij", "github_pat_11ABCDEFG0123456789_abcdefghij"),
    ("echo glpat-abcdefghij0123456789", "glpat-abcdefghij0123456789"),
    ("echo xoxb-1234567890-abcdefghij", "xoxb-1234567890-abcdefghij"),
    ("echo sk-proj-abcdefghijklmnopqrstuvwx", "sk-proj-abcdefghijklmnopqrstuvwx"),
    ("echo sk_live_abcdefghijklmnop1234", "sk_live_abcdefghijklmnop1234"),
    ("echo whsec_abcdefghijklmnopqrstuvwxyz12", "whsec_abcdefghijklmnopqrstuvwxyz12"),
    ("echo AIzaSyA1234567890abcdefghijklmnopqrstuv", "AIzaSyA1234567890abcdefghijklmnopqrstuv"),
    ("echo hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH"),
    ("echo dckr_pat_abcdefghijklmnopqrstuvwx", "dckr_pat_abcdefghijklmnopqrstuvwx"),
    (
        "echo eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijklmnop",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijklmnop",
    ),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", "\nMIIEowIBAAKCAQEA\n"),
    ("curl https://hooks.slack.com/services/T000/B000/XXXXhook", "T000/B000/XXXXhook"),
]
