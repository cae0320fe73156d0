"""The node kinds of tree-sitter-bash: those the walker models (any other is refused), those of
plain text every bash grammar reads alike, and those bashlex cannot parse."""

from __future__ import annotations

# Node kinds the walker understands. Anything else (ERROR, MISSING, a kind a newer grammar adds)
# is refused: a construct nobody modelled must not pass silently.
KNOWN_KINDS = frozenset(
    {
        "program",
        "list",
        "pipeline",
        "command",
        "command_name",
        "word",
        "string",
        "string_content",
        "raw_string",
        "ansi_c_string",
        "translated_string",
        "concatenation",
        "simple_expansion",
        "expansion",
        "variable_name",
        "special_variable_name",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "number",
        "variable_assignment",
        "variable_assignments",
        "declaration_command",
        "unset_command",
        "redirected_statement",
        "file_redirect",
        "file_descriptor",
        "heredoc_redirect",
        "heredoc_start",
        "heredoc_body",
        "heredoc_content",
        "heredoc_end",
        "herestring_redirect",
        "subshell",
        "compound_statement",
        "if_statement",
        "elif_clause",
        "else_clause",
        "for_statement",
        "c_style_for_statement",
        "while_statement",
        "do_group",
        "case_statement",
        "case_item",
        "function_definition",
        "test_command",
        "negated_command",
        "binary_expression",
        "unary_expression",
        "postfix_expression",
        "parenthesized_expression",
        "ternary_expression",
        "test_operator",
        "array",
        "subscript",
        "brace_expression",
        "extglob_pattern",
        "regex",
        "comment",
    }
)

# A text made only of these, with no `$`, backtick, backslash or here-document, has one reading
# in any bash grammar: the bashlex cross-check is skipped for it (it would only cost time).
PLAIN_KINDS = frozenset(
    {
        "program",
        "list",
        "pipeline",
        "command",
        "command_name",
        "word",
        "raw_string",
        "string",
        "string_content",
        "redirected_statement",
        "file_redirect",
        "file_descriptor",
        "number",
        "concatenation",
        "negated_command",
        "subshell",
        "compound_statement",
    }
)

# Constructs bashlex cannot parse that tree-sitter-bash can; there tree-sitter's reading stands.
BASHLEX_GAPS = frozenset(
    {
        "case_statement",
        "test_command",
        "arithmetic_expansion",
        "c_style_for_statement",
        "array",
        "heredoc_redirect",
        "extglob_pattern",
        "brace_expression",
        "ansi_c_string",
        "translated_string",
        "compound_statement",
    }
)
