"""Import BenchFlow, Harbor and older Terminal-Bench tasks as native packages; export native packages as Harbor tasks.

Depends on taskpkg only. The flow is the folder listing: read/ (a foreign task → SourceTask) → map/ (SourceTask →
frontmatter and body) → write/ (the native package), and export/ (native → Harbor). `arena import` and `arena
export` (arena/interop_commands.py) call import_task and export_harbor, then run the static check on what was
written. See interop/README.md for the field mapping and defaults.
"""

from interop.export.harbor import export_harbor, harbor_needed_by
from interop.importer import import_task
from interop.read import detect_format
from interop.source_task import ImportReport, ImportResult, InteropError, PackageHasErrors

__all__ = ["ImportReport", "ImportResult", "InteropError", "PackageHasErrors", "detect_format", "export_harbor",
           "harbor_needed_by", "import_task"]
