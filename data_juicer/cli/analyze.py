"""``dj-analyze``: statistics of a recipe's filters on the data, without dropping anything."""

import sys

from data_juicer.cli.process import _fail, setup_logging


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "-h" in argv or "--help" in argv:
        from data_juicer.config.schema import build_parser

        build_parser("dj-analyze", "Compute and summarise the statistics of a recipe's filters.").print_help()
        return 0
    setup_logging(debug="--debug" in argv)
    from data_juicer.config.recipe import ConfigError, load_recipe
    from data_juicer.core.loader import DataLoadError

    auto = "--auto" in argv
    argv = [a for a in argv if a != "--auto"]
    try:
        recipe = load_recipe(argv, "dj-analyze", check_paths=True)
        from data_juicer.core.analyzer import Analyzer

        stats_file, analysis_dir, result = Analyzer(recipe, auto=auto or recipe.cfg["auto"],
                                                    auto_num=recipe.cfg["auto_num"]).run()
    except ConfigError as e:
        return _fail(str(e))
    except DataLoadError as e:
        return _fail(str(e))
    print(result.to_string())
    print(f"Stats:    {stats_file}")
    print(f"Analysis: {analysis_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
