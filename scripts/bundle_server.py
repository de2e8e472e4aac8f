"""Bundle the Python language server into the VS Code extension.

Fills ``extension/bundled/libs`` with the ``faultline`` package (signatures included,
symlinks resolved) and binary wheels of its dependencies for CPython 3.10-3.12 on
linux x86_64, so the installed extension runs ``python -m faultline`` with PYTHONPATH set
and never needs pip or the network. ``extension/bundled/manifest.json`` records the
Python versions and package versions for the extension's interpreter check.

Each Python version is resolved separately (environment markers such as
``python_version < "3.11"`` are evaluated for that version, not for the Python running
this script), all with the versions the first resolution chose, and the results are
merged: pure-Python files must be identical, binary modules differ by ABI tag.

Usage: python scripts/bundle_server.py [--python 3.10 3.11 3.12] [--out extension/bundled]
"""

from __future__ import annotations

import argparse
import filecmp
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10 runs this script too
    import tomli as tomllib  # type: ignore[no-redef]

try:
    from packaging.markers import Marker
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
except ModuleNotFoundError:  # pip always vendors packaging
    from pip._vendor.packaging.markers import Marker  # type: ignore[no-redef]
    from pip._vendor.packaging.requirements import Requirement  # type: ignore[no-redef]
    from pip._vendor.packaging.utils import canonicalize_name  # type: ignore[no-redef]

REPO = Path(__file__).resolve().parent.parent
PLATFORM_TAGS = ["manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64"]
PLATFORM_NAME = "linux-x64"
MAX_RESOLVE_ROUNDS = 6


def target_environment(version: str) -> dict[str, str]:
    """The marker environment of CPython `version` on linux x86_64."""
    return {
        "python_version": version,
        "python_full_version": f"{version}.0",
        "implementation_name": "cpython",
        "implementation_version": f"{version}.0",
        "platform_python_implementation": "CPython",
        "platform_system": "Linux",
        "sys_platform": "linux",
        "platform_machine": "x86_64",
        "os_name": "posix",
        "platform_release": "",
        "platform_version": "",
        "extra": "",
    }


def applies(requirement: Requirement, environment: dict[str, str]) -> bool:
    marker: Marker | None = requirement.marker
    return marker is None or marker.evaluate(environment)


def without_marker(requirement: Requirement) -> str:
    extras = f"[{','.join(sorted(requirement.extras))}]" if requirement.extras else ""
    return f"{requirement.name}{extras}{requirement.specifier}"


def installed_distributions(folder: Path) -> dict[str, tuple[str, Path]]:
    """Canonical name -> (version, dist-info folder) of what pip put into `folder`."""
    found: dict[str, tuple[str, Path]] = {}
    for dist_info in folder.glob("*.dist-info"):
        metadata = (dist_info / "METADATA").read_text(encoding="utf-8", errors="replace")
        headers = dict(
            line.split(": ", 1) for line in metadata.splitlines() if ": " in line and not line.startswith(" ")
        )
        found[canonicalize_name(headers["Name"])] = (headers["Version"], dist_info)
    return found


def requirements_of(dist_info: Path) -> list[Requirement]:
    metadata = (dist_info / "METADATA").read_text(encoding="utf-8", errors="replace")
    return [Requirement(line.split(": ", 1)[1]) for line in metadata.splitlines() if line.startswith("Requires-Dist: ")]


def pip_install(target: Path, version: str, requirements: list[str], constraints: Path | None) -> None:
    abi = "cp" + version.replace(".", "")
    command = [
        sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
        "--target", str(target), "--upgrade",
        "--python-version", version, "--implementation", "cp", "--abi", abi,
        "--only-binary=:all:", "--no-compile", "--no-warn-script-location",
    ]
    for tag in PLATFORM_TAGS:
        command += ["--platform", tag]
    if constraints is not None:
        command += ["--constraint", str(constraints)]
    print(f"  pip install ({abi}): {' '.join(requirements)}", flush=True)
    subprocess.run(command + requirements, check=True)


