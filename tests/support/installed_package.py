"""The project as a user installs it: the wheel built from the checkout's files, installed into a fresh venv, and the
`lambda-tflite` command run from a folder outside the checkout.

No network: the wheel is built with the dev venv's setuptools (`pip wheel --no-deps --no-build-isolation`), and the
fresh venv reaches the dependencies already installed in the dev venv through one .pth file (`site.addsitedir`, so
their own .pth files apply too), then takes the wheel with `pip install --no-deps --no-index`. Only the wheel puts
`function` and `convert` on its path: neither the checkout nor PYTHONPATH is.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

from tests.support.serve_process import server_process

REPO = Path(__file__).resolve().parents[2]
COMMAND = "lambda-tflite"


def checkout_files() -> list[str]:
    """What a fresh clone holds (tracked files, and new ones git does not ignore): never the build outputs."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout
    return [name for name in listed.decode().split("\0") if name and (REPO / name).is_file()]


def copy_checkout(destination: Path) -> Path:
    """A copy of the checkout's files, as a fresh clone has them: what a user runs `pip install .` in."""
    for name in checkout_files():
        (destination / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, destination / name)
    return destination


def build_wheel(work: Path) -> Path:
    """The wheel, built from a copy of the checkout's files (the build writes build/ and *.egg-info beside them)."""
    source = copy_checkout(work / "clone")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "--no-deps",
                    "--no-build-isolation", "--wheel-dir", str(work / "dist"), str(source)],
                   check=True, capture_output=True, text=True, timeout=300)
    (wheel,) = (work / "dist").glob("*.whl")
    return wheel


def wheel_names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def fresh_venv(venv: Path) -> Path:
    """A new venv's bin/: nothing of the project in it; the dev venv's packages (pip among them) reachable, and a
    `pip` command for the venv, as `python -m venv` gives one."""
    base_python = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    subprocess.run([str(base_python), "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site_packages = Path(subprocess.run([str(python), "-c",
                                         "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                        capture_output=True, text=True, check=True).stdout.strip())
    dev_site_packages = Path(sysconfig.get_paths()["purelib"]).resolve()
    (site_packages / "dev-venv-dependencies.pth").write_text(
        f"import site; site.addsitedir({str(dev_site_packages)!r})\n")
    pip = venv / "bin" / "pip"
    pip.write_text(f"#!{python}\nimport sys\n\nfrom pip._internal.cli.main import main\n\nsys.exit(main())\n")
    pip.chmod(0o755)
    return venv / "bin"


def install_into_fresh_venv(wheel: Path, venv: Path) -> Path:
    """The fresh venv's bin/ (with the command in it), after installing the wheel alone into it."""
    bin_dir = fresh_venv(venv)
    subprocess.run([str(bin_dir / "pip"), "install", "--quiet", "--disable-pip-version-check", "--no-deps",
                    "--no-index", str(wheel)], check=True, capture_output=True, text=True, timeout=300)
    return bin_dir


def user_environment(bin_dir: Path, home: Path) -> dict[str, str]:
    """A user's shell: the venv's bin/ first on PATH, no PYTHONPATH, caches under their own home."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "MODEL_DIR", "MODEL_SOURCE", "RESULTS_SQLITE_PATH", "RESULTS_CACHE")}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"),
               TF_CPP_MIN_LOG_LEVEL="3")
    return env


def run_command(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([COMMAND, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def command_serving(args: list[str], cwd: Path, env: dict[str, str]):
    """`lambda-tflite serve ARGS` as a real process: (base URL, its first line) while it runs; Ctrl-C's signal after."""
    return server_process([COMMAND, "serve", *args], cwd, env)
