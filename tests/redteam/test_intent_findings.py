# ruff: noqa: E501 (a table of attack command lines, kept whole)
"""Findings against the intent layer: command rules the kernel cannot see.

Policy: the embedded default with `rm`, `curl`, `wget`, `nc`, `dd`, `shred`, `del` and `Remove-Item`
blocked and one project allowed (POSIX, and `C:\\proj` for cmd and PowerShell); the project holds
`notes.txt`. Every attack tries to make a blocked program run (`rm -f notes.txt`, `del notes.txt`)
while the engine allows the command; every ordinary row is a developer command that should run.

Each row asserts the SAFE behaviour: an attack is refused, an ordinary command is allowed. A row
with a note is an open finding, marked xfail(strict) so the file stays green and flips loudly when
the hole (or the wrongful refusal) is fixed; rows without a note already hold and guard against
regressions. For every bash bypass (and the closed Python rows of PROVEN_GUARDS), `test_bash_bypass_really_runs` runs the command with real bash
in a scratch copy of the project and shows that `notes.txt` is gone (on a terminal for the rows
that need one), so no fix can pass by calling an attack harmless. The cmd and PowerShell bypasses
hand the same interpreter code to node, perl and python as bash rows proven here. REPL sessions
go through the real server over stdio (`execute_command` with `interactive: true`, then
`send_input`).
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from mcp import Client, StdioServerParameters

from secure_shell.config.discovery import embedded_default_text
from secure_shell.config.loader import validate
from secure_shell.config.resolve import ResolvedConfig, resolve
from secure_shell.policy.decide import decide
from secure_shell.shells import ShellKind
from tests.places import state_env

BLOCKED = ["rm", "curl", "wget", "nc", "dd", "shred", "del", "Remove-Item"]
WINDOWS_PROJECT = "C:\\proj"
ATTACK, ORDINARY = "attack", "ordinary"
# Rows whose proof needs a terminal (the server gives one with `pty: true`): pydoc pages through
# $PAGER/$MANPAGER, and less runs its LESS commands, only on one.
ON_A_TERMINAL = {"py_getpager_env", "py_os_environ_pager_help", "less_env"}


@dataclass(frozen=True)
class Row:
    """One command. `cls`: the attack class of the brief (1 arguments, 2 streams, 3 sqlite3,
    4 environment, 5 interpreters, 6 bash, 7 cmd/PowerShell); `note`: why it is an open finding."""

    cls: str
    name: str
    shell: str
    command: str
    kind: str
    note: str

    @property
    def open(self) -> bool:
        return bool(self.note)


ROWS = [
    # --- class 1 arguments ---------------------------------------------------------------------
    Row(
        "1",
        "git_upload_pack",
        "bash",
        "git ls-remote --upload-pack='r\"\"m -f notes.txt; git-upload-pack' .",
        ATTACK,
        "",
    ),
    Row("1", "git_grep_O", "bash", "git grep -O'r\"\"m -f' hi", ATTACK, ""),
    Row("1", "git_c_alias", "bash", "git -c alias.x='!r\"\"m -f notes.txt' x", ATTACK, ""),
    Row("1", "git_c_fsmonitor", "bash", "git -c core.fsmonitor='r\"\"m -f notes.txt; false' status", ATTACK, ""),
    Row(
        "1",
        "git_ext",
        "bash",
        "git -c protocol.ext.allow=always ls-remote 'ext::sh -c r\"\"m% -f% notes.txt'",
        ATTACK,
        "",
    ),
    Row("1", "git_difftool_x", "bash", "git difftool -y -x 'r\"\"m -f notes.txt; :' HEAD", ATTACK, ""),
    Row("1", "git_config_then_alias", "bash", "git config alias.x '!r\"\"m -f notes.txt' && git x", ATTACK, ""),
    Row("1", "git_c_diffexternal", "bash", "git -c diff.external='r\"\"m -f notes.txt;:' diff HEAD", ATTACK, ""),
    Row(
        "1",
        "tar_checkpoint",
        "bash",
        "tar -cf /dev/null notes.txt --checkpoint=1 --checkpoint-action=exec='r\"\"m -f notes.txt'",
        ATTACK,
        "",
    ),
    Row(
        "1",
        "tar_to_command",
        "bash",
        "tar -cf t.tar notes.txt && tar -xf t.tar --to-command='r\"\"m -f notes.txt'",
        ATTACK,
        "",
    ),
    Row("1", "tar_I", "bash", "tar -I 'r\"\"m -f notes.txt;:' -cf t.tar notes.txt", ATTACK, ""),
    Row("1", "zip_TT", "bash", "zip z.zip notes.txt -T -TT 'r\"\"m -f notes.txt #'", ATTACK, ""),
    Row("1", "split_filter", "bash", "split --filter='r\"\"m -f notes.txt' notes.txt", ATTACK, ""),
    Row("1", "find_exec_sh", "bash", 'find . -name notes.txt -exec sh -c \'r""m -f "$1"\' _ {} \\;', ATTACK, ""),
    Row("1", "xargs_nice", "bash", "printf '\\162\\155 -f notes.txt' | xargs nice", ATTACK, ""),
    Row("1", "xargs_env", "bash", "printf '\\162\\155 -f notes.txt' | xargs env", ATTACK, ""),
    Row("1", "xargs_bare", "bash", "printf 'r\\155 -f notes.txt' | xargs -I{} sh -c {}", ATTACK, ""),
    Row("1", "xargs_timeout", "bash", "printf '\\162\\155\\n-f\\nnotes.txt' | xargs timeout 5", ATTACK, ""),
    Row("1", "env_S_var", "bash", "X=$(printf 'r\\155') env -S '${X} -f notes.txt'", ATTACK, ""),
    Row("1", "env_S", "bash", "env -S 'r\"\"m -f notes.txt'", ATTACK, ""),
    Row("1", "script_c", "bash", "script -qc 'r\"\"m -f notes.txt' /dev/null", ATTACK, ""),
    Row("1", "watch", "bash", "timeout 3 watch -n1 'r\"\"m -f notes.txt'", ATTACK, ""),
    Row("1", "gdb_ex", "bash", "gdb -batch -ex 'shell r\"\"m -f notes.txt'", ATTACK, ""),
    Row("1", "make_eval", "bash", "make --eval='x:;r\"\"m -f notes.txt' x", ATTACK, ""),
    Row("1", "make_shell_func", "bash", "make --eval='$(shell r\"\"m -f notes.txt)' -f /dev/null", ATTACK, ""),
    Row("1", "vim_ex", "bash", "vim -es -c '!r\"\"m -f notes.txt' -c q", ATTACK, ""),
    Row("1", "vim_call_system", "bash", 'vim -es +\'call system("r"."m -f notes.txt")\' +q', ATTACK, ""),
    Row("1", "man_P", "bash", "man -P 'r\"\"m -f notes.txt;:' ls", ATTACK, ""),
    Row("1", "git_filter_branch", "bash", "git filter-branch -f --tree-filter 'r\"\"m -f notes.txt' HEAD", ATTACK, ""),
    Row(
        "1",
        "git_filter_branch_msg",
        "bash",
        "git filter-branch -f --msg-filter 'r\"\"m -f ../notes.txt; cat' HEAD",
        ATTACK,
        "",
    ),
    Row("1", "git_c_pager", "bash", "git -c core.pager='r\"\"m -f notes.txt;:' -p log", ATTACK, ""),
    Row(
        "1",
        "git_c_credential",
        "bash",
        "git -c credential.helper='!r\"\"m -f notes.txt;:' credential fill <<< 'url=http://x'",
        ATTACK,
        "",
    ),
    Row("1", "git_c_seq_editor", "bash", "git -c sequence.editor='r\"\"m -f notes.txt;:' rebase -i HEAD", ATTACK, ""),
    Row("1", "make_subst", "bash", "make --eval='x:;$(subst X,,rXm) -f notes.txt' x", ATTACK, ""),
    Row(
        "1",
        "make_stdin_subst",
        "bash",
        "make -f /dev/stdin x <<'EOF'\nC := $(subst X,,rXm)\nx:\n\t$(C) -f notes.txt\nEOF",
        ATTACK,
        "",
    ),
    Row("1", "make_heredoc_dash", "bash", "make -f - x <<'EOF'\nx:\n\t$(subst X,,rXm) -f notes.txt\nEOF", ATTACK, ""),
    Row("1", "gdb_python", "bash", 'gdb -batch -ex \'python import os; os.system("r"+"m -f notes.txt")\'', ATTACK, ""),
    Row("1", "gdb_eval", "bash", "gdb -batch -ex 'eval \"shell %c%c -f notes.txt\", 114, 109'", ATTACK, ""),
    Row(
        "1",
        "bash_time_nice_env",
        "bash",
        'time nice -n 1 env -- timeout 5 stdbuf -o0 nohup r""m -f notes.txt',
        ATTACK,
        "",
    ),
    Row("1", "bash_env_i", "bash", 'env -i PATH=/usr/bin r""m -f notes.txt', ATTACK, ""),
    Row("1", "bash_env_u_chain", "bash", 'env -u X -C . r""m -f notes.txt', ATTACK, ""),
    Row("1", "bash_flock", "bash", "flock notes.txt -c 'r\"\"m -f notes.txt'", ATTACK, ""),
    Row("1", "bash_setpriv", "bash", 'setpriv r""m -f notes.txt', ATTACK, ""),
    Row("1", "bash_prlimit", "bash", 'prlimit --nofile=100 r""m -f notes.txt', ATTACK, ""),
    Row("1", "bash_chrt_taskset", "bash", 'taskset -c 0 r""m -f notes.txt', ATTACK, ""),
    Row("1", "bash_ionice", "bash", 'ionice -c3 r""m -f notes.txt', ATTACK, ""),
    Row("1", "bash_unbuffer_stdbuf", "bash", 'stdbuf -i0 -- r""m -f notes.txt', ATTACK, ""),
    Row("1", "bash_xargs_a", "bash", 'xargs -a notes.txt -I{} r""m -f {}', ATTACK, ""),
    Row("1", "bash_find_ok", "bash", 'find . -name notes.txt -ok r""m -f {} \\; <<< y', ATTACK, ""),
    Row("1", "bash_find_execdir_plus", "bash", 'find . -name notes.txt -execdir /usr/bin/r""m -f {} +', ATTACK, ""),
    Row(
        "1",
        "o_git_config_alias",
        "bash",
        "git config alias.st status",
        ORDINARY,
        "",
    ),
    Row("1", "o_git_config_user", "bash", "git config user.name 'A B'", ORDINARY, ""),
    Row("1", "o_git_config_get", "bash", "git config --get remote.origin.url", ORDINARY, ""),
    Row("1", "o_git_config_list", "bash", "git config --list --show-origin", ORDINARY, ""),
    Row("1", "o_git_c_color", "bash", "git -c color.ui=always log --oneline -3", ORDINARY, ""),
    Row(
        "1",
        "o_git_c_user",
        "bash",
        "git -c user.email=a@b.c -c user.name=A commit -m 'fix: remove rm call'",
        ORDINARY,
        "",
    ),
    Row("1", "o_git_commit_rm_word", "bash", "git commit -m 'stop using rm -rf in build'", ORDINARY, ""),
    Row("1", "o_jq", "bash", "jq '.a' <<< '{\"a\":1}'", ORDINARY, ""),
    Row("1", "o_find_delete", "bash", "find . -name '*.pyc' -delete", ORDINARY, ""),
    Row("1", "o_find_exec_grep", "bash", "find . -type f -exec grep -l hi {} +", ORDINARY, ""),
    Row("1", "o_xargs_basename", "bash", "echo a/b c/d | xargs -n1 basename", ORDINARY, ""),
    Row("1", "o_tar_czf", "bash", "tar -czf out.tgz notes.txt", ORDINARY, ""),
    Row("1", "o_make_C", "bash", "make -C build", ORDINARY, ""),
    Row("1", "o_gdb_batch", "bash", "gdb -batch -ex 'info functions' ./a.out", ORDINARY, ""),
    Row("1", "o_git_filter_branch_ok", "bash", "git filter-branch -f --msg-filter 'sed s/x/y/' HEAD", ORDINARY, ""),
    Row("1", "o_bash_cmds_read", "bash", 'echo "${BASH_CMDS[@]}"', ORDINARY, ""),
    # bash's command hash and aliases, however they are assigned
    Row("6", "bash_cmds_subscript", "bash", 'BASH_CMDS[ls]=/usr/bin/r""m; ls -f notes.txt', ATTACK, ""),
    Row("6", "bash_cmds_declare", "bash", 'declare -A BASH_CMDS=([ls]=/usr/bin/r""m); ls -f notes.txt', ATTACK, ""),
    Row(
        "6",
        "bash_aliases_subscript",
        "bash",
        'shopt -s expand_aliases\nBASH_ALIASES[ls]=r""m\nls -f notes.txt',
        ATTACK,
        "",
    ),
    Row("6", "bash_cmds_printf_v", "bash", 'printf -v "BASH_CMDS[ls]" %s /usr/bin/r""m; ls -f notes.txt', ATTACK, ""),
    Row("6", "bash_cmds_read", "bash", 'read -r "BASH_CMDS[ls]" <<< /usr/bin/r""m; ls -f notes.txt', ATTACK, ""),
    Row("6", "o_hash_r", "bash", "hash -r; ls", ORDINARY, ""),
    Row("6", "o_unset_bash_cmds", "bash", "unset BASH_CMDS; ls", ORDINARY, ""),
    Row("1", "o_time_make", "bash", "time nice make -j2", ORDINARY, ""),
    Row("1", "o_git_config_global", "bash", "git config --global user.email a@b.c", ORDINARY, ""),
    # --- class 2 streams -----------------------------------------------------------------------
    Row(
        "2",
        "awk_print_pipe",
        "bash",
        'awk \'BEGIN{c=sprintf("%c%c -f notes.txt",114,109); print "" | c}\'',
        ATTACK,
        "",
    ),
    Row(
        "2",
        "awk_f_stdin",
        "bash",
        'awk -f /dev/stdin <<\'EOF\'\nBEGIN{c=sprintf("%c%c -f notes.txt",114,109); print "" | c}\nEOF',
        ATTACK,
        "",
    ),
    Row(
        "2",
        "awk_printf_pipe",
        "bash",
        'awk \'BEGIN{c=sprintf("%c%c -f notes.txt",114,109); printf "" | c}\'',
        ATTACK,
        "",
    ),
    Row("2", "ex_stdin", "bash", "ex -s <<'EOF'\n!r\"\"m -f notes.txt\nq\nEOF", ATTACK, ""),
    Row("2", "vim_S_stdin", "bash", "vim -es -S /dev/stdin <<'EOF'\n!r\"\"m -f notes.txt\nq\nEOF", ATTACK, ""),
    Row("2", "source_procsub", "bash", ". <(printf 'r\\x6d -f notes.txt')", ATTACK, ""),
    Row("2", "source_stdin", "bash", "source /dev/stdin <<< \"$(printf 'r\\x6d -f notes.txt')\"", ATTACK, ""),
    Row("2", "bash_procsub", "bash", "bash <(printf 'r\\x6d -f notes.txt')", ATTACK, ""),
    Row(
        "2",
        "awk_getline_cmd",
        "bash",
        "awk 'BEGIN{c=sprintf(\"%c%c -f notes.txt\",114,109); while ((c | getline x) > 0) print x}'",
        ATTACK,
        "",
    ),
    Row("2", "awk_print_pipe_sh", "bash", 'awk \'BEGIN{print "r" "m -f notes.txt" | "sh"}\'', ATTACK, ""),
    Row("2", "sed_e_variant", "bash", "echo x | sed 's/x/r\\x6d -f notes.txt/;e'", ATTACK, ""),
    Row("2", "sed_e_braces", "bash", "echo x | sed '1{s/x/r\\x6d -f notes.txt/\ne\n}'", ATTACK, ""),
    Row("2", "sed_s_flags_e", "bash", "echo x | sed 's|x|r\\x6d -f notes.txt|ge'", ATTACK, ""),
    Row("2", "sed_f_stdin", "bash", "echo x | sed -f /dev/fd/3 3<<'EOF'\ns/x/r\\x6d -f notes.txt/e\nEOF", ATTACK, ""),
    Row("2", "ed_stdin", "bash", "ed -s notes.txt <<'EOF'\n!r\"\"m -f notes.txt\nq\nEOF", ATTACK, ""),
    Row("2", "bash_dash_s", "bash", "dash -s <<< 'r\"\"m -f notes.txt'", ATTACK, ""),
    Row("2", "bash_fd_dup", "bash", "exec 3<<<'r\"\"m -f notes.txt'; bash /dev/fd/3", ATTACK, ""),
    Row(
        "2",
        "awk_pipe_var_close",
        "bash",
        'awk -v x=114 \'BEGIN{c=sprintf("%c",x) "m -f notes.txt"; print 1 | c; close(c)}\'',
        ATTACK,
        "",
    ),
    Row("2", "awk_getline_var", "bash", 'awk \'BEGIN{c = "r" "m -f notes.txt"; c | getline}\'', ATTACK, ""),
    Row(
        "2",
        "o_awk_sort_pipe",
        "bash",
        "awk -F, '{print $1 | \"sort\"}' notes.txt",
        ORDINARY,
        "",
    ),
    Row(
        "2",
        "o_awk_redirect",
        "bash",
        "awk '{print > \"out.txt\"}' notes.txt",
        ORDINARY,
        "",
    ),
    Row(
        "2",
        "o_cat_dash_heredoc",
        "bash",
        "cat - <<'EOF'\nhello\nEOF",
        ORDINARY,
        "",
    ),
    Row(
        "2",
        "o_kubectl_dash",
        "bash",
        "kubectl apply -f - <<'EOF'\nkind: ConfigMap\nEOF",
        ORDINARY,
        "",
    ),
    Row(
        "2",
        "o_py_heredoc",
        "bash",
        "python3 - <<'EOF'\nimport csv, sys\nfor row in csv.reader(open('notes.txt')): print(row)\nEOF",
        ORDINARY,
        "",
    ),
    Row("2", "o_awk_sum", "bash", "awk '{s += $1} END {print s}' notes.txt", ORDINARY, ""),
    # awk: every command and file name a literal; anything computed is refused
    Row(
        "2",
        "awk_pipe_paren",
        "bash",
        'awk \'BEGIN{c=sprintf("%c%c -f notes.txt",114,109); print "" | (c)}\'',
        ATTACK,
        "",
    ),
    Row(
        "2",
        "awk_getline_paren",
        "bash",
        "awk 'BEGIN{c=sprintf(\"%c%c -f notes.txt\",114,109); (c) | getline}'",
        ATTACK,
        "",
    ),
    Row("2", "awk_printf_pipe_bash", "bash", 'awk \'BEGIN{printf "r" "m -f notes.txt\\n" | "bash"}\'', ATTACK, ""),
    Row(
        "2", "awk_system_var", "bash", "awk -v c=notes.txt 'BEGIN{system(sprintf(\"%c%c -f \",114,109) c)}'", ATTACK, ""
    ),
    Row(
        "2", "awk_system_shell_stdin", "bash", "echo 'r\"\"m -f notes.txt' | awk 'BEGIN{system(\"bash\")}'", ATTACK, ""
    ),
    Row("2", "awk_getline_shell_stdin", "bash", "awk 'BEGIN{\"sh\" | getline}' <<< 'r\"\"m -f notes.txt'", ATTACK, ""),
    Row("2", "o_awk_system_sort", "bash", "awk 'BEGIN{system(\"sort notes.txt\")}'", ORDINARY, ""),
    Row("2", "o_awk_getline_date", "bash", "awk 'BEGIN{\"date\" | getline d; print d}'", ORDINARY, ""),
    Row("2", "o_awk_stderr", "bash", "awk '{print $1 > \"/dev/stderr\"}' notes.txt", ORDINARY, ""),
    Row("2", "o_awk_system_literal", "bash", "awk 'BEGIN{system(\"git status\")}'", ORDINARY, ""),
    Row("2", "o_awk_regex_bar", "bash", "awk '/a|b/ {print $1 > \"out.txt\"}' notes.txt", ORDINARY, ""),
    Row("2", "o_sed_i", "bash", "sed -i 's/a/b/' notes.txt", ORDINARY, ""),
    Row("2", "o_sed_w", "bash", "sed -n '/x/w out.txt' notes.txt", ORDINARY, ""),
    Row("2", "o_make_stdin", "bash", "make -f /dev/stdin all <<'EOF'\nall:\n\techo ok\nEOF", ORDINARY, ""),
    Row("2", "o_awk_printf", "bash", "awk -F: '{printf \"%s\\n\", $1}' notes.txt", ORDINARY, ""),
    Row("2", "o_sed_multi", "bash", "sed -e 's/a/b/' -e '/^$/d' notes.txt", ORDINARY, ""),
    # --- class 3 sqlite3 -----------------------------------------------------------------------
    Row("3", "sqlite_shell_octal", "bash", "sqlite3 :memory: '.shell \"r\\155\" -f notes.txt'", ATTACK, ""),
    Row("3", "sqlite_system_hex", "bash", "sqlite3 :memory: '.system \"r\\x6d\" -f notes.txt'", ATTACK, ""),
    Row("3", "sqlite_cmd", "bash", "sqlite3 -cmd '.sh r\"\"m -f notes.txt' :memory: .q", ATTACK, ""),
    Row(
        "3",
        "sqlite_init_stdin",
        "bash",
        "sqlite3 -init /dev/stdin :memory: .q <<'EOF'\n.shell r\"\"m -f notes.txt\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "3", "sqlite_once_pipe", "bash", "sqlite3 :memory: \".once '|r\\\"\\\"m -f notes.txt'\" 'select 1;'", ATTACK, ""
    ),
    Row(
        "3",
        "sqlite_import_pipe",
        "bash",
        "sqlite3 :memory: 'create table t(a);' \".import '|r\\\"\\\"m -f notes.txt' t\"",
        ATTACK,
        "",
    ),
    Row("3", "sqlite_read_pipe", "bash", 'sqlite3 :memory: ".read \'|r\\"\\"m -f notes.txt\'"', ATTACK, ""),
    Row("3", "sqlite_read_pipe_sq", "bash", "sqlite3 :memory: <<'EOF'\n.read '|r\"\"m -f notes.txt'\nEOF", ATTACK, ""),
    Row(
        "3",
        "sqlite_import_pipe_hd",
        "bash",
        "sqlite3 :memory: <<'EOF'\ncreate table t(a);\n.import '|r\"\"m -f notes.txt' t\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "3",
        "sq_comment_quote",
        "bash",
        "sqlite3 :memory: <<'EOF'\nselect 1; -- it's\n.shell r\"\"m -f notes.txt\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "3",
        "sq_block_comment_quote",
        "bash",
        "sqlite3 :memory: <<'EOF'\nselect 1; /* it's */\n.shell r\"\"m -f notes.txt\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "3",
        "sq_dquote_ident",
        "bash",
        'sqlite3 :memory: <<\'EOF\'\nselect "a\'b";\n.shell r""m -f notes.txt\nEOF',
        ATTACK,
        "",
    ),
    Row(
        "3",
        "sq_bracket_ident",
        "bash",
        "sqlite3 :memory: <<'EOF'\nselect 1 as [a'b];\n.shell r\"\"m -f notes.txt\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "3",
        "sq_backtick_ident",
        "bash",
        "sqlite3 :memory: <<'EOF'\nselect 1 as `a'b`;\n.shell r\"\"m -f notes.txt\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "3",
        "sq_escaped_quote",
        "bash",
        "sqlite3 :memory: <<'EOF'\nselect 'a''b';\n.shell r\"\"m -f notes.txt\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "3",
        "sq_trigger",
        "bash",
        "sqlite3 :memory: <<'EOF'\ncreate table t(a); create trigger x after insert on t begin select 1; end;\n.shell r\"\"m -f notes.txt\nEOF",
        ATTACK,
        "",
    ),
    Row("3", "sq_leading_space_dot", "bash", "sqlite3 :memory: <<'EOF'\n   .sh r\"\"m -f notes.txt\nEOF", ATTACK, ""),
    Row(
        "3",
        "sq_slash_semicolon",
        "bash",
        "sqlite3 :memory: <<'EOF'\nselect 1\n/\n.shell r\"\"m -f notes.txt\nEOF",
        ATTACK,
        "",
    ),
    Row("3", "sq_go", "bash", "sqlite3 :memory: <<'EOF'\nselect 1\ngo\n.shell r\"\"m -f notes.txt\nEOF", ATTACK, ""),
    Row(
        "3",
        "sq_arg_then_stdin",
        "bash",
        "sqlite3 :memory: 'select 1' <<'EOF'\n.shell r\"\"m -f notes.txt\nEOF",
        ATTACK,
        "",
    ),
    Row("3", "o_sqlite_select", "bash", "sqlite3 app.db 'select count(*) from users'", ORDINARY, ""),
    Row("3", "o_sqlite_tables", "bash", "sqlite3 app.db .tables", ORDINARY, ""),
    Row("3", "o_sqlite_import_csv", "bash", "sqlite3 app.db '.mode csv' '.import notes.txt t'", ORDINARY, ""),
    Row("3", "o_sqlite_dump", "bash", "sqlite3 app.db .dump > dump.sql", ORDINARY, ""),
    Row(
        "3", "o_sqlite_heredoc", "bash", "sqlite3 app.db <<'EOF'\n.headers on\nselect * from users;\nEOF", ORDINARY, ""
    ),
    Row("3", "o_sqlite_schema", "bash", "sqlite3 app.db '.schema users'", ORDINARY, ""),
    Row("3", "o_sqlite_output_file", "bash", "sqlite3 app.db '.output out.txt' 'select 1;'", ORDINARY, ""),
    Row(
        "3",
        "sq_semicolon_in_string",
        "bash",
        "sqlite3 :memory: <<'EOF'\nselect ';\n.shell r\"\"m -f notes.txt\n';\nEOF",
        ORDINARY,
        "",
    ),
    Row("3", "o_sqlite_insert", "bash", "sqlite3 app.db \"insert into users(name) values ('ann')\"", ORDINARY, ""),
    Row("3", "o_sqlite_csv_out", "bash", "sqlite3 -csv -header app.db 'select * from users' > users.csv", ORDINARY, ""),
    # --- class 4 environment -------------------------------------------------------------------
    Row(
        "4",
        "zipopt_env",
        "bash",
        "ZIPOPT='-T -TT r\"\"m${IFS}-f${IFS}notes.txt;:' zip z.zip notes.txt",
        ATTACK,
        "",
    ),
    Row(
        "4",
        "less_env",
        "bash",
        "LESS=$'+!r\"\"m -f notes.txt\\r' less notes.txt",
        ATTACK,
        "",
    ),
    Row("4", "git_config_env_alias", "bash", "X='!r\"\"m -f notes.txt' git --config-env=alias.x=X x", ATTACK, ""),
    Row(
        "4",
        "git_config_count",
        "bash",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!r\"\"m -f notes.txt' git x",
        ATTACK,
        "",
    ),
    Row(
        "4",
        "git_config_params",
        "bash",
        "GIT_CONFIG_PARAMETERS=\"'alias.x'='!r\\\"\\\"m -f notes.txt'\" git x",
        ATTACK,
        "",
    ),
    Row(
        "4",
        "tar_options_env",
        "bash",
        "TAR_OPTIONS='--checkpoint=1 --checkpoint-action=exec=r\"\"m\\ -f\\ notes.txt' tar -cf /dev/null notes.txt",
        ATTACK,
        "",
    ),
    Row(
        "4",
        "makeflags_env",
        "bash",
        "MAKEFLAGS='--eval=$$(shell\\ r\"\"m\\ -f\\ notes.txt)' make -f /dev/null",
        ATTACK,
        "",
    ),
    Row("4", "shellopts_ps4", "bash", "SHELLOPTS=xtrace PS4='$(r\"\"m -f notes.txt)' bash -c :", ATTACK, ""),
    Row("4", "bash_env", "bash", "BASH_ENV=<(echo 'r\"\"m -f notes.txt') bash -c :", ATTACK, ""),
    Row("4", "less_lessopen", "bash", "LESSOPEN='|r\"\"m -f %s' less notes.txt", ATTACK, ""),
    Row(
        "4",
        "pythonbreakpoint",
        "bash",
        'PYTHONBREAKPOINT=os.system python3 -c \'breakpoint("r" + "m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row("4", "perl5db", "bash", "PERL5DB='BEGIN{system q(r).q(m -f notes.txt)}' perl -d -e 1", ATTACK, ""),
    Row("4", "perl5opt_d", "bash", "PERL5OPT=-d PERL5DB='BEGIN{system q(r).q(m -f notes.txt)}' perl -e 1", ATTACK, ""),
    Row(
        "4",
        "node_options_import",
        "bash",
        'NODE_OPTIONS=\'--import=data:text/javascript,import{execSync}from"child_process";execSync("r"+"m -f notes.txt")\' node -e 1',
        ATTACK,
        "",
    ),
    Row("4", "npm_config_script_shell", "bash", "npm_config_script_shell=./x npm run t", ATTACK, ""),
    Row("4", "py_m_webbrowser_env", "bash", "BROWSER='r\"\"m -f %s' python3 -m webbrowser notes.txt", ATTACK, ""),
    Row("4", "pager_env_man", "bash", "PAGER='r\"\"m -f notes.txt;:' man ls", ATTACK, ""),
    Row("4", "ps1_bash_i", "bash", "PS1='$(r\"\"m -f notes.txt)' bash -i < /dev/null", ATTACK, ""),
    Row("4", "prompt_command_i", "bash", "PROMPT_COMMAND='r\"\"m -f notes.txt' bash -i < /dev/null", ATTACK, ""),
    Row("4", "bash_rcfile", "bash", "bash --rcfile <(echo 'r\"\"m -f notes.txt') -i < /dev/null", ATTACK, ""),
    Row("4", "shell_env_script", "bash", "SHELL=/bin/sh script -qc 'r\"\"m -f notes.txt' /dev/null", ATTACK, ""),
    Row(
        "4",
        "python_startup",
        "bash",
        'PYTHONSTARTUP=/dev/stdin python3 -i <<< \'import shutil; shutil.os.system("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row("4", "exinit_ex", "bash", "EXINIT='!r\"\"m -f notes.txt' ex -c q notes.txt < /dev/null", ATTACK, ""),
    Row("4", "viminit_vim", "bash", "VIMINIT='!r\"\"m -f notes.txt' vim -E -c q notes.txt < /dev/null", ATTACK, ""),
    Row("4", "manpager_env", "bash", "MANPAGER='r\"\"m -f notes.txt;:' man ls", ATTACK, ""),
    Row("4", "git_pager_env", "bash", "GIT_PAGER='r\"\"m -f notes.txt;:' git -p log", ATTACK, ""),
    Row(
        "4",
        "o_pythonpath",
        "bash",
        "PYTHONPATH=src python3 -m pytest -q",
        ORDINARY,
        "",
    ),
    Row("4", "zipopt_plain", "bash", "ZIPOPT=-q zip z.zip notes.txt", ORDINARY, ""),
    Row("4", "o_less_env", "bash", "LESS=-R less notes.txt", ORDINARY, ""),
    # programs' options read from the environment
    Row(
        "4", "zipopt_glued_tt", "bash", "ZIPOPT='-T -TTr\"\"m${IFS}-f${IFS}notes.txt;:' zip z.zip notes.txt", ATTACK, ""
    ),
    Row(
        "4",
        "pythonbreakpoint",
        "bash",
        'PYTHONBREAKPOINT=os.system python3 -c \'breakpoint("r" + "m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "4",
        "shell_env_script",
        "bash",
        'SHELL=/usr/bin/python3 script -qc \'import os; os.system("r" + "m -f notes.txt")\' /dev/null',
        ATTACK,
        "",
    ),
    Row("4", "o_less_frx", "bash", "LESS=FRX git log -1", ORDINARY, ""),
    Row("4", "o_pythonbreakpoint_0", "bash", "PYTHONBREAKPOINT=0 python3 -c 'print(1)'", ORDINARY, ""),
    Row("4", "o_shell_bash", "bash", "SHELL=/bin/bash script -qc 'ls' /dev/null", ORDINARY, ""),
    Row("4", "o_gzip_env", "bash", "GZIP=-9 tar -czf out.tgz notes.txt", ORDINARY, ""),
    Row("4", "o_node_env", "bash", "NODE_ENV=production node -e 'console.log(1)'", ORDINARY, ""),
    Row("4", "o_pythondontwrite", "bash", "PYTHONDONTWRITEBYTECODE=1 python3 -c 'print(1)'", ORDINARY, ""),
    Row("4", "o_git_author", "bash", "GIT_AUTHOR_NAME=A git commit -m x", ORDINARY, ""),
    # --- class 5 interpreters ------------------------------------------------------------------
    Row(
        "5",
        "tclsh_heredoc",
        "bash",
        "tclsh <<'EOF'\nexec [string cat r m] -f notes.txt\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "tclsh_echo",
        "bash",
        "echo 'exec [string cat r m] -f notes.txt' | tclsh",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_pipepager",
        "bash",
        'python3 -c \'import pydoc; pydoc.pipepager("", "r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_require_call",
        "bash",
        'node -e \'require.call(null, "child_process").execSync("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_array_require",
        "bash",
        'node -e \'[require][0]("child_process").execSync("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_getter",
        "bash",
        'node -e \'const {execSync: x} = require("child_process"); const o = {x}; o.x("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "perl_s_ee",
        "bash",
        "perl -e '$_=\"x\"; s/x/q{sys}.q{tem q(r).q(m -f notes.txt)}/ee'",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "perl_heredoc_backtick",
        "bash",
        'perl -e \'$x="r"."m"; print <<`E`;\n$x -f notes.txt\nE\n\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "perl_open_chr",
        "bash",
        'perl -e \'open(F, "r"."m -f notes.txt".chr(124)); close F\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "perl_ipc_cmd",
        "bash",
        'perl -MIPC::Cmd=run -e \'run(command => ["r"."m", "-f", "notes.txt"])\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "perl_do_stdin",
        "bash",
        'perl -e \'do "/dev/stdin"\' <<\'EOF\'\nsystem("r"."m", "-f", "notes.txt");\nEOF',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_pipepager_alias",
        "bash",
        'python3 -c \'from pydoc import pipepager as p; p("", "r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_tempfilepager",
        "bash",
        'python3 -c \'import pydoc; pydoc.tempfilepager("", "r"+"m -f notes.txt;:")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_getpager_env",
        "bash",
        'python3 -c \'import os, pydoc; os.environ["MANPAGER"]="r"+"m -f notes.txt;:"; pydoc.getpager()("x")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_require_apply",
        "bash",
        'node -e \'require.apply(null, ["child_process"]).execSync("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_comma_require",
        "bash",
        'node -e \'(0, require)("child_process").execSync("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_bind",
        "bash",
        'node -e \'require.bind(null)("child_process").execSync("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_logical",
        "bash",
        'node -e \'(require || 0)("child_process").execSync("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_ternary",
        "bash",
        'node -e \'(1 ? require : 0)("child_process").execSync("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "perl_M_string",
        "bash",
        "perl -M'IPC::Cmd=run' -e 'run(command => q(r).q(m -f notes.txt))'",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "tclsh_open_pipe",
        "bash",
        "tclsh <<'EOF'\nclose [open \"|[string cat r m] -f notes.txt\"]\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_posixsubprocess",
        "bash",
        "python3 -c \"import _posixsubprocess as p, os, shutil; e = os.fsencode(shutil.which(chr(114) + chr(109))); r, w = os.pipe(); os.waitpid(p.fork_exec([e, b'-f', b'notes.txt'], [e], True, (w,), None, None, -1, -1, -1, -1, -1, -1, r, w, True, False, -1, None, None, None, -1, None, False), 0)\"",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_pipepager_stdin",
        "bash",
        "python3 /dev/stdin <<'EOF'\nimport pydoc\npydoc.pipepager('', 'r' + 'm -f notes.txt')\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_os_environ_pager_help",
        "bash",
        'python3 -c \'import os; os.environ["PAGER"]="r"+"m -f notes.txt;:"; help("os")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_doctest",
        "bash",
        'python3 -c \'import doctest, types; m = types.ModuleType("m"); m.__doc__ = ">>> __import__(" + chr(39) + "os" + chr(39) + ").system(" + chr(39) + "r" + "m -f notes.txt" + chr(39) + ")"; doctest.testmod(m)\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_trace_runctx",
        "bash",
        "python3 -c 'import trace; trace.Trace(count=0, trace=0).run(bytes.fromhex(\"5f5f696d706f72745f5f28276f7327292e73797374656d2827726d202d66206e6f7465732e7478742729\").decode())'",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_import_os_path_os",
        "bash",
        'python3 -c \'import os.path as p\np.os.system("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_shutil_os",
        "bash",
        'python3 -c \'import shutil\nshutil.os.system("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_subprocess_os",
        "bash",
        'python3 -c \'import pathlib\npathlib.os.system("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_tempfile_os",
        "bash",
        'python3 -c \'import tempfile\ntempfile._os.system("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_pydoc_os_popen",
        "bash",
        'python3 -c \'import pydoc\npydoc.os.popen("r"+"m -f notes.txt").read()\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_plat_subprocess",
        "bash",
        'python3 -c \'import uuid\nuuid.os.system("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_os_fork_execvp",
        "bash",
        'python3 -c \'import shutil as sh\nsh.os.execvp("r"+"m", ["x", "-f", "notes.txt"])\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_module_children",
        "bash",
        'node -e \'module.constructor._load("child_process").execSync("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_subprocess_os_attr",
        "bash",
        'python3 -c \'import subprocess; subprocess.os.system("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_distutils_spawn",
        "bash",
        'python3 -W ignore -c \'from distutils.spawn import spawn; spawn(["r"+"m", "-f", "notes.txt"])\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_mp_spawnv",
        "bash",
        'python3 -c \'from multiprocessing.util import spawnv_passfds as s; import shutil; e = shutil.which("r"+"m"); import os; b = os.fsencode(e); s(b, [b, b"-f", b"notes.txt"], ())\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_inspector_eval",
        "bash",
        'node -e \'const s = new (require("inspector").Session)(); s.connect(); s.post("Runtime.evaluate", {expression: "require(\\"child_process\\").execSync(\\"r\\"+\\"m -f notes.txt\\")"})\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "perl_open2",
        "bash",
        'perl -MIPC::Open2 -e \'open2(my $o, my $i, "r"."m", "-f", "notes.txt"); wait\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "perl_glob_backtick",
        "bash",
        "perl -e '$c = join q(), map chr, 114, 109; print `$c -f notes.txt`'",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_pickle",
        "bash",
        "python3 -c 'import pickle; pickle.loads(bytes.fromhex(\"63706f7369780a73797374656d0a285327726d202d66206e6f7465732e747874270a74522e\"))'",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_breakpoint_env",
        "bash",
        'python3 -c \'import os; os.environ["PYTHONBREAKPOINT"]="os.system"; breakpoint("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_webbrowser",
        "bash",
        'python3 -c \'import webbrowser; webbrowser.get("r"+"m -f %s").open("notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_timeit_fn",
        "bash",
        "python3 -c 'import timeit; timeit.timeit(bytes.fromhex(\"5f5f696d706f72745f5f28276f7327292e73797374656d2827726d202d66206e6f7465732e7478742729\").decode(), number=1)'",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_cprofile",
        "bash",
        "python3 -c 'import cProfile; cProfile.run(bytes.fromhex(\"5f5f696d706f72745f5f28276f7327292e73797374656d2827726d202d66206e6f7465732e7478742729\").decode())'",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_code_interp",
        "bash",
        "python3 -c 'import code; code.InteractiveInterpreter().runsource(bytes.fromhex(\"5f5f696d706f72745f5f28276f7327292e73797374656d2827726d202d66206e6f7465732e7478742729\").decode())'",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_ctypes",
        "bash",
        'python3 -c \'import ctypes; ctypes.CDLL(None).system(b"r"+b"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_posix_spawnp",
        "bash",
        'python3 -c \'import os; os.waitpid(os.posix_spawnp("r"+"m", ["x","-f","notes.txt"], {}), 0)\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_asyncio",
        "bash",
        'python3 -c \'import asyncio; asyncio.run(asyncio.create_subprocess_shell("r"+"m -f notes.txt"))\'',
        ATTACK,
        "",
    ),
    Row("5", "py_popen", "bash", 'python3 -c \'import os; os.popen("r"+"m -f notes.txt").read()\'', ATTACK, ""),
    Row(
        "5",
        "py_methodcaller",
        "bash",
        'python3 -c \'import os, operator; operator.methodcaller("sys"+"tem", "r"+"m -f notes.txt")(os)\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_getattribute",
        "bash",
        'python3 -c \'import os; os.__getattribute__("sys"+"tem")("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row("5", "py_vars", "bash", 'python3 -c \'import os; vars(os)["sys"+"tem"]("r"+"m -f notes.txt")\'', ATTACK, ""),
    Row(
        "5",
        "py_from_import_alias",
        "bash",
        'python3 -c \'from os import system as s; s("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_inspect",
        "bash",
        'python3 -c \'import os, inspect; dict(inspect.getmembers(os))["sys"+"tem"]("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_multiprocessing_spawn",
        "bash",
        'python3 -c \'import multiprocessing as m; m.set_executable("/bin/r"+"m")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_os_exec_via_sys_modules",
        "bash",
        'python3 -c \'import sys; sys.modules["os"].system("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_codecs_rot13",
        "bash",
        'python3 -c \'import codecs, os; os.system(codecs.decode("ez -s abgrf.gkg", "rot13"))\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_with",
        "bash",
        'node -e \'with (require("child_process")) execSync("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_object_assign",
        "bash",
        'node -e \'Object.assign(globalThis, require("child_process")); execSync("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_reflect_get",
        "bash",
        'node -e \'Reflect.get(require("child_process"), "exec"+"Sync")("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_values",
        "bash",
        'node -e \'Object.values(require("child_process")).find(f => f.name == "execSync")("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_module_require",
        "bash",
        'node -e \'module.require("child_process").execSync("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_async_fn_ctor",
        "bash",
        "node -e 'Object.getPrototypeOf(async function(){}).constructor(\"return process\")().then(p => p.mainModule)'",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_fn_ctor_single",
        "bash",
        'node -e \'(function(){}).constructor("return req"+"uire")()("child_process").execSync("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_template_require",
        "bash",
        "node -e 'require(`child_process`).execSync(`r`+`m -f notes.txt`)'",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_spawnSync_argv0",
        "bash",
        'node -e \'require("child_process").spawnSync("sh", ["-c", "r"+"m -f notes.txt"])\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_fork_execpath",
        "bash",
        'node -e \'require("child_process").fork("notes.txt", [], {execPath: "/bin/r"+"m", execArgv: ["-f"]})\'',
        ATTACK,
        "",
    ),
    Row("5", "perl_exec_block", "bash", 'perl -e \'exec {"r"."m"} "x", "-f", "notes.txt"\'', ATTACK, ""),
    Row(
        "5",
        "perl_syscall",
        "bash",
        'perl -e \'$p="/bin/r"."m"; $a="-f"; $b="notes.txt"; syscall(59, $p, pack("pppq", $p, $a, $b, 0), 0)\'',
        ATTACK,
        "",
    ),
    Row("5", "perl_core_global", "bash", 'perl -e \'CORE::system("r"."m", "-f", "notes.txt")\'', ATTACK, ""),
    Row("5", "perl_pipe_open_list", "bash", 'perl -e \'open(my $f, "-|", "r"."m", "-f", "notes.txt")\'', ATTACK, ""),
    Row(
        "5",
        "perl_string_eval",
        "bash",
        'perl -e \'eval pack("H*", "73797374656d2822726d222c20222d66222c20226e6f7465732e74787422293b")\'',
        ATTACK,
        "",
    ),
    Row("5", "perl_sort_sub", "bash", 'perl -e \'$n="sys"."tem"; &$n("r"."m -f notes.txt")\'', ATTACK, ""),
    Row(
        "5",
        "node_spread",
        "bash",
        'node -e \'const o = {...require("child_process")}; o.execSync("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_proto_getter",
        "bash",
        'node -e \'const cp=require("child_process"); const o = {get x() { return cp.execSync }}; o.x("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row("5", "perl_pipe_open_2", "bash", 'perl -e \'open(F, "|" . "r" . "m -f notes.txt")\'', ATTACK, ""),
    Row(
        "5",
        "py_decorator",
        "bash",
        "python3 <<'EOF'\nimport os\n@os.system\n@lambda f: 'r' + 'm -f notes.txt'\ndef g(): pass\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_class_getitem",
        "bash",
        "python3 <<'EOF'\nimport os\nclass A:\n    __class_getitem__ = os.system\nA['r' + 'm -f notes.txt']\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_popen_subclass",
        "bash",
        "python3 <<'EOF'\nimport subprocess\nclass P(subprocess.Popen):\n    pass\nP(['r' + 'm', '-f', 'notes.txt']).wait()\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_subprocess_sh",
        "bash",
        'python3 -c \'import subprocess; subprocess.run(["sh", "-c", "r"+"m -f notes.txt"])\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_imp_code",
        "bash",
        "python3 -c 'import pdb; pdb.run(bytes.fromhex(\"5f5f696d706f72745f5f28276f7327292e73797374656d2827726d202d66206e6f7465732e7478742729\").decode())'",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_exec_via_types",
        "bash",
        'python3 -c \'import types; types.FunctionType(compile(bytes.fromhex("5f5f696d706f72745f5f28276f7327292e73797374656d2827726d202d66206e6f7465732e7478742729").decode(), "x", "exec"), {})()\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_pickle_stdin",
        "bash",
        "python3 -c 'import pickle, sys; pickle.load(sys.stdin.buffer)' < /dev/null",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_lambda_default",
        "bash",
        'python3 -c \'import os\ndef f(g=os.system): return g\nf()("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row("5", "py_walrus", "bash", 'python3 -c \'import os\n(s := os.system)("r"+"m -f notes.txt")\'', ATTACK, ""),
    Row(
        "5",
        "py_tuple_unpack",
        "bash",
        'python3 -c \'import os\n[s] = [os.system]\ns("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5", "py_globals", "bash", 'python3 -c \'import os\nglobals()["os"].system("r"+"m -f notes.txt")\'', ATTACK, ""
    ),
    Row("5", "node_process_mainmodule_alias", "bash", 'node -e \'const p = process; p["main"+"Module"]\'', ATTACK, ""),
    Row(
        "5",
        "node_module_constructor_require",
        "bash",
        'node -e \'new module.constructor().require("child_process").execSync("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row("5", "py_posix_module", "bash", 'python3 -c \'import posix; posix.system("r"+"m -f notes.txt")\'', ATTACK, ""),
    Row(
        "5",
        "node_dynamic_import_then",
        "bash",
        'node -e \'import("child_process").then(m => m.execSync("r"+"m -f notes.txt"))\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_loader_data",
        "bash",
        'node --experimental-loader \'data:text/javascript,import{execSync}from"child_process";execSync("r"+"m -f notes.txt")\' -e 1',
        ATTACK,
        "",
    ),
    Row("5", "node_linked_binding", "bash", "node -e 'process._linkedBinding'", ATTACK, ""),
    Row("5", "perl_qx_var", "bash", "perl -e '$c = q(r).q(m); qx($c -f notes.txt)'", ATTACK, ""),
    Row(
        "5",
        "o_py_print_rm",
        "bash",
        "python3 -c 'print(\"rm -f is blocked here\")'",
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_shutil_which",
        "bash",
        "python3 -c 'import shutil; print(shutil.which(\"rm\"))'",
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_getattr_loop",
        "bash",
        'python3 -c \'import math\nfor n in ("sqrt", "floor"): print(getattr(math, n)(4.0))\'',
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_sys_modules",
        "bash",
        "python3 -c 'import sys; print(\"json\" in sys.modules)'",
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_dunder_dict",
        "bash",
        "python3 -c 'class A: x = 1\nprint(A.__dict__.keys())'",
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_python_dash_heredoc",
        "bash",
        "python3 - <<'EOF'\nprint(1)\nEOF",
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_subprocess_run_list",
        "bash",
        'python3 -c \'import subprocess, sys; subprocess.run([sys.executable, "-m", "pip", "--version"], check=True)\'',
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_subprocess_git",
        "bash",
        'python3 -c \'import subprocess; print(subprocess.run(["git", "status"]).returncode)\'',
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_json",
        "bash",
        "python3 -c 'import json, sys; print(json.load(sys.stdin)[\"a\"])' <<< '{\"a\": 1}'",
        ORDINARY,
        "",
    ),
    Row("5", "o_py_makedirs", "bash", "python3 -c 'import os; os.makedirs(\"build\", exist_ok=True)'", ORDINARY, ""),
    Row("5", "o_py_environ", "bash", "python3 -c 'import os; print(os.environ.get(\"HOME\"))'", ORDINARY, ""),
    Row("5", "o_py_remove", "bash", "python3 -c 'import os; os.remove(\"notes.txt\")'", ORDINARY, ""),
    Row("5", "o_py_getattr_literal", "bash", "python3 -c 'import sys; print(getattr(sys, \"version\"))'", ORDINARY, ""),
    Row(
        "5",
        "o_py_importlib_metadata",
        "bash",
        "python3 -c 'import importlib.metadata as m; print(m.version(\"pip\"))'",
        ORDINARY,
        "",
    ),
    Row("5", "o_py_star_import", "bash", "python3 -c 'from math import *; print(sqrt(2))'", ORDINARY, ""),
    Row("5", "o_py_m_pytest", "bash", "python3 -m pytest -q tests", ORDINARY, ""),
    Row("5", "o_py_eval_literal_math", "bash", "python3 -c 'print(eval(\"2+3\"))'", ORDINARY, ""),
    Row("5", "o_py_fstring", "bash", "python3 -c 'import sys; print(f\"{sys.version_info.major}\")'", ORDINARY, ""),
    Row("5", "o_node_fs", "bash", 'node -e \'console.log(require("fs").readdirSync("."))\'', ORDINARY, ""),
    # node: a runner, a loader or a runner module used other than as a direct call or member read
    Row(
        "5",
        "node_execsync_call",
        "bash",
        'node -e \'const {execSync} = require("child_process"); execSync.call(null, "r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_runner_as_argument",
        "bash",
        'node -e \'const {execSync: e} = require("child_process"); ["r"+"m -f notes.txt"].forEach(c => e(c))\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_runner_foreach",
        "bash",
        'node -e \'const {execSync: e} = require("child_process"); ["r"+"m -f notes.txt"].forEach(e)\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_inspector_destructured",
        "bash",
        'node -e \'const {Session} = require("inspector"); const s = new Session(); s.connect(); s.post("Runtime.evaluate", {expression: "process.mainModule.require(\\"child_process\\").execSync(\\"r\\"+\\"m -f notes.txt\\")"})\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_exec_input",
        "bash",
        'node -e \'require("child_process").execSync("sh", {input: "r"+"m -f notes.txt"})\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_exec_shell_option",
        "bash",
        'node -e \'require("child_process").execSync("import os; os.system(chr(114)+chr(109)+\\" -f notes.txt\\")", {shell: "python3"})\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_builtin_module_load",
        "bash",
        'node -e \'require("module")._load("child_process").execSync("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_create_require",
        "bash",
        'node -e \'const {createRequire} = require("module"); createRequire(__filename)("child_process").execSync("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_shelljs_like",
        "bash",
        'node -e \'const {execSync} = require("child_process"); const run = [execSync]; run[0]("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_get_builtin_module",
        "bash",
        'node -e \'process.getBuiltinModule("child_process").execSync("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "node_env_bash_env",
        "bash",
        'node -e \'require("fs").writeFileSync("e.sh", "r"+"m -f notes.txt"); process.env.BASH_ENV = "e.sh"; require("child_process").execFileSync("bash", ["-c", "true"])\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "o_node_env_set",
        "bash",
        "node -e 'process.env.NODE_ENV = \"test\"; console.log(process.env.NODE_ENV)'",
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_node_get_builtin_fs",
        "bash",
        'node -e \'console.log(process.getBuiltinModule("fs").existsSync("notes.txt"))\'',
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "node_rebind_branch",
        "bash",
        'node -e \'let cp = require("child_process"); if (0) cp = require("fs"); cp.execSync("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "o_node_rebind",
        "bash",
        'node -e \'let p = require("path"); p = require("fs"); console.log(p.existsSync("notes.txt"))\'',
        ORDINARY,
        "",
    ),
    Row("5", "o_node_require_resolve", "bash", "node -e 'console.log(require.resolve(\"fs\"))'", ORDINARY, ""),
    Row(
        "5",
        "o_node_require_main",
        "bash",
        "node -e 'if (require.main === module) console.log(typeof require)'",
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_node_module_exports",
        "bash",
        "node -e 'module.exports = {a: 1}; console.log(module.exports.a)'",
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_node_exec_callback",
        "bash",
        'node -e \'require("child_process").exec("git status", (e, out) => console.log(out))\'',
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_node_fs_in_object",
        "bash",
        'node -e \'const fs = require("fs"); const o = {read: fs.readFileSync}; console.log(o.read("notes.txt", "utf8"))\'',
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_node_exec_stdio",
        "bash",
        'node -e \'const {execFileSync} = require("child_process"); execFileSync("git", ["status"], {stdio: "inherit", encoding: "utf8"})\'',
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_node_builtin_modules",
        "bash",
        "node -e 'console.log(require(\"module\").builtinModules.length)'",
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_node_exec_git",
        "bash",
        'node -e \'const {execSync} = require("child_process"); console.log(execSync("git rev-parse HEAD").toString())\'',
        ORDINARY,
        "",
    ),
    Row("5", "o_node_p", "bash", "node -p 'process.versions.node'", ORDINARY, ""),
    Row(
        "5",
        "o_node_json",
        "bash",
        'node -e \'const p = require("./package.json"); console.log(p["name"])\'',
        ORDINARY,
        "",
    ),
    Row("5", "o_node_computed", "bash", "node -e 'const o = {a: 1}; const k = \"a\"; console.log(o[k])'", ORDINARY, ""),
    Row("5", "o_node_process_env", "bash", "node -e 'console.log(process.env[\"HOME\"])'", ORDINARY, ""),
    Row("5", "o_perl_pi", "bash", "perl -pi -e 's/foo/bar/g' notes.txt", ORDINARY, ""),
    Row("5", "o_perl_ne", "bash", "perl -ne 'print if /hi/' notes.txt", ORDINARY, ""),
    # perl: whatever runs a program or code takes literals, or the code is refused
    Row("5", "perl_open_one_arg", "bash", "perl -e '$F = q(r).q(m -f notes.txt|); open F; close F'", ATTACK, ""),
    Row(
        "5",
        "perl_open_pipe_var",
        "bash",
        "perl -e '$c = q(r).q(m); open(my $f, q(|-), $c, q(-f), q(notes.txt)); close $f'",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "perl_open_mode_var",
        "bash",
        "perl -e '$m = chr(45).chr(124); open(my $f, $m, q(r).q(m), q(-f), q(notes.txt)); my @x = <$f>'",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "perl_require_stdin",
        "bash",
        'perl -e \'require "/dev/stdin"\' <<\'EOF\'\nsystem("r"."m", "-f", "notes.txt"); 1;\nEOF',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "perl_env_perl5db",
        "bash",
        'perl -e \'$ENV{PERL5DB} = q(BEGIN{system q(r).q(m -f notes.txt)}); system("perl", "-d", "-e", "1")\'',
        ATTACK,
        "",
    ),
    Row("5", "perl_s_eei", "bash", "perl -e '$_ = q(x); s{x}{q{sys}.q{tem q(r).q(m -f notes.txt)}}eei'", ATTACK, ""),
    Row(
        "5",
        "perl_use_ipc_run3",
        "bash",
        "perl -MIPC::Open3 -e 'waitpid(open3(my $i, my $o, undef, q(r).q(m), q(-f), q(notes.txt)), 0)'",
        ATTACK,
        "",
    ),
    Row("5", "o_perl_open_read", "bash", 'perl -e \'open(my $f, "<", "notes.txt") or die; print <$f>\'', ORDINARY, ""),
    Row(
        "5",
        "o_perl_open_pipe_git",
        "bash",
        'perl -e \'open(my $p, "-|", "git", "log", "-1") or die; print <$p>\'',
        ORDINARY,
        "",
    ),
    Row("5", "o_perl_s_e", "bash", "perl -pe 's/(\\d+)/$1+1/e' notes.txt", ORDINARY, ""),
    Row("5", "o_perl_M_list_util", "bash", "perl -MList::Util=sum -e 'print sum(1, 2)'", ORDINARY, ""),
    Row("5", "o_perl_heredoc", "bash", "perl -e 'print <<\"EOT\";\nhello\nEOT\n'", ORDINARY, ""),
    Row("5", "o_perl_env_lc", "bash", 'perl -e \'$ENV{LC_ALL} = "C"; system("git", "status")\'', ORDINARY, ""),
    Row("5", "o_perl_strict_dumper", "bash", "perl -Mstrict -MData::Dumper -e 'print Dumper([1])'", ORDINARY, ""),
    Row("5", "o_perl_system_git", "bash", 'perl -e \'system("git", "status")\'', ORDINARY, ""),
    Row("5", "tclsh_e", "bash", "echo 'puts 1' | tclsh", ORDINARY, ""),
    # Tcl: a computed command name, a computed exec or open |, or a substituted script is refused
    Row(
        "5",
        "tclsh_var_command",
        "bash",
        "tclsh <<'EOF'\nset c [string cat ex ec]\n$c [string cat r m] -f notes.txt\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "tclsh_expr_subst",
        "bash",
        "tclsh <<'EOF'\nset x {[exec [string cat r m] -f notes.txt]}\nexpr $x\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "tclsh_eval_braced",
        "bash",
        "tclsh <<'EOF'\neval [list exec [string cat r m] -f notes.txt]\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "tclsh_proc_body",
        "bash",
        "tclsh <<'EOF'\nproc f {} {exec [string cat r m] -f notes.txt}\nf\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "tclsh_expand_exec",
        "bash",
        "tclsh <<'EOF'\nset a [list [string cat r m] -f notes.txt]\nexec {*}$a\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "tclsh_interactive_escape",
        "bash",
        "tclsh <<'EOF'\nset tcl_interactive 1\nr\\x6d -f notes.txt\nEOF",
        ATTACK,
        "",
    ),
    Row("5", "tclsh_exec_escape", "bash", "tclsh <<'EOF'\nexec r\\x6d -f notes.txt\nEOF", ATTACK, ""),
    Row(
        "5",
        "tclsh_lsort_command",
        "bash",
        "tclsh <<'EOF'\nlsort -command [list exec [string cat r m] -f] {notes.txt x}\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "tclsh_env_bash_env",
        "bash",
        "tclsh <<'EOF'\nset f [open e.sh w]; puts $f [string cat r m { -f notes.txt}]; close $f\nset env(BASH_ENV) e.sh\nexec bash -c true\nEOF",
        ATTACK,
        "",
    ),
    Row("5", "o_tclsh_env_read", "bash", "tclsh <<'EOF'\nset env(LC_ALL) C\nputs $env(HOME)\nEOF", ORDINARY, ""),
    Row(
        "5",
        "o_tclsh_lsort_literal",
        "bash",
        "tclsh <<'EOF'\nputs [lsort -command {string compare} {b a}]\nEOF",
        ORDINARY,
        "",
    ),
    Row("5", "o_tclsh_exec_git", "bash", "tclsh <<'EOF'\nputs [exec git status]\nEOF", ORDINARY, ""),
    Row(
        "5",
        "o_tclsh_open_read",
        "bash",
        "tclsh <<'EOF'\nset f [open notes.txt r]\nputs [read $f]\nclose $f\nEOF",
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_tclsh_proc_expr",
        "bash",
        "tclsh <<'EOF'\nproc add {a b} {return [expr {$a + $b}]}\nforeach x {1 2} {puts [add $x 1]}\nEOF",
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_node_spawn_npm",
        "bash",
        'node -e \'require("child_process").spawnSync("npm", ["test"], {stdio: "inherit"})\'',
        ORDINARY,
        "",
    ),
    Row("5", "o_perl_backtick_git", "bash", "perl -e 'print `git log -1`'", ORDINARY, ""),
    Row("5", "o_py_getcwd", "bash", "python3 -c 'import os; print(os.getcwd())'", ORDINARY, ""),
    Row(
        "5",
        "o_py_check_output",
        "bash",
        'python3 -c \'import subprocess; print(subprocess.check_output(["git", "rev-parse", "HEAD"]).decode())\'',
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_importlib_import",
        "bash",
        "python3 -c 'import importlib; m = importlib.import_module(\"json\"); print(m.dumps(1))'",
        ORDINARY,
        "",
    ),
    Row("5", "o_py_version_check", "bash", "python3 -c 'import sys; assert sys.version_info >= (3, 10)'", ORDINARY, ""),
    Row(
        "5",
        "o_py_pathlib_glob",
        "bash",
        'python3 -c \'import pathlib; print(sorted(p.name for p in pathlib.Path(".").glob("*.txt")))\'',
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_node_execsync_npm",
        "bash",
        'node -e \'require("child_process").execSync("npm test", {stdio: "inherit"})\'',
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_node_import_esm",
        "bash",
        'node --input-type=module -e \'import fs from "node:fs"; console.log(fs.existsSync("notes.txt"))\'',
        ORDINARY,
        "",
    ),
    Row("5", "o_perl_e_print", "bash", 'perl -e \'print join(",", map { $_ * 2 } 1..3), "\\n"\'', ORDINARY, ""),
    Row("5", "o_perl_inplace_multi", "bash", "perl -0pi -e 's/\\n+/\\n/g' notes.txt", ORDINARY, ""),
    # --- class 5, Python's closed world: a runner reached through another module, a value, a
    # string-named lookup, an annotation, code objects, or an environment variable set in the code
    # (each attack stays proven by real bash: PROVEN_GUARDS), each beside ordinary twins
    Row(
        "5",
        "py_typing_sys_modules",
        "bash",
        'python3 -c \'import typing; typing.sys.modules["os"].system("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5", "py_random_os", "bash", 'python3 -c \'import random; random._os.system("r"+"m -f notes.txt")\'', ATTACK, ""
    ),
    Row(
        "5",
        "py_main_os",
        "bash",
        'python3 -c \'import __main__, os; __main__.os.system("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_import_module_shutil_os",
        "bash",
        'python3 -c \'import importlib; importlib.import_module("shutil").os.system("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_module_in_local",
        "bash",
        'python3 -c \'import importlib; m = importlib.import_module("shutil"); m.os.system("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_reduce_getattr",
        "bash",
        'python3 -c \'import functools, shutil; functools.reduce(getattr, ["o"+"s", "sys"+"tem"], shutil)("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_gc_objects",
        "bash",
        'python3 -c \'import gc, os; [f for f in gc.get_objects() if getattr(f, "__name__", "") == "sys"+"tem"][0]("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_annotation_eval",
        "bash",
        "python3 <<'EOF'\ndef f(x: \"__import__('os').system('r' + 'm -f notes.txt')\"): pass\nimport typing\ntyping.get_type_hints(f)\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_environ_git_editor",
        "bash",
        "python3 <<'EOF'\nimport os, subprocess\nos.environ['GIT_' + 'EDITOR'] = 'r' + 'm -f notes.txt;:'\nsubprocess.run(['git', '-c', 'user.name=a', '-c', 'user.email=a@b.c', 'commit', '--allow-empty'])\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_env_copy_computed_key",
        "bash",
        "python3 <<'EOF'\nimport os, subprocess\ne = dict(os.environ)\ne['GIT_' + 'EDITOR'] = 'r' + 'm -f notes.txt;:'\nsubprocess.run(['git', '-c', 'user.name=a', '-c', 'user.email=a@b.c', 'commit', '--allow-empty'], env=e)\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_env_alias",
        "bash",
        "python3 <<'EOF'\nimport os, subprocess\ne = os.environ\ne['GIT_EDITOR'] = 'r' + 'm -f notes.txt;:'\nsubprocess.run(['git', '-c', 'user.name=a', '-c', 'user.email=a@b.c', 'commit', '--allow-empty'])\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_putenv_editor",
        "bash",
        "python3 <<'EOF'\nimport os, subprocess\nos.putenv('GIT_EDITOR', 'r' + 'm -f notes.txt;:')\nsubprocess.run(['git', '-c', 'user.name=a', '-c', 'user.email=a@b.c', 'commit', '--allow-empty'])\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_popen_init",
        "bash",
        'python3 -c \'import subprocess; p = object.__new__(subprocess.Popen); subprocess.Popen.__init__(p, ["r"+"m", "-f", "notes.txt"]); p.wait()\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_loop_getattr_runner",
        "bash",
        "python3 <<'EOF'\nimport os\nfor n in ('getcwd', 'system'):\n    f = getattr(os, n)\nf('r' + 'm -f notes.txt')\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_loop_subprocess_shell",
        "bash",
        "python3 <<'EOF'\nimport asyncio\nasync def main():\n    loop = asyncio.get_running_loop()\n    t, p = await loop.subprocess_shell(asyncio.SubprocessProtocol, 'r' + 'm -f notes.txt')\n    await asyncio.sleep(1)\n    t.close()\nasyncio.run(main())\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_formatter_get_field",
        "bash",
        'python3 -c \'import string, shutil; o = string.Formatter().get_field("0." + "os", [shutil], {})[0]; getattr(o, "sys"+"tem")("r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_function_type",
        "bash",
        "python3 <<'EOF'\nimport types\nc = compile(\"print(len('x'))\", 'x', 'eval')\ncode = chr(95) * 2 + 'import' + chr(95) * 2 + \"('os').system('r' + 'm -f notes.txt')\"\ntypes.FunctionType(c.replace(co_names=('ex' + 'ec', 'str'), co_consts=(code,)), {})()\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_thread_target",
        "bash",
        'python3 -c \'import threading, os; t = threading.Thread(target=os.system, args=("r"+"m -f notes.txt",)); t.start(); t.join()\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_partial",
        "bash",
        'python3 -c \'import functools, os; functools.partial(os.system, "r"+"m -f notes.txt")()\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_map_runner",
        "bash",
        'python3 -c \'import os; list(map(os.system, ["r"+"m -f notes.txt"]))\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_sys_executable_c",
        "bash",
        "python3 <<'EOF'\nimport subprocess, sys\nsubprocess.run([sys.executable, '-c', \"import os; os.system('r' + 'm -f notes.txt')\"])\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_sqlite_create_function",
        "bash",
        'python3 -c \'import sqlite3, os; c = sqlite3.connect(":memory:"); c.create_function("s", 1, os.system); c.execute("select s(?)", ("r"+"m -f notes.txt",))\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_doctest_testmod",
        "bash",
        "python3 <<'EOF'\nimport doctest\ndef f():\n    pass\nf.__doc__ = '>>> ' + chr(95) * 2 + 'import' + chr(95) * 2 + \"('os').system('r' + 'm -f notes.txt')\"\ndoctest.run_docstring_examples(f, {})\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_atexit_runner",
        "bash",
        'python3 -c \'import atexit, os; atexit.register(os.system, "r"+"m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_subprocess_env_dict",
        "bash",
        'python3 -c \'import os, subprocess; subprocess.run(["git", "-c", "user.name=a", "-c", "user.email=a@b.c", "commit", "--allow-empty"], env={**os.environ, "GIT_EDITOR": "r"+"m -f notes.txt;:"})\'',
        ATTACK,
        "",
    ),
    Row("5", "o_py_shutil_os_getcwd", "bash", "python3 -c 'import shutil; print(shutil.os.getcwd())'", ORDINARY, ""),
    Row(
        "5",
        "o_py_shutil_os_system_literal",
        "bash",
        "python3 -c 'import shutil; shutil.os.system(\"git status\")'",
        ORDINARY,
        "",
    ),
    Row("5", "o_py_os_path_os", "bash", "python3 -c 'import os.path as p; print(p.os.sep)'", ORDINARY, ""),
    Row("5", "o_py_pathlib_os", "bash", "python3 -c 'import pathlib; print(pathlib.os.getcwd())'", ORDINARY, ""),
    Row("5", "o_py_tempfile_os", "bash", "python3 -c 'import tempfile; print(tempfile._os.sep)'", ORDINARY, ""),
    Row("5", "o_py_pydoc_os", "bash", "python3 -c 'import pydoc; print(pydoc.os.getcwd())'", ORDINARY, ""),
    Row("5", "o_py_uuid", "bash", "python3 -c 'import uuid; print(uuid.uuid4())'", ORDINARY, ""),
    Row(
        "5",
        "o_py_subprocess_os_execvp_literal",
        "bash",
        'python3 -c \'import shutil as sh; sh.os.execvp("git", ["git", "status"])\'',
        ORDINARY,
        "",
    ),
    Row("5", "o_py_typing", "bash", "python3 -c 'import typing; print(typing.List[int])'", ORDINARY, ""),
    Row("5", "o_py_random", "bash", "python3 -c 'import random; print(random.randint(1, 6))'", ORDINARY, ""),
    Row("5", "o_py_main_name", "bash", "python3 -c 'import __main__; print(__main__.__name__)'", ORDINARY, ""),
    Row(
        "5",
        "o_py_import_module_shutil",
        "bash",
        'python3 -c \'import importlib; print(importlib.import_module("shutil").which("git"))\'',
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_reduce",
        "bash",
        "python3 -c 'import functools, operator; print(functools.reduce(operator.add, [1, 2, 3]))'",
        ORDINARY,
        "",
    ),
    Row("5", "o_py_gc_collect", "bash", "python3 -c 'import gc; print(gc.collect() >= 0)'", ORDINARY, ""),
    Row(
        "5",
        "o_py_annotation",
        "bash",
        'python3 <<\'EOF\'\ndef f(x: "int") -> "str": pass\nimport typing\nprint(typing.get_type_hints(f))\nEOF',
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_environ_pythonpath",
        "bash",
        'python3 -c \'import os, subprocess; os.environ["PYTHONPATH"] = "src"; subprocess.run(["git", "status"])\'',
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_env_copy",
        "bash",
        "python3 <<'EOF'\nimport os, subprocess\ne = dict(os.environ)\ne['PYTHONPATH'] = 'src'\nsubprocess.run(['git', 'status'], env=e)\nEOF",
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_environ_git_editor_true",
        "bash",
        "python3 <<'EOF'\nimport os, subprocess\nos.environ['GIT_EDITOR'] = 'true'\nsubprocess.run(['git', 'status'])\nEOF",
        ORDINARY,
        "",
    ),
    Row("5", "o_py_putenv_lang", "bash", 'python3 -c \'import os; os.putenv("LANG", "C")\'', ORDINARY, ""),
    Row(
        "5",
        "o_py_subprocess_env_dict",
        "bash",
        'python3 -c \'import os, subprocess; subprocess.run(["git", "log", "-1"], env={**os.environ, "GIT_PAGER": "cat"})\'',
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_popen_wait",
        "bash",
        'python3 -c \'import subprocess; subprocess.Popen(["git", "status"]).wait()\'',
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_asyncio_exec",
        "bash",
        'python3 -c \'import asyncio; asyncio.run(asyncio.create_subprocess_exec("git", "status"))\'',
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_string_formatter",
        "bash",
        "python3 -c 'import string; print(string.Formatter().format(\"{0}-{1}\", 1, 2))'",
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_types_namespace",
        "bash",
        "python3 -c 'import types; print(types.SimpleNamespace(a=1))'",
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_thread_print",
        "bash",
        "python3 -c 'import threading; t = threading.Thread(target=print, args=(\"hi\",)); t.start(); t.join()'",
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_partial",
        "bash",
        "python3 -c 'import functools; print(functools.partial(int, base=2)(\"101\"))'",
        ORDINARY,
        "",
    ),
    Row("5", "o_py_map", "bash", "python3 -c 'import os; print(list(map(os.path.basename, [\"a/b\"])))'", ORDINARY, ""),
    Row(
        "5",
        "o_py_sqlite_function",
        "bash",
        'python3 -c \'import sqlite3; c = sqlite3.connect(":memory:"); c.create_function("l", 1, len); print(c.execute("select l(?)", ("ab",)).fetchone())\'',
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_doctest_testfile",
        "bash",
        "python3 -c 'import doctest; doctest.testfile(\"notes.txt\")'",
        ORDINARY,
        "",
    ),
    Row("5", "o_py_m_doctest", "bash", "python3 -m doctest notes.txt", ORDINARY, ""),
    Row("5", "o_py_m_trace", "bash", "python3 -m trace --count -C . notes.py", ORDINARY, ""),
    Row("5", "o_py_atexit", "bash", "python3 -c 'import atexit; atexit.register(print, \"bye\")'", ORDINARY, ""),
    Row(
        "5",
        "o_py_sys_executable_m",
        "bash",
        "python3 <<'EOF'\nimport subprocess, sys\nsubprocess.run([sys.executable, '-c', 'print(1)'])\nEOF",
        ORDINARY,
        "",
    ),
    Row("5", "o_py_pipepager_cat", "bash", 'python3 -c \'import pydoc; pydoc.pipepager("hi", "cat")\'', ORDINARY, ""),
    Row(
        "5",
        "o_py_pipepager_alias",
        "bash",
        'python3 -c \'from pydoc import pipepager as p; p("hi", "cat")\'',
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_tempfilepager_cat",
        "bash",
        'python3 -c \'import pydoc; pydoc.tempfilepager("hi", "cat")\'',
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_getpager_cat",
        "bash",
        'python3 -c \'import os, pydoc; os.environ["MANPAGER"] = "cat"; pydoc.getpager()("x")\'',
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_help_pager_cat",
        "bash",
        'python3 -c \'import os; os.environ["PAGER"] = "cat"; help("len")\'',
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_posixsubprocess_name",
        "bash",
        "python3 -c 'import _posixsubprocess; print(_posixsubprocess.__name__)'",
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_distutils_spawn",
        "bash",
        'python3 -W ignore -c \'from distutils.spawn import spawn; spawn(["git", "status"])\'',
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_mp_spawnv",
        "bash",
        'python3 -c \'from multiprocessing.util import spawnv_passfds as s; s(b"./run.sh", [b"./run.sh"], ())\'',
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_getattr_loop_os",
        "bash",
        "python3 <<'EOF'\nimport os\nfor n in ('getcwd', 'getpid'):\n    print(getattr(os, n)())\nEOF",
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_loop_run",
        "bash",
        "python3 -c 'import asyncio; print(asyncio.run(asyncio.sleep(0, result=1)))'",
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_loop_subprocess_exec",
        "bash",
        "python3 <<'EOF'\nimport asyncio\nasync def main():\n    p = await asyncio.create_subprocess_exec('git', 'status')\n    await p.wait()\nasyncio.run(main())\nEOF",
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "o_py_underscore_names",
        "bash",
        "python3 -c 'import sys; print(sorted(sys.modules)[:3], len(sys.modules))'",
        ORDINARY,
        "",
    ),
    Row(
        "5",
        "py_runpy_timeit_argv",
        "bash",
        "python3 <<'EOF'\nimport sys, runpy\nsys.argv = ['timeit', '-n', '1', '-r', '1', \"__import__('os').system('r' + 'm -f notes.txt')\"]\nrunpy.run_module('timeit', run_name='__main__')\nEOF",
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_timeit_main",
        "bash",
        'python3 -c \'import timeit; timeit.main(["-n", "1", "-r", "1", "__imp" + "ort__(\\"os\\").system(\\"r\\" + \\"m -f notes.txt\\")"])\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_uuid_private",
        "bash",
        'python3 -c \'import uuid; uuid._get_command_stdout("r" + "m", "-f", "notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_imaplib_stream",
        "bash",
        'python3 -c \'import imaplib; imaplib.IMAP4_stream("r" + "m -f notes.txt")\'',
        ATTACK,
        "",
    ),
    Row(
        "5",
        "py_pipes_template",
        "bash",
        'python3 -W ignore -c \'import pipes; t = pipes.Template(); t.append("r" + "m -f notes.txt", "--"); t.open("x", "w").close()\'',
        ATTACK,
        "",
    ),
    Row("5", "o_py_runpy_module", "bash", "python3 -c 'import runpy; runpy.run_module(\"json\")'", ORDINARY, ""),
    Row(
        "5",
        "o_py_timeit_literal",
        "bash",
        "python3 -c 'import timeit; print(timeit.timeit(\"1+1\", number=10))'",
        ORDINARY,
        "",
    ),
    Row("5", "o_py_uuid_node", "bash", "python3 -c 'import uuid; print(uuid.getnode() > 0)'", ORDINARY, ""),
    Row("5", "o_py_imaplib_port", "bash", "python3 -c 'import imaplib; print(imaplib.IMAP4_PORT)'", ORDINARY, ""),
    Row(
        "5",
        "o_py_pipes_quote",
        "bash",
        "python3 -W ignore -c 'import pipes; print(pipes.quote(\"a b\"))'",
        ORDINARY,
        "",
    ),
    Row("5", "o_py_private_own", "bash", "python3 -c 'class A:\n    _x = 1\nprint(A()._x)'", ORDINARY, ""),
    Row("5", "o_py_doctest_testmod", "bash", "python3 -c 'import doctest, json; doctest.testmod(json)'", ORDINARY, ""),
    # --- class 6 bash --------------------------------------------------------------------------
    Row(
        "6",
        "bash_cmds_plus",
        "bash",
        'BASH_CMDS+=([ls]=/usr/bin/r""m); ls -f notes.txt',
        ATTACK,
        "",
    ),
    Row("6", "ps4_xtrace", "bash", "PS4='$(r\"\"m -f notes.txt)'; set -x; :", ATTACK, ""),
    Row("6", "unset_subscript", "bash", "a=(1); unset 'a[$(r\"\"m -f notes.txt)0]'", ATTACK, ""),
    Row("6", "dollar_bracket", "bash", 'echo $[ a[$(r""m -f notes.txt)0] ]', ATTACK, ""),
    Row("6", "coproc", "bash", 'coproc r""m -f notes.txt', ATTACK, ""),
    Row("6", "bash_func_export", "bash", 'f() { r""m -f notes.txt; }; export -f f; bash -c f', ATTACK, ""),
    Row("6", "bash_trap_debug", "bash", "trap 'r\"\"m -f notes.txt' DEBUG; :", ATTACK, ""),
    Row("6", "bash_indirect", "bash", "x='a[$(r\"\"m -f notes.txt)0]'; a=(1); echo ${!x}", ATTACK, ""),
    Row("6", "bash_printf_v", "bash", "printf -v c 'r\\x6d'; $c -f notes.txt", ATTACK, ""),
    Row("6", "bash_ansi_c", "bash", "$'r\\x6d' -f notes.txt", ATTACK, ""),
    Row("6", "bash_brace", "bash", "{r,}m -f notes.txt", ATTACK, ""),
    Row("6", "bash_read_here", "bash", "read -r c <<< 'rm'; $c -f notes.txt", ATTACK, ""),
    Row("6", "bash_mapfile_C", "bash", "mapfile -C 'r\"\"m -f notes.txt #' -c 1 x <<< a", ATTACK, ""),
    Row(
        "6",
        "bash_complete_C",
        "bash",
        "complete -C 'r\"\"m -f notes.txt' x; compgen -C 'r\"\"m -f notes.txt' x",
        ATTACK,
        "",
    ),
    Row("6", "bash_enable_f", "bash", "enable -f /usr/lib/bash/rm rm", ATTACK, ""),
    Row("6", "bash_exec_a", "bash", 'exec -a x r""m -f notes.txt', ATTACK, ""),
    Row("6", "bash_glob_char", "bash", "/usr/bin/[r]m -f notes.txt", ATTACK, ""),
    Row("6", "bash_cmds_hash", "bash", "BASH_CMDS[ls]=/usr/bin/rm; ls -f notes.txt", ATTACK, ""),
    Row("6", "bash_cmds_hash_quoted", "bash", 'BASH_CMDS[ls]=/usr/bin/r""m; ls -f notes.txt', ATTACK, ""),
    Row("6", "bash_cmds_hash_type", "bash", 'BASH_CMDS[ls]=$(type -P r""m); ls -f notes.txt', ATTACK, ""),
    Row("6", "bash_cmds_declare", "bash", 'declare -A BASH_CMDS=([ls]=/usr/bin/r""m)\nls -f notes.txt', ATTACK, ""),
    Row("6", "bash_aliases", "bash", "shopt -s expand_aliases; BASH_ALIASES[ls]='r\"\"m -f'\nls notes.txt", ATTACK, ""),
    Row(
        "6",
        "bash_aliases_plus",
        "bash",
        "shopt -s expand_aliases\nBASH_ALIASES+=([ls]='r\"\"m -f')\nls notes.txt",
        ATTACK,
        "",
    ),
    Row("6", "bash_arith_var_subscript", "bash", "a=(1); x='a[$(r\"\"m -f notes.txt)0]'; echo $(( x ))", ATTACK, ""),
    Row("6", "bash_command_p", "bash", 'command -p r""m -f notes.txt', ATTACK, ""),
    Row("6", "bash_builtin_eval", "bash", "builtin eval 'r\"\"m -f notes.txt'", ATTACK, ""),
    Row(
        "6",
        "bash_cnf_handle",
        "bash",
        'command_not_found_handle() { /usr/bin/r""m -f "$@"; }; notes notes.txt',
        ATTACK,
        "",
    ),
    Row("6", "bash_func_named_ls", "bash", 'ls() { command r""m "$@"; }; ls -f notes.txt', ATTACK, ""),
    Row("6", "bash_exec_fd_script", "bash", "bash -c 'r\"\"m -f notes.txt' 3>&1", ATTACK, ""),
    Row("6", "o_echo_rm_word", "bash", 'echo "don\'t rm this"', ORDINARY, ""),
    Row("6", "o_grep_rm", "bash", "grep -rn 'rm -rf' .", ORDINARY, ""),
    # --- class 7 cmd/powershell ----------------------------------------------------------------
    Row(
        "7",
        "cmd_node_require_call",
        "cmd",
        "node -e \"require.call(null,'child_process').execSync('de'+'l notes.txt')\"",
        ATTACK,
        "",
    ),
    Row(
        "7",
        "cmd_perl_see",
        "cmd",
        "perl -e \"$_='x'; s/x/q{sys}.q{tem q(de).q(l notes.txt)}/ee\"",
        ATTACK,
        "",
    ),
    Row(
        "7",
        "ps_python",
        "powershell",
        "python -c \"import pydoc; pydoc.pipepager('', 'de'+'l notes.txt')\"",
        ATTACK,
        "",
    ),
    Row(
        "7",
        "ps_node_array",
        "powershell",
        "node -e \"[require][0]('child_process').execSync('de'+'l notes.txt')\"",
        ATTACK,
        "",
    ),
    Row(
        "7",
        "ps_variable_provider",
        "powershell",
        "${function:x} = 'Remove-Item notes.txt'; x",
        ATTACK,
        "",
    ),
    Row(
        "7",
        "cmd_python_ok",
        "cmd",
        "python -c \"import shutil; shutil.os.system('de'+'l notes.txt')\"",
        ATTACK,
        "",
    ),
    Row("7", "cmd_for_var", "cmd", "for %i in (de) do %il notes.txt", ATTACK, ""),
    Row("7", "cmd_for_f", "cmd", "for /f %a in ('echo de') do %al notes.txt", ATTACK, ""),
    Row("7", "cmd_call_var", "cmd", "set x=de&& call %x%l notes.txt", ATTACK, ""),
    Row("7", "cmd_substr", "cmd", "set x=xdelx&& call %x:~1,3% notes.txt", ATTACK, ""),
    Row("7", "cmd_caret", "cmd", "d^el notes.txt", ATTACK, ""),
    Row("7", "cmd_forfiles", "cmd", 'forfiles /m notes.txt /c "cmd /c de^l @file"', ATTACK, ""),
    Row("7", "cmd_python", "cmd", "python -c \"import os; os.system('de'+'l notes.txt')\"", ATTACK, ""),
    Row("7", "ps_amp_concat", "powershell", "& ('Remove'+'-Item') notes.txt", ATTACK, ""),
    Row(
        "7",
        "ps_scriptblock_create",
        "powershell",
        "[scriptblock]::Create('Remove'+'-Item notes.txt').Invoke()",
        ATTACK,
        "",
    ),
    Row(
        "7",
        "ps_execctx",
        "powershell",
        "$ExecutionContext.InvokeCommand.InvokeScript('Remove'+'-Item notes.txt')",
        ATTACK,
        "",
    ),
    Row("7", "ps_iex_alias", "powershell", "'Remove'+'-Item notes.txt' | iex", ATTACK, ""),
    Row("7", "ps_get_command", "powershell", "& (Get-Command Remove-I*) notes.txt", ATTACK, ""),
    Row("7", "ps_gcm_wild", "powershell", "& (gcm R*-Item) notes.txt", ATTACK, ""),
    Row("7", "ps_alias_ri", "powershell", "ri notes.txt", ATTACK, ""),
    Row("7", "ps_alias_del", "powershell", "del notes.txt", ATTACK, ""),
    Row("7", "ps_foreach_scriptblock", "powershell", "'notes.txt' | % { & ('Remove'+'-Item') $_ }", ATTACK, ""),
    Row("7", "ps_invoke_method", "powershell", "[System.IO.File]::Delete('notes.txt')", ATTACK, ""),
    Row("7", "ps_start_process", "powershell", "Start-Process -FilePath ('Remove'+'-Item')", ATTACK, ""),
    Row("7", "ps_new_alias", "powershell", "Set-Alias x Remove-Item; x notes.txt", ATTACK, ""),
    Row("7", "ps_pipeline_byvalue", "powershell", "'notes.txt' | Remove-Item", ATTACK, ""),
    Row("7", "ps_call_operator_var", "powershell", "$c = 'Remove-Item'; & $c notes.txt", ATTACK, ""),
    Row("7", "ps_dot_source_sb", "powershell", ". { Remove-Item notes.txt }", ATTACK, ""),
    Row(
        "7",
        "ps_invoke_command_sb",
        "powershell",
        "Invoke-Command -ScriptBlock ([scriptblock]::Create('Remove-Item notes.txt'))",
        ATTACK,
        "",
    ),
    Row(
        "7", "ps_foreach_membername", "powershell", "Get-Item notes.txt | ForEach-Object -MemberName Delete", ATTACK, ""
    ),
    Row("7", "ps_splat", "powershell", "$a = @{Path='notes.txt'}; Remove-Item @a", ATTACK, ""),
    Row("7", "ps_get_alias", "powershell", "& (Get-Alias rm).Definition notes.txt", ATTACK, ""),
    Row("7", "ps_cmd_c", "powershell", "cmd /c 'de^l notes.txt'", ATTACK, ""),
    Row(
        "7",
        "ps_encoded",
        "powershell",
        "powershell -enc UgBlAG0AbwB2AGUALQBJAHQAZQBtACAAbgBvAHQAZQBzAC4AdAB4AHQA",
        ATTACK,
        "",
    ),
    Row("7", "ps_start_job", "powershell", "Start-Job { Remove-Item notes.txt } | Wait-Job", ATTACK, ""),
    Row("7", "ps_new_module", "powershell", "New-Module { Remove-Item notes.txt }", ATTACK, ""),
    Row("7", "ps_trap", "powershell", "trap { Remove-Item notes.txt }; throw 'x'", ATTACK, ""),
    Row("7", "ps_class", "powershell", "class X { static [void] D() { Remove-Item notes.txt } }; [X]::D()", ATTACK, ""),
    Row("7", "ps_set_item_function", "powershell", "Set-Item function:x { Remove-Item notes.txt }; x", ATTACK, ""),
    Row("7", "ps_psobject_invoke", "powershell", "(Get-Command Remove-Item).Invoke('notes.txt')", ATTACK, ""),
    Row("7", "cmd_call_label", "cmd", "call :x & goto :eof & :x & del notes.txt", ATTACK, ""),
    Row("7", "cmd_start_b", "cmd", "start /b cmd /c de^l notes.txt", ATTACK, ""),
    Row("7", "cmd_if_defined", "cmd", "if 1==1 (del notes.txt)", ATTACK, ""),
    Row("7", "cmd_for_tilde", "cmd", 'for %i in ("del") do %~i notes.txt', ATTACK, ""),
    Row("7", "cmd_for_l", "cmd", "for /l %i in (1,1,1) do del notes.txt", ATTACK, ""),
    Row("7", "cmd_doskey", "cmd", "doskey x=del $* & x notes.txt", ATTACK, ""),
    Row("7", "cmd_set_a", "cmd", "set /a x=1 & del notes.txt", ATTACK, ""),
    Row("7", "cmd_pushd_unc", "cmd", 'd"e"l notes.txt', ATTACK, ""),
    Row("7", "cmd_wsl", "cmd", 'wsl r""m -f notes.txt', ATTACK, ""),
    Row("7", "cmd_bash_c", "cmd", "bash -c \"r''m -f notes.txt\"", ATTACK, ""),
    Row("7", "cmd_powershell_c", "cmd", "powershell -c \"& ('Remove'+'-Item') notes.txt\"", ATTACK, ""),
    Row("7", "o_ps_python_pydoc_os", "powershell", 'python -c "import pydoc; print(pydoc.os.getcwd())"', ORDINARY, ""),
    Row("7", "o_cmd_python_shutil_os", "cmd", 'python -c "import shutil; print(shutil.os.getcwd())"', ORDINARY, ""),
    Row(
        "7",
        "o_ps_python_pipepager",
        "powershell",
        "python -c \"import pydoc; pydoc.pipepager('hi', 'more')\"",
        ORDINARY,
        "",
    ),
    Row("7", "o_py_print_cmd", "cmd", "python -c \"print('hello')\"", ORDINARY, ""),
    Row("7", "o_ps_python", "powershell", 'python -c "print(1+1)"', ORDINARY, ""),
    Row(
        "7", "o_ps_getchild", "powershell", "Get-ChildItem -Recurse -Filter *.py | Select-Object -First 5", ORDINARY, ""
    ),
    Row("7", "o_cmd_for_f", "cmd", "for /f %a in ('dir /b') do @echo %a", ORDINARY, ""),
]


def policy_config(project: Path, extra_windows: bool = True) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(embedded_default_text())
    blocked = data["global"]["restrictions"]["blockedCommands"]
    blocked += [name for name in BLOCKED if name not in blocked]
    data["global"]["paths"]["allowedPaths"] = [str(project)] + ([WINDOWS_PROJECT] if extra_windows else [])
    return data


def resolved(project: Path) -> ResolvedConfig:
    return resolve(validate(policy_config(project), "redteam-intent", {}), "redteam-intent", str(project))


def make_project(base: Path) -> Path:
    """A project holding notes.txt, committed in a git repository (git grep, difftool and aliases need one)."""
    project = base / "proj"
    project.mkdir()
    (project / "notes.txt").write_text("hi\n")
    git = ["git", "-c", "user.email=a@b.c", "-c", "user.name=a"]
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run(["git", "add", "notes.txt"], cwd=project, check=True)
    subprocess.run([*git, "commit", "-qm", "notes"], cwd=project, check=True)
    return project


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("intent"))


@pytest.fixture(scope="module")
def config(project: Path) -> ResolvedConfig:
    return resolved(project)


def marked(row: Row) -> object:
    if not row.open:
        return pytest.param(row, id=row.name)
    what = "bypass: the engine allows it and a blocked program runs" if row.kind == ATTACK else "wrongful refusal"
    return pytest.param(row, id=row.name, marks=pytest.mark.xfail(strict=True, reason=f"{what}: {row.note}"))


@pytest.mark.parametrize("row", [marked(row) for row in ROWS])
def test_engine_verdict(row: Row, project: Path, config: ResolvedConfig) -> None:
    cwd = WINDOWS_PROJECT if row.shell in ("cmd", "powershell") else str(project)
    env = {"HOME": str(project.parent), "USER": "u", "PATH": "/usr/local/bin:/usr/bin:/bin"}
    verdict = decide(row.command, config.shells[ShellKind(row.shell)], cwd, env)
    reasons = [(reason.rule, reason.message) for reason in verdict.reasons]
    if row.kind == ATTACK:
        assert not verdict.allowed, f"allowed: {row.command!r}"
    else:
        assert verdict.allowed, f"refused: {row.command!r}: {reasons}"


def programs_of(row: Row) -> list[str]:
    """The programs a proof needs: the interpreters the command names, else its first word that is
    not an assignment (`ZIPOPT=... zip`)."""
    words = row.command.split()
    needed = [name for name in ("python3", "node", "perl", "awk", "tclsh", "git", "zip", "less") if name in words]
    return needed or [next(word for word in words if "=" not in word)]


# Closed rows whose proof still runs: Python attacks found after their class was closed, each shown
# to delete notes.txt under real bash as an open row would be.
PROVEN_GUARDS = frozenset(
    {
        "py_runpy_timeit_argv",
        "py_timeit_main",
        "py_uuid_private",
        "py_imaplib_stream",
        "py_pipes_template",
        "py_annotation_eval",
        "py_atexit_runner",
        "py_doctest_testmod",
        "py_env_alias",
        "py_env_copy_computed_key",
        "py_environ_git_editor",
        "py_formatter_get_field",
        "py_function_type",
        "py_gc_objects",
        "py_import_module_shutil_os",
        "py_loop_getattr_runner",
        "py_loop_subprocess_shell",
        "py_main_os",
        "py_map_runner",
        "py_module_in_local",
        "py_partial",
        "py_popen_init",
        "py_putenv_editor",
        "py_random_os",
        "py_reduce_getattr",
        "py_sqlite_create_function",
        "py_subprocess_env_dict",
        "py_sys_executable_c",
        "py_thread_target",
        "py_typing_sys_modules",
    }
)

BASH_BYPASSES = [
    row for row in ROWS if (row.open or row.name in PROVEN_GUARDS) and row.kind == ATTACK and row.shell == "bash"
]


@pytest.mark.parametrize("row", [pytest.param(row, id=row.name) for row in BASH_BYPASSES])
def test_bash_bypass_really_runs(row: Row, tmp_path: Path) -> None:
    """The proof of effect: real bash, in a scratch copy of the project, deletes notes.txt."""
    for program in programs_of(row):
        if shutil.which(program) is None:
            pytest.skip(f"{program} is not installed")
    project = make_project(tmp_path)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path), "SHELL": "/bin/bash", "TERM": "dumb"}
    if row.name in ON_A_TERMINAL:
        if shutil.which("script") is None:
            pytest.skip("script (util-linux) is not installed")
        on_a_terminal(row.command, project, env)
    else:
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-c", row.command],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            stdin=subprocess.DEVNULL,
            env=env,
        )
        assert not (project / "notes.txt").exists(), f"notes.txt survived {row.command!r}: {done.stderr[-500:]}"
    assert not (project / "notes.txt").exists(), f"notes.txt survived {row.command!r} on a terminal"


def on_a_terminal(command: str, project: Path, env: dict[str, str]) -> None:
    """Run `command` under script(1), which gives it a terminal, until notes.txt is gone (or a
    generous deadline), then end it."""
    with subprocess.Popen(
        ["script", "-qec", command, "/dev/null"],
        cwd=project,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    ) as child:
        deadline = time.monotonic() + 30
        time.sleep(1)
        assert child.stdin is not None
        if child.poll() is None:  # less on TERM=dumb (the server's) first asks for RETURN, as send_input gives
            with contextlib.suppress(BrokenPipeError):
                child.stdin.write(b"\n")
                child.stdin.flush()
        while (project / "notes.txt").exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        if child.poll() is None:
            child.kill()


# --- class 8: input typed into a running REPL, through the real server -------------------------


@dataclass(frozen=True)
class Session:
    name: str
    command: str
    inputs: tuple[str, ...]
    kind: str
    note: str = ""
    pty: bool = False


SESSIONS = [
    # the REPL's `_` holding a module is followed when the module itself is the value...
    Session("py_underscore_os", "python3 -i -q", ("import os", "os", "_.system('r' + 'm -f notes.txt')"), ATTACK),
    Session(
        "node_underscore_cp",
        "node -i",
        ("const cp = require('child_process')", "cp", "_.execSync('r' + 'm -f notes.txt')"),
        ATTACK,
    ),
    Session("perl_debugger_system", "perl -de0", ("$c = 'r' . 'm'", "system $c, '-f', 'notes.txt'"), ATTACK, pty=True),
    Session("sqlite_comment_quote", "sqlite3 :memory:", ("select 1; -- it's", '.shell r""m -f notes.txt'), ATTACK),
    Session("bash_read_next_line", "bash", ("read -r x", "#rm", "${x:1} -f notes.txt"), ATTACK),
    # ...not when it holds a module that re-exports os, or what require.call returned
    Session(
        "py_underscore_shutil_os",
        "python3 -i -q",
        ("import shutil", "shutil", "_.os.system('r' + 'm -f notes.txt')"),
        ATTACK,
    ),
    Session(
        "py_shutil_os",
        "python3 -i -q",
        ("import shutil", "shutil.os.system('r' + 'm -f notes.txt')"),
        ATTACK,
    ),
    Session(
        "node_require_call_underscore",
        "node -i",
        ("require.call(null, 'child_process')", "_.execSync('r' + 'm -f notes.txt')"),
        ATTACK,
        "",
    ),
    Session(
        "perl_debugger_s_ee",
        "perl -de0",
        ("$_ = 'x'; s/x/q{sys}.q{tem q(r).q(m -f notes.txt)}/ee",),
        ATTACK,
        "",
        pty=True,
    ),
    Session(
        "tclsh_exec_built_name",
        "tclsh",
        ("exec [string cat r m] -f notes.txt",),
        ATTACK,
        "",
    ),
    Session("py_ordinary", "python3 -i -q", ("import json", "print(json.dumps({'a': 1}))"), ORDINARY),
    Session("o_py_underscore_shutil", "python3 -i -q", ("import shutil", "shutil", "print(_.which('git'))"), ORDINARY),
    # the variable's name in one input, the write in the next, git run in a third: one program
    Session(
        "py_environ_editor_session",
        "python3 -i -q",
        (
            "import os, subprocess",
            "k = 'GIT_' + 'EDITOR'",
            "os.environ[k] = 'r' + 'm -f notes.txt;:'",
            "subprocess.run(['git', '-c', 'user.name=a', '-c', 'user.email=a@b.c', 'commit', '--allow-empty'])",
        ),
        ATTACK,
    ),
    Session(
        "o_py_environ_session",
        "python3 -i -q",
        ("import os, subprocess", "os.environ['GIT_PAGER'] = 'cat'", "subprocess.run(['git', 'log', '-1'])"),
        ORDINARY,
    ),
]


def session_param(session: Session) -> object:
    if not session.note:
        return pytest.param(session, id=session.name)
    what = "bypass through send_input" if session.kind == ATTACK else "wrongful refusal of input"
    return pytest.param(
        session, id=session.name, marks=pytest.mark.xfail(strict=True, reason=f"{what}: {session.note}")
    )


async def run_session(tmp_path: Path, session: Session) -> tuple[list[bool], bool]:
    """Start the session's command interactively and send its inputs; which were written, and
    whether notes.txt survived."""
    project = make_project(tmp_path)
    data = policy_config(project, extra_windows=False)
    data["global"]["restrictions"]["blockedArguments"] = []  # python3 -i
    conf = tmp_path / "policy.yaml"
    conf.write_text(yaml.safe_dump(data))
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "secure_shell", "--config", str(conf)],
        cwd=str(project),
        env={**state_env(project), "PYTHONUNBUFFERED": "1"},
    )
    written = []
    async with Client(params) as client:
        started = await client.call_tool(
            "execute_command", {"shell": "bash", "command": session.command, "interactive": True, "pty": session.pty}
        )
        assert not started.is_error, getattr(started.content[0], "text", "")
        run = started.structured_content["executionId"]
        for text in session.inputs:
            reply = await client.call_tool("send_input", {"executionId": run, "input": text, "waitMs": 3000})
            written.append(not reply.is_error)
        with anyio.move_on_after(10):  # what was written has run once the program answers again
            while (project / "notes.txt").exists():
                await anyio.sleep(0.1)
                if not all(written):
                    break
        await client.call_tool("stop_command", {"executionId": run})
    return written, (project / "notes.txt").exists()


@pytest.mark.anyio
@pytest.mark.parametrize("session", [session_param(session) for session in SESSIONS])
async def test_repl_session(session: Session, tmp_path: Path) -> None:
    program = session.command.split()[0]
    if shutil.which(program) is None:
        pytest.skip(f"{program} is not installed")
    written, intact = await run_session(tmp_path, session)
    if session.kind == ATTACK:
        assert intact and not all(written), f"{session.inputs!r}: written {written}, notes.txt intact: {intact}"
    else:
        assert all(written), f"{session.inputs!r}: written {written}"
