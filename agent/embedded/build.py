"""`llama-server`, built once from the llama.cpp source inside the `llama-cpp-python` sdist.

Debian has no llama.cpp package and no prebuilt server wheel runs on this glibc, so the
server is compiled with the machine's cmake and g++ (docs/llm.md has the comparison):

1. `pip download --no-deps --no-binary :all: llama-cpp-python==VERSION` into the cache
   (the sdist is MIT and vendors llama.cpp under vendor/llama.cpp);
2. extract vendor/llama.cpp only;
3. configure a portable build (GGML_NATIVE=OFF: the binary may be shared by machines of
   the same kind, so no -march=native), static, server target only, with no web UI and no
   UI download (LLAMA_USE_PREBUILT_UI=OFF: the build must not reach the network);
4. `cmake --build -j2` under `nice`, then keep bin/llama-server and delete the sources.

The result lives in `<cache>/llama.cpp-VERSION/bin/llama-server` and is never rebuilt when
present: the folder name is the cache key.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from agent.embedded.catalog import EmbeddedError, Progress

LLAMA_CPP_PYTHON_VERSION = "0.3.36"
CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DGGML_NATIVE=OFF",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_TOOLS=ON",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_OPENSSL=OFF",
)
BUILD_JOBS = 2


def build_dir(cache: Path) -> Path:
    return cache / f"llama.cpp-{LLAMA_CPP_PYTHON_VERSION}"


def server_binary(cache: Path) -> Path:
    return build_dir(cache) / "bin" / "llama-server"


def _run(command: list[str], *, cwd: Path | None, log: Path) -> None:
    with log.open("a") as out:
        out.write(f"$ {' '.join(command)}\n")
        out.flush()
        result = subprocess.run(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, check=False)
    if result.returncode != 0:
        tail = log.read_text(errors="replace")[-1500:]
        raise EmbeddedError(f"`{' '.join(command[:3])} ...` failed (exit {result.returncode}); log {log}:\n{tail}")


def download_sdist(cache: Path, progress: Progress) -> Path:
    """The llama-cpp-python sdist in `<cache>/downloads`, fetched by pip if missing."""
    folder = cache / "downloads"
    sdist = folder / f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}.tar.gz"
    if sdist.is_file():
        return sdist
    folder.mkdir(parents=True, exist_ok=True)
    progress(f"downloading the llama-cpp-python {LLAMA_CPP_PYTHON_VERSION} sdist (77 MB) with pip ...")
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
               "--dest", str(folder), f"llama-cpp-python=={LLAMA_CPP_PYTHON_VERSION}"]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0 or not sdist.is_file():
        raise EmbeddedError(f"pip could not download the llama-cpp-python sdist: {result.stderr.strip()[-800:]}")
    return sdist


def _extract_llama_cpp(sdist: Path, into: Path) -> Path:
    prefix = f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}/vendor/llama.cpp/"
    with tarfile.open(sdist) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(prefix)]
        tar.extractall(into, members=members, filter="data")
    return into / prefix.rstrip("/")


def ensure_server(cache: Path, progress: Progress, *, jobs: int = BUILD_JOBS) -> Path:
    """The path of a built `llama-server`, building it first if the cache has none.

    Concurrent callers (two `make llm` at once) each build in their own temporary folder
    and the last rename wins; both results are the same program.
    """
    binary = server_binary(cache)
    if binary.is_file() and os.access(binary, os.X_OK):
        return binary
    if not (shutil.which("cmake") and (shutil.which("c++") or shutil.which("g++"))):
        raise EmbeddedError("building llama-server needs cmake and a C++ compiler: apt-get install cmake g++")
    sdist = download_sdist(cache, progress)
    cache.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="llama-build-", dir=cache) as tmp:
        work = Path(tmp)
        log = cache / f"llama.cpp-{LLAMA_CPP_PYTHON_VERSION}-build.log"
        log.write_text("")
        progress(f"extracting llama.cpp from {sdist.name} ...")
        source = _extract_llama_cpp(sdist, work)
        progress(f"building llama-server (portable, -j{jobs}, niced; ~10 CPU-minutes; log: {log}) ...")
        nice = ["nice", "-n", "10"] if shutil.which("nice") else []
        _run([*nice, "cmake", "-S", str(source), "-B", str(work / "build"), *CMAKE_FLAGS], cwd=work, log=log)
        _run([*nice, "cmake", "--build", str(work / "build"), "--target", "llama-server", "-j", str(jobs)],
             cwd=work, log=log)
        built = work / "build" / "bin" / "llama-server"
        if not built.is_file():
            raise EmbeddedError(f"the build finished without {built}; log {log}")
        staged = work / "llama-server"
        shutil.copy2(built, staged)
        binary.parent.mkdir(parents=True, exist_ok=True)
        staged.replace(binary)
    progress(f"built {binary} in {time.monotonic() - started:.0f} s")
    return binary
