"""Builds intake's optional native accelerators (src/intake/domain/native/*.c), each
`<stem>.c` as the extension module `intake.domain.native.<stem>`.

A wheel carries them; an editable install (`make install`) builds them in place, beside
their sources, where the editable path finds them. Without a C compiler, or with one that
fails, the build goes on without them and says so: intake then runs its pure-Python
code, which gives the same results, only slower (docs/architecture.md, "Native code").

setuptools drives the platform's compiler with the interpreter's own flags, the way any
extension module is built; hatchling stays the backend that picks the package's files.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

NATIVE = Path("src/intake/domain/native")
PACKAGE = "intake.domain.native"


class NativeBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        sources = sorted((Path(self.root) / NATIVE).glob("*.c"))
        if not sources:
            return
        self._scratch = Path(tempfile.mkdtemp(prefix="intake-native-"))
        built = _compile(sources, self._scratch)
        failed = sorted({source.stem for source in sources} - set(built))
        if version == "editable":  # what an earlier build left of a module that failed now
            for stem in failed:
                for stale in (Path(self.root) / NATIVE).glob(f"{stem}.*.so"):
                    stale.unlink()
        if failed:
            message = (
                f"warning: intake's native accelerators {', '.join(failed)} did not build "
                "(no working C compiler?): intake runs its pure-Python code, slower"
            )
            self.app.display_warning(message)
        for library in built.values():
            if version == "editable":
                shutil.copy2(library, Path(self.root) / NATIVE / library.name)
            else:
                inside = NATIVE.relative_to("src") / library.name
                build_data["force_include"][str(library)] = inside.as_posix()
        if built and version != "editable":
            build_data["pure_python"] = False
            build_data["infer_tag"] = True

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        scratch = getattr(self, "_scratch", None)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def _compile(sources: list[Path], scratch: Path) -> dict[str, Path]:
    """Each source's built library by stem; a source that fails to build is left out."""
    from setuptools import Distribution, Extension
    from setuptools.command.build_ext import build_ext
    from setuptools.errors import CCompilerError, ExecError, PlatformError

    built: dict[str, Path] = {}
    for source in sources:
        extension = Extension(
            f"{PACKAGE}.{source.stem}",
            [str(source)],
            depends=[str(header) for header in source.parent.glob("*.h")],
            # No fused multiply-adds: each float is rounded where the Python rounds it.
            extra_compile_args=[] if sys.platform == "win32" else ["-ffp-contract=off"],
        )
        command = build_ext(Distribution({"name": "intake", "ext_modules": [extension]}))
        command.build_lib = str(scratch / "lib")
        command.build_temp = str(scratch / "temp")
        try:
            command.ensure_finalized()
            command.run()
        except (CCompilerError, ExecError, PlatformError, OSError) as error:
            print(f"{source.name}: {error}", file=sys.stderr)
            continue
        built[source.stem] = Path(command.get_ext_fullpath(extension.name))
    return built
