"""``dj-install``: install exactly the optional packages a recipe's ops need (never at run time).

Versions come from one place: the pins of this project's extras in ``pyproject.toml`` (read from the
installed package's metadata), so ``dj-install`` and ``pip install 'data_juicer[...]'`` agree.
"""

import shutil
import subprocess
import sys

USAGE = ("usage: dj-install --config RECIPE [--dry_run] [--uv]\n\n"
         "Installs the optional packages the recipe's operators need (pinned as this project's extras pin\n"
         "them), with pip (or `uv pip` with --uv). --dry_run only prints what it would install.")


def required_packages(recipe) -> dict[str, list[str]]:
    """pip distribution -> ops that need it, for the ops of a validated recipe."""
    needs: dict[str, list[str]] = {}
    for spec in recipe.ops:
        for dist in spec.cls.required_packages(spec.params):
            needs.setdefault(dist, []).append(spec.name)
    return needs


def _canonical(name: str) -> str:
    from packaging.utils import canonicalize_name

    return canonicalize_name(name)


def extras_pins(requirements=None) -> dict[str, str]:
    """Canonical distribution name -> requirement as the project's extras pin it (``"ufal.kenlm"``,
    ``"numba>=0.60"``). ``requirements`` defaults to the installed package's metadata."""
    from packaging.requirements import Requirement

    if requirements is None:
        from importlib.metadata import PackageNotFoundError, requires

        try:
            requirements = requires("data_juicer") or []
        except PackageNotFoundError:
            requirements = []
    pins: dict[str, str] = {}
    for text in requirements:
        req = Requirement(text)
        name = _canonical(req.name)
        if name == "data-juicer":
            continue  # an extra that includes other extras
        spec = f"{req.name}{'[' + ','.join(sorted(req.extras)) + ']' if req.extras else ''}{req.specifier}"
        # the most specific pin wins when several extras name the same distribution
        if name not in pins or len(str(req.specifier)) > len(pins[name]) - len(req.name):
            pins[name] = spec
    return pins


def pinned(dist: str, pins: dict[str, str]) -> str:
    return pins.get(_canonical(dist), dist)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "-h" in argv or "--help" in argv:
        print(USAGE)
        return 0
    if not argv:
        print(USAGE, file=sys.stderr)
        return 2
    dry_run = "--dry_run" in argv
    use_uv = "--uv" in argv
    argv = [a for a in argv if a not in ("--dry_run", "--uv")]
    from data_juicer.config.recipe import ConfigError, load_recipe
    from data_juicer.utils.lazy import is_available

    try:
        recipe = load_recipe(argv, "dj-install", check_paths=False)
    except ConfigError as e:
        print(f"dj-install: error: {e}", file=sys.stderr)
        return 2
    needs = required_packages(recipe)
    pins = extras_pins()
    missing = [d for d in needs if not is_available(d)]
    for d, who in needs.items():
        print(f"{'missing ' if d in missing else 'ok      '} {pinned(d, pins)}  ({', '.join(sorted(set(who)))})")
    if not missing:
        print("Nothing to install.")
        return 0
    if use_uv:
        uv = shutil.which("uv")
        if uv is None:
            print("dj-install: error: --uv given but `uv` is not on PATH (pip install uv)", file=sys.stderr)
            return 2
        cmd = [uv, "pip", "install", "--python", sys.executable]
    else:
        cmd = [sys.executable, "-m", "pip", "install"]
    cmd += [pinned(d, pins) for d in missing]
    print(" ".join(cmd))
    if dry_run:
        return 0
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main())
