"""The shipped policies; this directory is installed as the package secure_shell.policies."""
