"""How big the Lambda function is, and where its task kinds are named, at any git revision (no checkout needed).

    python tools/function_size.py [REVISION ...]      (default: HEAD)

Prints, per revision: the lines of function/*.py and of every .py file under function/, and the files under
function/ and convert/ that name a task kind as a string ("image_classification", 'tensor'...; the kinds are the
`name`s of the classes in function/tasks/ at that revision). A file that names a kind is one a new kind may have to
touch: issue 33's "files a new task kind touches", before and after.
"""
from __future__ import annotations

import argparse
import re
import subprocess

KIND_NAME = re.compile(r"""^\s+name\s*=\s*["']([a-z_]+)["']""", re.MULTILINE)  # a Task class's `name = "..."`


def git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def python_files(revision: str, folder: str) -> list[str]:
    return [path for path in git("ls-tree", "-r", "--name-only", revision, folder + "/").splitlines()
            if path.endswith(".py")]


def lines_of(revision: str, path: str) -> int:
    return git("show", f"{revision}:{path}").count("\n")


def task_kinds(revision: str) -> list[str]:
    kinds = set()
    for path in python_files(revision, "function/tasks"):
        kinds.update(KIND_NAME.findall(git("show", f"{revision}:{path}")))
    return sorted(kinds)


def files_naming(revision: str, kinds: list[str], folders: tuple[str, ...]) -> list[str]:
    pattern = "[\"'](" + "|".join(kinds) + ")[\"']"
    found = subprocess.run(["git", "grep", "-l", "-E", pattern, revision, "--", *folders], capture_output=True,
                           text=True, check=False).stdout  # exit 1: no file matched
    return sorted(line.split(":", 1)[1] for line in found.splitlines())


def report(revision: str) -> None:
    commit = git("log", "-1", "--format=%h %ad %s", "--date=short", revision).strip()
    top = [path for path in python_files(revision, "function") if path.count("/") == 1]
    every = python_files(revision, "function")
    kinds = task_kinds(revision)
    print(f"== {commit[:100]}")
    print(f"lines of function/*.py: {sum(lines_of(revision, p) for p in top):,} in {len(top)} files; "
          f"of function/**/*.py: {sum(lines_of(revision, p) for p in every):,} in {len(every)} files")
    print(f"task kinds (function/tasks/ classes' names): {', '.join(kinds)}")
    for folder in ("function", "convert"):
        named = files_naming(revision, kinds, (folder + "/",))
        print(f"files under {folder}/ naming a task kind as a string: {len(named)}")
        for path in named:
            print(f"  {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("revisions", nargs="*", default=["HEAD"])
    for revision in parser.parse_args().revisions:
        report(revision)


if __name__ == "__main__":
    main()
