import sys

try:
    from .cli import main
except ImportError as error:  # fastbleu itself cannot start: a broken installation
    if "--debug" in sys.argv or not (error.name or "").startswith("fastbleu"):
        raise
    if sys.stderr is not None:  # never on standard output, even with 2>&-
        print(f"fastbleu: error: broken installation: fastbleu's module {error.name} cannot "
              f"be imported ({error}); reinstall with pip install --force-reinstall fastbleu",
              file=sys.stderr)
    sys.exit(1)

sys.exit(main())
