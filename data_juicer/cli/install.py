"""``dj-install``: install exactly the optional packages a recipe's ops need (never at run time)."""

import subprocess
import sys


def required_packages(recipe) -> dict[str, list[str]]:
    """pip distribution -> ops that need it, for the ops of a validated recipe."""
    needs: dict[str, list[str]] = {}
    for spec in recipe.ops:
        for dist in spec.cls.required_packages(spec.params):
            needs.setdefault(dist, []).append(spec.name)
    return needs


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "-h" in argv or "--help" in argv or not argv:
        print("usage: dj-install --config RECIPE [--dry_run]\n\n"
              "Installs the optional packages the recipe's operators need, with pip.")
        return 0
    dry_run = "--dry_run" in argv
    argv = [a for a in argv if a != "--dry_run"]
    from data_juicer.config.recipe import ConfigError, load_recipe
    from data_juicer.utils.lazy import is_available

    try:
        recipe = load_recipe(argv, "dj-install", check_paths=False)
    except ConfigError as e:
        print(f"dj-install: error: {e}", file=sys.stderr)
        return 2
    needs = required_packages(recipe)
    missing = [d for d in needs if not is_available(d)]
    for d, who in needs.items():
        print(f"{'missing ' if d in missing else 'ok      '} {d}  ({', '.join(sorted(set(who)))})")
    if not missing:
        print("Nothing to install.")
        return 0
    cmd = [sys.executable, "-m", "pip", "install", *missing]
    print(" ".join(cmd))
    if dry_run:
        return 0
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main())
