"""The policy engine: command text and a frozen ShellPolicy in, a Verdict out; no I/O.

    decide(text, policy, cwd)                                        decide.py
     └── Walker.run                                                  engine_walk.py
          ├── Scope(dialect, start directories, via, depth, probe)   engine_context.py
          ├── script(text, scope): the dialect's parse, once per text and directory
          │    ├── parse ─► Parsed | Unsupported | Failed            registry.py ─► bash.py, cmd.py, powershell.py
          │    │    bash:       bash_parse (limits: bash_substitutions) ─► bash_walker (bash_visitors), in
          │    │                layers: bash_words, bash_variables, bash_arithmetic ─► bash_flow;
          │    │                the bashlex cross-check in review()
          │    │    PowerShell: powershell_parse ─► powershell_grammar (view) ─► powershell_walker
          │    ├── review, findings, blocked operators ─► reasons
          │    └── where each command may start                      engine_flow.py over flow.py
          └── command(simple, scope), for every simple command
               ├── command rules: blocked, ask, allowed; blockedArguments   command_rules.py, arguments.py
               ├── resolve_wrapper ─► Resolution[]                   resolution.py
               │    bash-family: wrappers.RESOLVERS ─► wrapper_table, wrapper_shells, wrapper_programs,
               │                 wrapper_text_tools, wrapper_remote, wrapper_builtins, sqlite; git.py;
               │                 link_makers.py; interpreters ─► interpreter_code ─► python_code
               │                 (python_checker, python_calls, python_env over python_members),
               │                 javascript_code (code on its syntax tree); scripts from streams in
               │                 program_scripts; beside every resolver, shell_sites (text for /bin/sh)
               │    PowerShell:  powershell_resolvers, powershell_launch; powershell_pipeline (paths
               │                 bound from the pipeline, delay-bind script blocks) in the walker
               │    Launch ─► the launched program's module          registry.launch
               ├── Inner ─► command(...) again; Script ─► script(...) in its own dialect
               └── paths: arguments, redirects, links ─► allowed?   engine_paths.py over paths.py
     └── CheckRecord ─► Verdict(decision, reasons, commands, paths)  engine_context.py, verdict.py

A denial is a Reason with a stable id (verdict.py), never an exception: decide() never raises.
"""
