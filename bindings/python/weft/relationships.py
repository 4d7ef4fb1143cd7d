# bindings/python/weft/relationships.py - relationships and hierarchy (World methods).
# SPDX-License-Identifier: MIT
"""Relationships and hierarchy (World methods)."""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, List, Optional

from ._typing import _WorldInternals
from ._abi import RELATIONSHIP_LINKED_DESPAWN, WeftRelationshipDesc, c_entity
from ._loader import _lib
from .components import Component

if TYPE_CHECKING:
    from ._typing import ComponentRef, Entity


class c_entity_struct(ctypes.Structure):
    """Value type of relationship source components: one weft_entity."""
    _fields_ = [("target", c_entity)]


class _RelationshipsWorld(_WorldInternals):
    """World methods for relationships (a mixin of weft.World)."""

    # -- relationships and hierarchy
    def relationship(self, name: str, linked_despawn: bool = False) -> Component:
        """Registers a relationship; returns its source Component (values
        are entities; change them with relate())."""
        desc = WeftRelationshipDesc()
        bname = name.encode("utf-8")
        desc.name = bname
        desc.flags = RELATIONSHIP_LINKED_DESPAWN if linked_despawn else 0
        cid = self._handle(_lib.weft_relationship_register(self._p(), ctypes.byref(desc)))
        comp = Component(self, cid, c_entity_struct, name, 8, 8)
        self._by_id[cid] = comp
        return comp

    def child_of(self) -> Component:
        """The built-in ChildOf relationship's Component."""
        cid = self._handle(_lib.weft_child_of(self._p()))
        if cid not in self._by_id:
            self._by_id[cid] = Component(self, cid, c_entity_struct, "ChildOf", 8, 8)
        return self._by_id[cid]

    def relate(self, source: Entity, rel: ComponentRef, target: Entity) -> None:
        self._check(_lib.weft_relate(self._p(), source, self.component_of(rel).id, target))

    def unrelate(self, source: Entity, rel: ComponentRef) -> None:
        self._check(_lib.weft_unrelate(self._p(), source, self.component_of(rel).id))

    def related(self, source: Entity, rel: ComponentRef) -> Entity:
        return _lib.weft_related(self._p(), source, self.component_of(rel).id)

    @staticmethod
    def _entity_list(ptr, n):
        if not ptr or n.value <= 0:
            return []
        return list((c_entity * n.value).from_address(ctypes.addressof(ptr.contents)))

    def sources(self, target: Entity, rel: ComponentRef) -> List[Entity]:
        """Entities pointing at `target` through `rel` (a copied list)."""
        n = ctypes.c_int32(0)
        ptr = _lib.weft_related_sources(self._p(), target, self.component_of(rel).id,
                                        ctypes.byref(n))
        return self._entity_list(ptr, n)

    def set_parent(self, child: Entity, parent: Entity) -> None:
        self._check(_lib.weft_set_parent(self._p(), child, parent))

    def remove_parent(self, child: Entity) -> None:
        self._check(_lib.weft_remove_parent(self._p(), child))

    def parent(self, e: Entity) -> Entity:
        """The ChildOf parent of e, or 0."""
        return _lib.weft_parent(self._p(), e)

    def children(self, e: Entity) -> List[Entity]:
        """e's children in order (a copied list)."""
        n = ctypes.c_int32(0)
        ptr = _lib.weft_children(self._p(), e, ctypes.byref(n))
        return self._entity_list(ptr, n)

    def ancestors(self, e: Entity, rel: Optional[ComponentRef] = None) -> List[Entity]:
        """Parent first, root last."""
        rid = self.component_of(rel).id if rel is not None else self.child_of().id
        self._clear()
        n = _lib.weft_ancestors(self._p(), e, rid, None, 0)
        if n < 0:
            self._raise_last()
        out = (c_entity * max(1, n))()
        n = _lib.weft_ancestors(self._p(), e, rid, out, n)
        return list(out[:n])

    def descendants(self, e: Entity, rel: Optional[ComponentRef] = None) -> List[Entity]:
        """Breadth first, e excluded."""
        rid = self.component_of(rel).id if rel is not None else self.child_of().id
        self._clear()
        n = _lib.weft_descendants(self._p(), e, rid, None, 0)
        if n < 0:
            self._raise_last()
        out = (c_entity * max(1, n))()
        n = _lib.weft_descendants(self._p(), e, rid, out, n)
        if n < 0:
            self._raise_last()
        return list(out[:n])
