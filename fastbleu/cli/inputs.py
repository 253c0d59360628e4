"""Text files and standard input -> the systems and references of a text-mode run.

:mod:`fastbleu.files` (which loads numpy) is imported here, when the files are
read, not when the command line starts.
"""

from __future__ import annotations

import sys

from ..errors import InputError


def read_text_inputs(args) -> tuple[list[str], list, list]:
    """The systems' names, the systems (text columns or lists of str) and the reference
    streams, read as sacrebleu reads them; an InputError for files that do not match."""
    from ..inputs.files import column_from_bytes, read_lines, split_fields

    read = lambda path: read_lines(path, args.encoding, args.encoding_errors)  # noqa: E731
    if args.test_set:  # sacrebleu's test set, read from $SACREBLEU
        from .testset_mode import test_set_references

        ref_names, refs = test_set_references(args)
    elif args.num_refs > 1:
        if len(args.refs) != 1:
            raise InputError("-nr/--num-refs takes a single, tab-separated reference file")
        refs = split_fields(read(args.refs[0]), args.refs[0], args.num_refs)
    else:
        refs = [read(path) for path in args.refs]
    if args.input is None:
        if sys.stdin is None or sys.stdin.isatty():
            raise InputError("no system output: give files with -i or pipe them into standard "
                             "input")
        column = column_from_bytes(read_stdin(), "<stdin>", args.encoding,
                                   args.encoding_errors, universal_newlines=True)
        fields = split_fields(column, "<stdin>")
        systems = fields if len(fields) > 1 else [column]
        names = [f"System {k + 1}" for k in range(len(systems))]
    else:
        if len(set(args.input)) != len(args.input):
            raise InputError("the same system file is given twice")
        systems = [read(path) for path in args.input]
        names = list(args.input)
    if not args.test_set:
        ref_names = args.refs if args.num_refs == 1 else [f"{args.refs[0]} (field {k + 1})"
                                                          for k in range(len(refs))]
    for name, system in zip(names, systems):
        for ref_name, ref in zip(ref_names, refs):
            if len(ref) != len(system):
                raise InputError(f"{ref_name} has {len(ref)} lines but {name} has "
                                 f"{len(system)}")
    return names, systems, refs


def read_stdin() -> bytes:
    """Standard input's bytes, or an InputError when it cannot be read (closed, a
    directory, opened for writing only)."""
    try:
        return sys.stdin.buffer.read()
    except (OSError, ValueError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        raise InputError(f"standard input cannot be read ({reason})") from None
