/* wslparse: wsl.exe's reading of its own command line, ported line by line from microsoft/WSL
   (src/windows/common/WslClient.cpp: WslMain's option loop and ParseLegacyArguments;
   src/windows/common/helpers.cpp: ParseArgument, ConsumeArgument; src/windows/common/string.cpp:
   StripLeadingWhitespace, StripQuotes). It takes GetCommandLineW() as wsl.exe does and prints, as one
   JSON object on stdout, what wsl.exe would do: the directory --cd names, the distribution and user,
   and the argv of the Linux program (CommandLineToArgvW of what follows -e, as wsl.exe calls it), or
   the action or error that would end it instead. Nothing is started.

   What matters for secure-shell: an option's value is read up to the next space or tab, or, for
   --cd only, from a leading `"` to the next `"`, with no escapes; everything after -e is split by
   CommandLineToArgvW. */
#include <windows.h>
#include <shellapi.h>
#include <wchar.h>

typedef struct {
    const wchar_t *p;
    size_t n;
} view;

static char out[1 << 20];
static size_t used;

static void put(const char *s, size_t n) {
    if (used + n < sizeof out) {
        memcpy(out + used, s, n);
        used += n;
    }
}

static void put_s(const char *s) { put(s, strlen(s)); }

static void put_json(const wchar_t *p, size_t n) {
    put_s("\"");
    for (size_t i = 0; i < n; i++) {
        wchar_t c = p[i];
        if (c == L'"' || c == L'\\') {
            char e[2] = {'\\', (char)c};
            put(e, 2);
        } else if (c < 0x20) {
            char e[8];
            wsprintfA(e, "\\u%04x", (unsigned)c);
            put_s(e);
        } else {
            char u[8];
            int len = WideCharToMultiByte(CP_UTF8, 0, &p[i], (i + 1 < n && c >= 0xD800 && c < 0xDC00) ? 2 : 1, u,
                                          sizeof u, NULL, NULL);
            if (len > 0) put(u, (size_t)len);
            if (c >= 0xD800 && c < 0xDC00 && i + 1 < n) i++;
        }
    }
    put_s("\"");
}

static void field(const char *name, view v, int present) {
    put_s(",\"");
    put_s(name);
    put_s("\":");
    if (present)
        put_json(v.p, v.n);
    else
        put_s("null");
}

static int finish(void) {
    DWORD written;
    put_s("}\n");
    WriteFile(GetStdHandle(STD_OUTPUT_HANDLE), out, (DWORD)used, &written, NULL);
    return 0;
}

/* StripLeadingWhitespace: find_first_not_of(L" \t") */
static view strip_ws(view v) {
    while (v.n && (v.p[0] == L' ' || v.p[0] == L'\t')) {
        v.p++;
        v.n--;
    }
    return v;
}

/* ParseArgument(CommandLine, HandleQuotes) */
static view parse_argument(view line, int handle_quotes) {
    view arg = line;
    for (size_t i = 0; i < line.n; i++) {
        if (line.p[i] == L' ' || line.p[i] == L'\t') {
            arg.n = i;
            break;
        }
    }
    if (handle_quotes && line.n && line.p[0] == L'"') {
        for (size_t q = 1; q < line.n; q++) {
            if (line.p[q] == L'"') {
                arg.n = q + 1;
                break;
            }
        }
    }
    return arg;
}

/* ConsumeArgument */
static view consume(view line, view arg) {
    line.p += arg.n;
    line.n -= arg.n;
    return strip_ws(line);
}

/* StripQuotes */
static view strip_quotes(view v) {
    if (v.n > 1 && v.p[0] == L'"' && v.p[v.n - 1] == L'"') {
        v.p++;
        v.n -= 2;
    }
    return v;
}

static int is(view v, const wchar_t *s) { return v.n == wcslen(s) && wcsncmp(v.p, s, v.n) == 0; }

static int is_guid(view v) {
    /* wsl::shared::string::ToGuid: {xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}, braces optional */
    view g = v;
    if (g.n == 38 && g.p[0] == L'{' && g.p[37] == L'}') {
        g.p++;
        g.n -= 2;
    }
    if (g.n != 36) return 0;
    for (size_t i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (g.p[i] != L'-') return 0;
        } else if (!iswxdigit(g.p[i])) {
            return 0;
        }
    }
    return 1;
}

static int stop(const char *key, const char *value) {
    put_s(",\"");
    put_s(key);
    put_s("\":\"");
    put_s(value);
    put_s("\"");
    return finish();
}

