"""The one error type every part raises for bad user input (exit code 2, one line)."""


class InputError(Exception):
    """Bad input from the user: a path, a file, a value. The message is one line that
    names the file (and line) or value; the CLI prints it and exits with code 2."""

    exit_code = 2
