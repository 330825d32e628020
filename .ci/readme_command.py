"""Print a command of the README's quick start: `python .ci/readme_command.py main|test`.

The README marks each command with an HTML comment (``<!-- command: test -->``) just above
its fenced code block; CI and the tests read the commands from there.
"""

import pathlib
import re
import sys

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def readme_command(name: str) -> str:
    text = README.read_text(encoding="utf-8")
    match = re.search(rf"<!-- command: {name} -->\s*```(?:bash|sh)?\n(.*?)\n```", text, re.S)
    if match is None:
        raise SystemExit(f"README.md has no block marked <!-- command: {name} -->")
    return match.group(1).strip()


if __name__ == "__main__":
    print(readme_command(sys.argv[1]))
