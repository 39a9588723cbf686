"""The re-check's program: inside the grading sandbox it runs a student's cells and calls their functions, and sends
back only what the calls returned, as tagged plain values; the comparisons are made outside (course.grading.recheck).

course.grading.recheck sends this file's source to the sandbox's python mode (course.sandbox.answer), which runs it
as __main__ with INPUT = {"cells": [...], "calls": [[name, args, kwargs], ...], "cell_seconds", "call_seconds"}
bound and reads back OUTPUT; run by hand (`python -m course.sandbox.recheck_program < request.json`) it reads the
request on stdin and prints the answer. It imports nothing of the course (the sandbox cannot import it).

recheck_request takes type, the builtin value types, exec, compile, signal and its size limits as default arguments,
bound before any student code runs, so rebinding builtins cannot change its answers; each cell and each call has its
own alarm, so one endless function costs only the items that call it (CallTimeout), not the whole re-check. A
returned value goes back tagged with its exact type (["int", 3], ["tuple", [...]]); anything else is named, not
sent. A raised exception goes back as its class's name and the built-in exception classes it is an instance of, so
a `raises` check is decided outside the student's process.
"""

MAX_PARTS, MAX_DEPTH, MAX_TEXT = 10_000, 20, 100_000  # a returned value's size limits


class CallTimeout(BaseException):
    """A student's cell or function ran past its time in the re-check."""


def recheck_request(
    request,
    run=exec,
    build=compile,
    caught=BaseException,
    signals=__import__("signal"),
    late=CallTimeout,
    syntax=SyntaxError,
    max_parts=MAX_PARTS,
    max_depth=MAX_DEPTH,
    max_text=MAX_TEXT,
):
    """Run the request's cells in one namespace, then each call; the cells' errors and the calls' tagged results."""
    real_type = (0).__class__.__class__
    tags = (
        ((0).__class__, "int"),
        ((0.0).__class__, "float"),
        ((True).__class__, "bool"),
        ("".__class__, "str"),
        ((None).__class__, "none"),
        ([].__class__, "list"),
        (().__class__, "tuple"),
        ({}.__class__, "dict"),
    )
    name_of = real_type.__dict__["__name__"].__get__
    mro_of = real_type.__dict__["__mro__"].__get__
    errors = [
        (known, name)
        for name, known in vars(__import__("builtins")).items()
        if isinstance(known, real_type) and issubclass(known, BaseException)
    ]
    budget = [max_parts]

    class Unsupported(Exception):
        pass

    def tag(value, depth):
        kind = real_type(value)
        name = None
        for known, known_name in tags:  # identity only: a metaclass cannot make a class equal int
            if kind is known:
                name = known_name
        budget[0] -= 1
        if name is None:
            raise Unsupported(name_of(kind))
        if depth > max_depth or budget[0] < 0:
            raise Unsupported("a value nested too deep or too large")
        if name in ("list", "tuple"):
            return [name, [tag(item, depth + 1) for item in value]]
        if name == "dict":
            return [name, [[tag(k, depth + 1), tag(v, depth + 1)] for k, v in {}.__class__.items(value)]]
        if name == "str" and len(value) > max_text:
            raise Unsupported(f"a string longer than {max_text} characters")
        return [name, value] if name != "none" else [name, None]

    def make(entry):  # an argument, built fresh for each call from real types (the student may mutate it)
        name, payload = entry
        if name == "list":
            return [make(item) for item in payload]
        if name == "tuple":
            return ().__class__(make(item) for item in payload)
        if name == "dict":
            return {make(k): make(v) for k, v in payload}
        return payload

    def lineage(error):  # its class's name, then each built-in exception class it is an instance of
        names = [name_of(real_type(error))]
        for base in mro_of(real_type(error)):
            names += [name for known, name in errors if base is known]
        return names

    def ring(*_):
        raise late()

    def timed(seconds, work):
        signals.signal(signals.SIGALRM, ring)  # set again each time: student code may have replaced it
        signals.setitimer(signals.ITIMER_REAL, seconds)
        try:
            return work()
        finally:
            signals.setitimer(signals.ITIMER_REAL, 0)

    def plain(value, kind):  # a real int or str taken from the error, else None (the error may be the student's)
        return value if real_type(value) is kind else None

    def failure(error, compiled, filename):  # [error name, line in the cell or None, message]: data, never str(error)
        line, message = None, None
        try:
            if compiled:  # compile only raises real SyntaxErrors (or a ValueError for a NUL byte)
                line = plain(syntax.__dict__["lineno"].__get__(error), (0).__class__)
                message = plain(syntax.__dict__["msg"].__get__(error), "".__class__)
            else:
                tb = caught.__dict__["__traceback__"].__get__(error)
                while tb is not None:  # the innermost frame of this cell's own code
                    if tb.tb_frame.f_code.co_filename == filename:
                        line = tb.tb_lineno
                    tb = tb.tb_next
                args = caught.__dict__["args"].__get__(error)
                message = plain(args[0], "".__class__) if real_type(args) is ().__class__ and args else None
        except caught:
            pass
        return [name_of(real_type(error)), line, (message or "")[:300]]

    namespace = {"__name__": "__main__"}
    cells = []
    for number, source in enumerate(request["cells"], 1):
        filename = f"<cell {number}>"
        try:
            code = build(source, filename, "exec")
        except caught as error:
            cells.append(failure(error, True, filename))
            continue
        try:
            timed(request["cell_seconds"], lambda: run(code, namespace))
            cells.append(None)
        except caught as error:
            cells.append(failure(error, False, filename))
    results, stuck = [], set()
    for name, args, kwargs in request["calls"]:
        if name in stuck:  # a function that hung once is not given more time on every other check
            results.append(["error", "CallTimeout"])
            continue
        if name not in namespace:  # never defined: its cell failed (see "cells") or the name is wrong
            results.append(["undefined", None])
            continue
        try:
            value = timed(
                request["call_seconds"],
                lambda: namespace[name](*[make(a) for a in args], **{k: make(v) for k, v in kwargs.items()}),
            )
        except caught as error:
            results.append(["error", lineage(error)])
            if real_type(error) is late:
                stuck.add(name)
            continue
        budget[0] = max_parts
        try:
            results.append(["value", tag(value, 0)])
        except Unsupported as unsupported:
            results.append(["type", unsupported.args[0]])
    return {"cells": cells, "results": results}


def main() -> None:
    """Read a request as JSON on stdin and print the answer as JSON: the program run by hand, outside any sandbox
    (what the student's code prints goes to stderr, as in the sandbox)."""
    import json
    import sys

    answers, sys.stdout = sys.stdout, sys.stderr
    answers.write(json.dumps(recheck_request(json.load(sys.stdin))) + "\n")


if __name__ == "__main__":
    if "INPUT" in globals():  # in the sandbox: its runner bound INPUT and reads OUTPUT
        OUTPUT = recheck_request(globals()["INPUT"])
    else:
        main()
