"""``dj-analyze``: statistics of a recipe's filters on the data, without dropping anything."""

import sys

from data_juicer.cli.process import _fail, setup_logging


def main(argv=None) -> int:
    command = argv is None  # the dj-analyze command line (not main([...]) from Python)
    from data_juicer.utils import fast_imports

    fast_imports.install()  # numba without its scipy.linalg BLAS check (utils/fast_imports.py)
    argv = list(sys.argv[1:] if argv is None else argv)
    if "-h" in argv or "--help" in argv:
        from data_juicer.config.schema import build_parser

        build_parser("dj-analyze", "Compute and summarise the statistics of a recipe's filters.").print_help()
        return 0
    setup_logging(debug="--debug" in argv)
    from data_juicer.config.recipe import ConfigError, load_recipe
    from data_juicer.core.loader import DataLoadError
    from data_juicer.core.runner import OpError

    auto = "--auto" in argv
    argv = [a for a in argv if a != "--auto"]
    try:
        recipe = load_recipe(argv, "dj-analyze", check_paths=True)
        from data_juicer.core.analyzer import make_analyzer

        analyzer = make_analyzer(recipe, auto=auto or recipe.cfg["auto"], auto_num=recipe.cfg["auto_num"])
        stats_file, analysis_dir, result = analyzer.run()
    except ConfigError as e:
        return _fail(str(e))
    except DataLoadError as e:
        return _fail(str(e))
    except OpError as e:
        return _fail(f"{e} (set skip_op_error: true to record such samples and go on)", 1)
    except OSError as e:
        return _fail(f"{type(e).__name__}: {e}", 1)
    except KeyboardInterrupt:
        print("dj-analyze: interrupted (Ctrl-C); nothing was published; run the same command again to start over",
              file=sys.stderr)
        return 130
    print(result.to_string())
    print(f"Stats:    {stats_file}")
    print(f"Analysis: {analysis_dir}")
    if analyzer.report_path:
        print(f"Report:   {analyzer.report_path}")
    if command:  # no interpreter teardown at exit (cli/fast_exit.py)
        from data_juicer.cli import fast_exit

        fast_exit.arm(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
