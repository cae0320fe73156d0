/* psargv: a stand-in for powershell.exe under Wine. It prints the raw command line it was started
   with and the -Command text PowerShell would run from it (the arguments after the switch, joined
   with spaces), so a test sees exactly what cmd handed the real program. */
#include <windows.h>
#include <shellapi.h>
#include <stdio.h>

int main(void) {
    LPWSTR line = GetCommandLineW();
    int count = 0;
    LPWSTR *argv = CommandLineToArgvW(line, &count);
    wprintf(L"RAW:%ls\n", line);
    wprintf(L"COMMAND:");
    for (int i = 2; i < count; i++) wprintf(L"%ls%ls", i > 2 ? L" " : L"", argv[i]);
    wprintf(L"\n");
    return 0;
}
