/* rawspawn: start the command line in the RAWSPAWN_LINE environment variable, character for
   character, as CreateProcessW's lpCommandLine, with this process's standard handles; wait for it and
   exit with its exit code. Under Wine, a program's own argv is re-quoted on the way in, so the
   tests hand the executor's exact Windows command line over this way instead. Exit 250 when the
   variable is missing, 251 when CreateProcessW fails. */
#include <windows.h>

int main(void) {
    /* the wide form: Wine converts the Unix environment from UTF-8 (a C.UTF-8 locale) to UTF-16, where
       the ANSI form would pass it through the ANSI code page and lose what that page lacks */
    static wchar_t line[32768];
    DWORD length = GetEnvironmentVariableW(L"RAWSPAWN_LINE", line, 32768);
    if (length == 0 || length >= 32768) return 250;
    STARTUPINFOW startup;
    ZeroMemory(&startup, sizeof startup);
    startup.cb = sizeof startup;
    startup.dwFlags = STARTF_USESTDHANDLES;
    startup.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
    startup.hStdOutput = GetStdHandle(STD_OUTPUT_HANDLE);
    startup.hStdError = GetStdHandle(STD_ERROR_HANDLE);
    PROCESS_INFORMATION process;
    if (!CreateProcessW(NULL, line, NULL, NULL, TRUE, 0, NULL, NULL, &startup, &process)) return 251;
    WaitForSingleObject(process.hProcess, INFINITE);
    DWORD code = 251;
    GetExitCodeProcess(process.hProcess, &code);
    CloseHandle(process.hThread);
    CloseHandle(process.hProcess);
    return (int)code;
}
