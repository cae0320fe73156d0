"""Variables whose assignment changes which program runs, where the shell goes, or makes a program
run code of its own: every dialect refuses to set them. The bash family checks the values of those
in env_variables.TABLE instead (a harmless editor, a path inside the reach); cmd and PowerShell
refuse those by name too."""

from __future__ import annotations

from secure_shell.policy.env_variables import variable

# Assigning these changes which program runs, or makes a program run code of its own.
DANGEROUS_VARIABLES = frozenset(
    {
        "PATH",
        "BASH_ENV",
        "ENV",
        "PROMPT_COMMAND",
        "PS0",
        "PS1",
        "PS4",
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "LD_AUDIT",
        # glibc, OpenSSL, GStreamer and SASL load shared objects from where these point, as LD_PRELOAD does
        "GCONV_PATH",
        "OPENSSL_CONF",
        "OPENSSL_ENGINES",
        "OPENSSL_MODULES",
        "GST_PLUGIN_PATH",
        "GST_PLUGIN_SYSTEM_PATH",
        "SASL_PATH",
        # a configuration file read from anywhere (pip's may name its log and index)
        "PIP_CONFIG_FILE",
        "DYLD_INSERT_LIBRARIES",
        "DYLD_LIBRARY_PATH",
        "SHELLOPTS",
        "BASHOPTS",
        "IFS",
        "CDPATH",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_EXTERNAL_DIFF",
        "GIT_PAGER",
        "GIT_EDITOR",
        "GIT_ASKPASS",
        "GIT_PROXY_COMMAND",
        "GIT_EXEC_PATH",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
        "GIT_TEMPLATE_DIR",
        "GIT_DIR",
        "GIT_WORK_TREE",
        "PAGER",
        "MANPAGER",
        "EDITOR",
        "VISUAL",
        "BROWSER",
        "OLDPWD",
        "DIRSTACK",
        "BASH_CMDS",  # bash's command hash (as hash -p): a name runs another program
        "BASH_ALIASES",  # aliases, expanded where the engine reads a plain command
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "LESSOPEN",
        "LESSCLOSE",
        "PYTHONSTARTUP",
        "PYTHONPATH",
        "PYTHONHOME",
        "PERL5OPT",
        "PERL5LIB",
        "PERL5DB",
        "RUBYOPT",
        "RUBYLIB",
        "NODE_OPTIONS",
        "NODE_PATH",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "MAKEFLAGS",
        "TAR_OPTIONS",
        "ZDOTDIR",
        "HISTFILE",
        "COMSPEC",
        "PATHEXT",
        "NODEFAULTCURRENTDIRECTORYINEXEPATH",  # unset, cmd runs a program from the current directory first
        "NPM_CONFIG_SCRIPT_SHELL",
        "NPM_CONFIG_PREFIX",
        "PSMODULEPATH",
    }
)


def dangerous_variable(name: str, *, environment: bool = True) -> bool:
    """Whether setting `name` (or an element of it: `DIRSTACK[1]`) changes what runs or where the
    shell goes. An environment variable's name is case-folded: Windows folds them, and WSL and Git
    Bash pass them on. A bash shell variable that is not exported (`path=x`, `read path`) is only
    bash's, and bash tells `path` from `PATH`."""
    base = name.split("[", 1)[0]
    if environment and variable(base) is not None:
        return True
    return (base.upper() if environment else base) in DANGEROUS_VARIABLES
