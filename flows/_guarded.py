"""`python -m flows._guarded PARENT MODE -m MODULE ARGS...`: run MODULE as `python -m` would, in
a process that ends when process PARENT does (see flows/lifetime.py). MODE: `pdeathsig` (the
kernel's parent-death signal and the watchdog) or `watch` (the watchdog alone)."""

from __future__ import annotations

import runpy
import signal
import sys

from flows.lifetime import die_with


def main(argv: list[str]) -> None:
    parent, mode, flag, module, *rest = argv
    if flag != "-m":
        raise SystemExit(f"usage: python -m flows._guarded PARENT MODE -m MODULE ARGS... (got {flag})")
    die_with(int(parent), pdeathsig=signal.SIGTERM if mode == "pdeathsig" else None)
    sys.argv = [module, *rest]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
