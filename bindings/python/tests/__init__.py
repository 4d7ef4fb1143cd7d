# bindings/python/tests/__init__.py - makes the tests a package for unittest discovery (-t bindings/python).
# SPDX-License-Identifier: MIT
