# bindings/python/weft/transform.py - the transform plugin (include/weft_transform.h,
# docs/transform.md) from Python: its components as ctypes structures, the
# propagation systems through the weft_transform shared library, and numpy views of
# the GlobalTransform column.
# SPDX-License-Identifier: MIT
"""The transform plugin from Python.

Transform and GlobalTransform are ctypes structures laid out as the C
weft_transform and weft_affine (translation float[3], rotation quaternion
float[4] (x, y, z, w), scale float[3]; a 3x4 column-major matrix).
register(world) registers them under the plugin's names with the same
requirements the C library sets (Transform adds an identity GlobalTransform
and TransformTreeChanged), so Python code and the C plugin share them.

The propagation itself lives in the weft_transform library. add_systems()
loads it as a shared library from $WEFT_TRANSFORM_LIBRARY (full path) or
the path given, and adds its systems to a schedule.

global_matrices(chunk, term) views a chunk's GlobalTransform column as a
zero-copy numpy array of shape (rows, 3, 4): [:, :, 3] is the translation,
[:, :, 0..2] the images of the x, y and z axes.
"""

import ctypes
import os
from typing import Any, Optional

from ._abi import c_component, c_entity, c_status, _vp
from .errors import WeftError

TRANSFORM_NAME = "weft.Transform"
GLOBAL_TRANSFORM_NAME = "weft.GlobalTransform"
TREE_CHANGED_NAME = "weft.TransformTreeChanged"
SET_PROPAGATE = "weft.TransformPropagate"


class Transform(ctypes.Structure):
    """weft_transform: local translation, rotation (x, y, z, w), scale."""
    _fields_ = [("translation", ctypes.c_float * 3), ("rotation", ctypes.c_float * 4),
                ("scale", ctypes.c_float * 3)]

    @classmethod
    def identity(cls, x: float = 0.0, y: float = 0.0, z: float = 0.0) -> "Transform":
        """The identity transform, translated by (x, y, z)."""
        t = cls()
        t.translation[:] = (x, y, z)
        t.rotation[:] = (0.0, 0.0, 0.0, 1.0)
        t.scale[:] = (1.0, 1.0, 1.0)
        return t


class GlobalTransform(ctypes.Structure):
    """weft_affine: 3x4 column-major (x axis, y axis, z axis, translation)."""
    _fields_ = [("m", ctypes.c_float * 12)]

    @classmethod
    def identity(cls) -> "GlobalTransform":
        g = cls()
        g.m[:] = (1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0)
        return g

    @property
    def translation(self):
        return tuple(self.m[9:12])


class TransformTreeChanged(ctypes.Structure):
    """One byte; only its changed tick is used (stamped on the roots of
    the trees in which something moved)."""
    _fields_ = [("_unused", ctypes.c_uint8)]


class TransformIds(ctypes.Structure):
    """weft_transform_ids."""
    _fields_ = [("transform", c_component), ("global_", c_component),
                ("tree_changed", c_component), ("child_of", c_component)]


def register(world) -> Any:
    """Registers Transform, GlobalTransform and TransformTreeChanged in
    `world` under the plugin's names (Transform requires the other two).
    Returns (transform, global_transform, tree_changed) Components. Raises
    WeftError as World.register."""
    g = world.register(GlobalTransform, name=GLOBAL_TRANSFORM_NAME)
    tc = world.register(TransformTreeChanged, name=TREE_CHANGED_NAME)
    t = world.register(Transform, name=TRANSFORM_NAME,
                       requires=[(g, GlobalTransform.identity()), (tc, TransformTreeChanged())])
    return t, g, tc


_plugin_lib = None


def load_library(path: Optional[str] = None) -> ctypes.CDLL:
    """The weft_transform shared library: `path`, else
    $WEFT_TRANSFORM_LIBRARY. It must be built against the same libweft the
    binding loaded (ctest's test_python_transform builds one). Raises
    OSError naming what was tried."""
    global _plugin_lib
    if _plugin_lib is not None and path is None:
        return _plugin_lib
    where = path or os.environ.get("WEFT_TRANSFORM_LIBRARY")
    if not where:
        raise OSError("weft.transform: no weft_transform shared library: pass its path or "
                      "set WEFT_TRANSFORM_LIBRARY")
    lib = ctypes.CDLL(where)
    lib.weft_transform_add_systems.restype = c_status
    lib.weft_transform_add_systems.argtypes = [_vp, _vp, ctypes.POINTER(ctypes.c_uint32)]
    lib.weft_transform_register.restype = c_status
    lib.weft_transform_register.argtypes = [_vp, ctypes.POINTER(TransformIds)]
    lib.weft_transform_compute_global.restype = c_status
    lib.weft_transform_compute_global.argtypes = [_vp, c_entity,
                                                  ctypes.POINTER(GlobalTransform)]
    if path is None:
        _plugin_lib = lib
    return lib


def _check(world, status: int, what: str) -> None:
    if status != 0:
        world._check(status)
        raise WeftError(status, what)   # _check raises for every non-OK status


def add_systems(world, schedule, library: Optional[str] = None) -> None:
    """Adds the propagation system to `schedule` (a weft.Schedule of
    `world`) in the set weft.TransformPropagate, registering the
    components first (register()). Errors: WeftError ALREADY_EXISTS when
    the set is in the schedule already, and those of
    weft_transform_add_systems; OSError when the library is not found."""
    lib = load_library(library)
    register(world)
    node = ctypes.c_uint32(0)
    _check(world, lib.weft_transform_add_systems(world._p(), schedule._p(), ctypes.byref(node)),
           "weft_transform_add_systems")


def compute_global(world, entity: int, library: Optional[str] = None) -> GlobalTransform:
    """entity's GlobalTransform computed now from its ancestors
    (weft_transform_compute_global). Raises WeftError STALE_ENTITY,
    NOT_FOUND (no Transform), RELATIONSHIP (a corrupted hierarchy)."""
    lib = load_library(library)
    out = GlobalTransform()
    _check(world, lib.weft_transform_compute_global(world._p(), entity, ctypes.byref(out)),
           "weft_transform_compute_global")
    return out


def global_matrices(chunk, term: int, mark: bool = False) -> Any:
    """The GlobalTransform column of term `term` in `chunk` as a zero-copy
    numpy float32 array of shape (rows, 3, 4) (row, matrix row, matrix
    column), checked like Chunk.array before every use; None when an
    OPTIONAL term is absent. `mark` as Chunk.array (the plugin is the
    writer of GlobalTransform: leave it False to read). Needs numpy."""
    import numpy as np
    a = chunk.array(term, mark=mark, dtype=np.dtype((np.float32, (12,))))
    if a is None:
        return None
    # column-major 3x4: element (row, col) is m[col * 3 + row]
    return a.reshape(a.shape[0], 4, 3).swapaxes(1, 2)
