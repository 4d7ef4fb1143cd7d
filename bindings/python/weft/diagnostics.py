# bindings/python/weft/diagnostics.py - diagnostics: the World methods for the store of named
# measurement series (weft_diag_* in weft.h).
# SPDX-License-Identifier: MIT
"""Diagnostics: named measurement series with a bounded history, its mean,
min and max, and a time-weighted moving average (World.diag_add,
diag_record, diag, diag_history). The App's add_diagnostics_plugin fills
the built-in ones (frame time, FPS, frame count, entity and archetype
counts, per-system times) every update."""

import ctypes
from collections import namedtuple
from typing import List, Optional

from ._abi import WeftDiagDesc, WeftDiagValue
from ._loader import _lib
from ._typing import _WorldInternals
from .errors import _s

DiagValue = namedtuple("DiagValue", "value average smoothed min max time count "
                                    "history_len enabled suffix")
DiagValue.__doc__ = """One diagnostic's state (weft_diag_value): the latest
measurement, the history's mean, min and max, the moving average, the
latest time, measurements held and the capacity, enabled, the unit."""


class _DiagnosticsWorld(_WorldInternals):
    """World methods for diagnostics (a mixin of weft.World)."""

    def diag_add(self, name: str, suffix: Optional[str] = None, history_len: int = 0,
                 smoothing: float = 0.0) -> None:
        """Adds a diagnostic. history_len 0: 120 measurements; smoothing:
        the moving average's time constant in seconds (0: 2/21)."""
        desc = WeftDiagDesc()
        desc.name = name.encode("utf-8")
        desc.suffix = suffix.encode("utf-8") if suffix is not None else None
        desc.history_len = history_len
        desc.smoothing = smoothing
        self._check(_lib.weft_diag_add(self._p(), ctypes.byref(desc)))

    def diag_record(self, name: str, time: float, value: float) -> None:
        """Records `value` measured at `time` (seconds; never earlier than
        the previous measurement's)."""
        self._check(_lib.weft_diag_record(self._p(), name.encode("utf-8"), time, value))

    def diag(self, name: str) -> DiagValue:
        """The DiagValue of diagnostic `name`."""
        out = WeftDiagValue()
        self._check(_lib.weft_diag_get(self._p(), name.encode("utf-8"), ctypes.byref(out)))
        return DiagValue(out.value, out.average, out.smoothed, out.min, out.max, out.time,
                         out.count, out.history_len, bool(out.enabled), _s(out.suffix))

    def diag_history(self, name: str) -> List[float]:
        """The history's values, oldest first."""
        p = self._p()
        key = name.encode("utf-8")
        n = _lib.weft_diag_history(p, key, None, 0)
        if n < 0:
            self._raise_last()
        buf = (ctypes.c_double * max(n, 1))()
        _lib.weft_diag_history(p, key, buf, n)
        return list(buf[:n])

    def diag_set_enabled(self, name: str, on: bool) -> None:
        self._check(_lib.weft_diag_set_enabled(self._p(), name.encode("utf-8"), bool(on)))

    def diag_names(self) -> List[str]:
        """Names of every diagnostic, in order of addition."""
        p = self._p()
        return [_s(_lib.weft_diag_name(p, i)) for i in range(_lib.weft_diag_count(p))]
