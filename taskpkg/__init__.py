"""The task-package model: the spec, its strict parser and the scaffold, shared by validation, training and scoring."""

from taskpkg.diagnostics import Diagnostic, Severity
from taskpkg.loader import LoadResult, load_package
from taskpkg.package import TaskPackage

__all__ = ["Diagnostic", "LoadResult", "Severity", "TaskPackage", "load_package"]