/* Options that end wsl.exe's parsing with an action of their own (no program runs). */
static const wchar_t *ACTIONS[] = {L"--debug-shell", L"--update", L"--help", L"--export", L"--import",
                                   L"--import-in-place", L"-l", L"--list", L"-s", L"--setdefault",
                                   L"--set-default", L"-t", L"--terminate", L"--unregister",
                                   L"--set-default-version", L"--shutdown", L"--manage", L"--set-version",
                                   L"--mount", L"--unmount", L"--install", L"--status", L"-v", L"--version",
                                   L"--uninstall", NULL};

int main(void) {
    const wchar_t *raw = GetCommandLineW();
    view line = {raw, wcslen(raw)};
    view cd = {0}, distro = {0}, user = {0}, shell_type = {0};
    int has_cd = 0, has_distro = 0, has_user = 0, has_shell_type = 0, exec_mode = 0;
    put_s("{\"line\":");
    put_json(line.p, line.n);

    /* ParseLegacyArguments: strip the executable name (quotes toggle, no escapes), then a GUID, then `~` */
    int in_quotes = 0;
    while (line.n && (in_quotes || !(line.p[0] == L' ' || line.p[0] == L'\t'))) {
        if (line.p[0] == L'"') in_quotes = !in_quotes;
        line.p++;
        line.n--;
    }
    line = strip_ws(line);
    view argument = parse_argument(line, 0);
    if (is_guid(argument)) line = consume(line, argument);
    argument = parse_argument(line, 0);
    if (is(argument, L"~")) {
        cd = argument;
        has_cd = 1;
        line = consume(line, argument);
    }

    for (;;) {
        argument = parse_argument(line, 0);
        if (argument.n == 0) break;
        for (int i = 0; ACTIONS[i]; i++) {
            if (is(argument, ACTIONS[i])) {
                field("action", argument, 1);
                return finish();
            }
        }
        if (is(argument, L"-d") || is(argument, L"--distribution") || is(argument, L"--distribution-id") ||
            is(argument, L"-u") || is(argument, L"--user") || is(argument, L"--shell-type") ||
            is(argument, L"--parent-console")) {
            int which = is(argument, L"-u") || is(argument, L"--user") ? 1 : is(argument, L"--shell-type") ? 2 : 0;
            line = consume(line, argument);
            argument = parse_argument(line, 0);
            if (argument.n == 0) return stop("error", "required parameter missing");
            if (which == 1) {
                user = argument;
                has_user = 1;
            } else if (which == 2) {
                shell_type = argument;
                has_shell_type = 1;
            } else {
                distro = argument;
                has_distro = 1;
            }
        } else if (is(argument, L"--cd")) {
            line = consume(line, argument);
            argument = parse_argument(line, 1);
            /* ChangeDirectory: StripQuotes; empty is E_INVALIDARG */
            cd = strip_quotes(argument);
            if (cd.n == 0) return stop("error", "--cd: empty directory");
            has_cd = 1;
        } else if (is(argument, L"--")) {
            line = consume(line, argument);
            break;
        } else if (is(argument, L"-e") || is(argument, L"--exec")) {
            line = consume(line, argument);
            exec_mode = 1;
            break;
        } else if (is(argument, L"--system")) {
            /* a flag: consumed below */
        } else {
            if (argument.p[0] == L'-') return stop("error", "invalid command line argument");
            break;
        }
        line = consume(line, argument);
    }

    field("cd", cd, has_cd);
    field("distribution", distro, has_distro);
    field("user", user, has_user);
    field("shellType", shell_type, has_shell_type);
    put_s(exec_mode ? ",\"exec\":true,\"argv\":[" : ",\"exec\":false,\"argv\":[");
    if (line.n) {
        if (exec_mode) {
            /* CommandLineToArgvW on the rest, as wsl.exe does */
            wchar_t *rest = (wchar_t *)HeapAlloc(GetProcessHeap(), 0, (line.n + 1) * sizeof(wchar_t));
            memcpy(rest, line.p, line.n * sizeof(wchar_t));
            rest[line.n] = 0;
            int argc = 0;
            LPWSTR *argv = CommandLineToArgvW(rest, &argc);
            for (int i = 0; argv && i < argc; i++) {
                if (i) put_s(",");
                put_json(argv[i], wcslen(argv[i]));
            }
        } else {
            put_json(line.p, line.n); /* the rest, whole, to the default shell's -c */
        }
    }
    put_s("]");
    return finish();
}
