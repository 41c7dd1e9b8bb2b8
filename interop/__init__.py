"""Import BenchFlow and Harbor tasks as native packages, and export native packages as Harbor tasks.

Depends on taskpkg only. `arena import` and `arena export` (arena/cli.py) call import_task and export_harbor, then
run the static check on what was written. See interop/README.md for the field mapping and defaults.
"""

from interop.detect import detect_format
from interop.errors import InteropError, PackageHasErrors
from interop.harbor_export import export_harbor
from interop.importer import ImportResult, import_task

__all__ = ["ImportResult", "InteropError", "PackageHasErrors", "detect_format", "export_harbor", "import_task"]
