"""The package list, found under src/, plus the shipped policies: config/ at the top of the
repository installed as secure_shell.policies (pyproject.toml maps the directory)."""

from setuptools import find_packages, setup

setup(packages=[*find_packages("src"), "secure_shell.policies"])
