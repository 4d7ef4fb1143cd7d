# bindings/python/weft/errors.py - WeftError and status names.
# SPDX-License-Identifier: MIT
"""WeftError and status names."""

from __future__ import annotations

from typing import Optional

from ._loader import _lib


def _s(b: Optional[bytes]) -> str:
    return b.decode("utf-8", "replace") if b is not None else ""


def status_name(status: int) -> str:
    return _s(_lib.weft_status_name(status))


def status_str(status: int) -> str:
    return _s(_lib.weft_status_str(status))


class WeftError(Exception):
    """A weft call failed. `status` is the numeric weft_status, `name` its
    name (e.g. "WEFT_ERR_STALE_ENTITY"), `message` the world's
    weft_last_error text. `recorded` is true when weft itself recorded the
    failure (so, inside a system, it already fails the system's run)."""

    recorded = False

    def __init__(self, status: int, message: str = "", recorded: bool = False) -> None:
        self.status = int(status)
        self.name = status_name(self.status)
        self.message = message
        self.recorded = recorded
        super().__init__("%s: %s" % (self.name, message or status_str(self.status)))
