# bindings/python/weft/_typing.py - the type aliases of the binding's inline annotations (PEP 484); read by type checkers and editors.
# SPDX-License-Identifier: MIT
"""Type aliases used in the binding's annotations. The modules import them
only under typing.TYPE_CHECKING (their annotations are not evaluated at run
time), so nothing here costs an import."""

from __future__ import annotations

import ctypes
from typing import (
    TYPE_CHECKING, Any, Callable, Dict, List, NoReturn, Optional, Tuple, TypeVar, Union,
)

if TYPE_CHECKING:
    from .components import Component, View
    from .queries import Term

#: An entity handle (weft_entity): index in the low 32 bits, generation in
#: the high 32; 0 is never live.
Entity = int

#: What names a component: its Component, its registered ctypes type, its
#: id, or its registered name.
ComponentRef = Union["Component", type, int, str]

#: One component value argument: a ctypes struct instance, a View of one,
#: a (component, value) pair, or a bare component / tag (default value).
Value = Union[ctypes.Structure, ctypes.Union, "View", Tuple[Any, Any], ComponentRef]

#: One query term: a Term (read, write, with_, without, optional, or_,
#: Added, Changed) or a bare component (a READ AND term).
TermLike = Union["Term", ComponentRef]

#: A lifecycle hook: fn(world, entity, component).
Hook = Callable[[Any, int, Any], Any]

#: A ctypes structure type registered as a component.
S = TypeVar("S", bound=ctypes.Structure)


class _WorldInternals:
    """The base of World's per-concept mixins (components.py, queries.py,
    ...). At run time it is empty; for type checkers it declares what
    World itself defines and the mixins use, so that their annotated
    methods check against it."""

    if TYPE_CHECKING:
        _ptr: Optional[int]
        _by_type: Dict[type, Component]
        _by_id: Dict[int, Component]
        _events: Dict[int, Any]
        _callbacks: Dict[Any, Any]
        _keep: List[Any]
        _depth: int
        _cb: Dict[int, int]
        _next_key: int
        _schedules: Dict[Any, Any]
        _system_exc: Any
        _free_user: Any
        _states: Dict[int, Any]
        _keep_state: List[Any]

        def _p(self) -> int: ...
        def _check(self, status: int) -> None: ...
        def _check_slot(self) -> None: ...
        def _clear(self) -> None: ...
        def _handle(self, h: Any) -> Any: ...
        def _enter(self, depth: bool = True) -> None: ...
        def _leave(self, depth: bool = True) -> None: ...
        def _leave_on(self, t: int, depth: bool = True) -> None: ...
        def _store(self, exc: BaseException) -> None: ...
        def _raise_last(self) -> NoReturn: ...
        def _raise_pending(self) -> None: ...
        def component_of(self, x: ComponentRef) -> Component: ...
        def _finish_run(self, status: int, failures: Any) -> None: ...