def resolve_for(version: str, top_level: list[Requirement], stage: Path, constraints: Path | None) -> dict[str, str]:
    """Installs the dependency closure for one Python version; returns name -> version."""
    environment = target_environment(version)
    wanted = [without_marker(r) for r in top_level if applies(r, environment)]
    pip_install(stage, version, wanted, constraints)
    for _ in range(MAX_RESOLVE_ROUNDS):
        installed = installed_distributions(stage)
        missing = sorted({
            without_marker(requirement)
            for _, dist_info in installed.values()
            for requirement in requirements_of(dist_info)
            if applies(requirement, environment) and canonicalize_name(requirement.name) not in installed
        })
        if not missing:
            return {name: version_ for name, (version_, _) in sorted(installed.items())}
        # pip evaluated markers for the Python running it; add what the target needs.
        pip_install(stage, version, missing, constraints)
    raise SystemExit(f"dependency closure for Python {version} did not settle after {MAX_RESOLVE_ROUNDS} rounds")


def merge_into(source: Path, destination: Path) -> None:
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source)
        if relative.parts[0] == "bin" or "__pycache__" in relative.parts or path.is_dir():
            continue
        target = destination / relative
        if target.exists():
            if filecmp.cmp(path, target, shallow=False):
                continue
            if relative.parts[0].endswith(".dist-info"):
                continue  # RECORD/WHEEL differ by ABI tag; nothing reads them at run time
            raise SystemExit(f"conflicting file {relative} between Python versions; pin one version")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)


def copy_server(libs: Path) -> None:
    source = REPO / "server" / "faultline"
    shutil.copytree(
        source, libs / "faultline", symlinks=False,
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo"),
    )


def interpreter_for(version: str) -> str | None:
    """A local CPython of this version, to prove the bundle imports (optional)."""
    candidates = [str(p) for p in sorted(Path.home().glob(f".pyenv/versions/{version}.*/bin/python{version}"))]
    candidates += [c for c in [shutil.which(f"python{version}")] if c]
    for candidate in candidates:
        probe = subprocess.run(
            [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True, text=True, check=False,
        )
        if probe.returncode == 0 and probe.stdout.strip() == version:
            return candidate
    return None


def verify(libs: Path, version: str) -> str:
    python = interpreter_for(version)
    if python is None:
        return f"Python {version}: no local interpreter, import not checked"
    modules = "faultline, faultline.engine, pygls, lsprotocol, regex, hyperscan"
    if (libs / "faultline" / "lsp").exists():
        modules += ", faultline.lsp"
    environment = {"PYTHONPATH": str(libs), "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [python, "-c", f"import {modules}; import faultline; print(faultline.__file__)"],
        env=environment, capture_output=True, text=True, check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"Python {version} ({python}) cannot import the bundle:\n{result.stderr}")
    loaded_from = Path(result.stdout.strip()).resolve()
    if libs.resolve() not in loaded_from.parents:
        raise SystemExit(f"Python {version} imported faultline from {loaded_from}, not from the bundle")
    return f"Python {version}: imports {modules} from the bundle ({python})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", nargs="+", default=["3.10", "3.11", "3.12"], help="CPython minor versions")
    parser.add_argument("--out", type=Path, default=REPO / "extension" / "bundled", help="output folder")
    options = parser.parse_args()

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    top_level = [Requirement(text) for text in project["dependencies"]]
    out: Path = options.out
    libs = out / "libs"
    shutil.rmtree(out, ignore_errors=True)
    libs.mkdir(parents=True)

    packages_by_version: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory(prefix="faultline-bundle-") as scratch:
        pins: Path | None = None
        for version in options.python:
            print(f"Resolving dependencies for CPython {version} ({PLATFORM_NAME})", flush=True)
            stage = Path(scratch) / f"cp{version.replace('.', '')}"
            packages_by_version[version] = resolve_for(version, top_level, stage, pins)
            if pins is None:
                # Every later version gets the same package versions, so pure files agree.
                pins = Path(scratch) / "pins.txt"
                pins.write_text(
                    "".join(f"{name}=={v}\n" for name, v in packages_by_version[version].items()),
                    encoding="utf-8",
                )
            merge_into(stage, libs)
    copy_server(libs)

    manifest = {
        "platform": PLATFORM_NAME,
        "pythonVersions": options.python,
        "faultline": project["version"],
        "packages": packages_by_version,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    for version in options.python:
        print(verify(libs, version))
    size = sum(p.stat().st_size for p in libs.rglob("*") if p.is_file())
    print(f"Bundled server in {libs} ({size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
