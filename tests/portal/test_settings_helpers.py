from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from portal.env import env_bool, env_choice, env_int, env_list, env_secret
from tests.conftest import ROOT


def test_env_bool_reads_common_spellings(monkeypatch):
    for raw, expected in [("1", True), ("yes", True), ("On", True), ("0", False), ("false", False)]:
        monkeypatch.setenv("PORTAL_X", raw)
        assert env_bool("PORTAL_X") is expected


def test_env_bool_rejects_nonsense_with_the_variable_name(monkeypatch):
    monkeypatch.setenv("PORTAL_X", "maybe")
    with pytest.raises(ImproperlyConfigured, match=r"PORTAL_X='maybe' is not a boolean"):
        env_bool("PORTAL_X")


def test_env_int_rejects_words_and_values_below_minimum(monkeypatch):
    monkeypatch.setenv("PORTAL_N", "ten")
    with pytest.raises(ImproperlyConfigured, match="not a whole number"):
        env_int("PORTAL_N", 1)
    monkeypatch.setenv("PORTAL_N", "-3")
    with pytest.raises(ImproperlyConfigured, match="below its minimum of 1"):
        env_int("PORTAL_N", 5, minimum=1)
    monkeypatch.delenv("PORTAL_N")
    assert env_int("PORTAL_N", 5) == 5


def test_env_choice_names_the_allowed_values(monkeypatch):
    monkeypatch.setenv("PORTAL_BACKEND", "gpt")
    with pytest.raises(ImproperlyConfigured, match="must be one of: local, openai"):
        env_choice("PORTAL_BACKEND", "local", ("local", "openai"))


def test_env_list_splits_and_trims(monkeypatch):
    monkeypatch.setenv("PORTAL_HOSTS", " a.example , b.example,, ")
    assert env_list("PORTAL_HOSTS", []) == ["a.example", "b.example"]


def test_env_secret_reads_the_file_variant(monkeypatch, tmp_path):
    secret = tmp_path / "key"
    secret.write_text("s3cret\n")
    monkeypatch.setenv("PORTAL_KEY_FILE", str(secret))
    assert env_secret("PORTAL_KEY") == "s3cret"
    monkeypatch.setenv("PORTAL_KEY_FILE", str(tmp_path / "missing"))
    with pytest.raises(ImproperlyConfigured, match="cannot be read"):
        env_secret("PORTAL_KEY")


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    # A clean environment: no PORTAL_* from the test run, and not the async-safety switch
    # the browser tests need inside pytest (a deployment must never set it).
    base = {
        k: v for k, v in os.environ.items() if not k.startswith("PORTAL_") and k != "DJANGO_ALLOW_ASYNC_UNSAFE"
    }
    base.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=base, capture_output=True, text=True, timeout=120
    )


def test_production_settings_refuse_to_start_without_a_secret_key():
    result = _manage("check", PORTAL_DEBUG="0")
    assert result.returncode != 0
    assert "PORTAL_SECRET_KEY" in result.stderr


def test_a_bad_value_stops_start_up_with_a_clear_message():
    result = _manage("check", PORTAL_DEBUG="sometimes")
    assert result.returncode != 0
    assert "PORTAL_DEBUG='sometimes' is not a boolean" in result.stderr


def test_check_deploy_is_clean_with_production_settings(tmp_path):
    result = _manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        PORTAL_DEBUG="0",
        PORTAL_SECRET_KEY="x" * 20 + "a-long-random-production-secret-key-value-0123456789",
        PORTAL_ALLOWED_HOSTS="grounded.example.org",
        PORTAL_VAR_DIR=str(tmp_path),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_mail_goes_to_the_console_unless_an_smtp_host_is_set():
    show = "from django.conf import settings as s; print(s.EMAIL_BACKEND, s.EMAIL_HOST, s.EMAIL_PORT, s.EMAIL_USE_TLS)"
    console = _manage("shell", "-c", show, PORTAL_DEBUG="1")
    # The last line: `shell` may first say how many objects it imported.
    assert console.stdout.splitlines()[-1].split()[0] == "django.core.mail.backends.console.EmailBackend"
    smtp = _manage("shell", "-c", show, PORTAL_DEBUG="1", PORTAL_EMAIL_HOST="smtp.example.org", PORTAL_EMAIL_PORT="465",
                   PORTAL_EMAIL_USE_TLS="0", PORTAL_EMAIL_USE_SSL="1")
    assert smtp.stdout.splitlines()[-1].split() == ["django.core.mail.backends.smtp.EmailBackend", "smtp.example.org", "465", "False"]
    both = _manage("check", PORTAL_DEBUG="1", PORTAL_EMAIL_USE_SSL="1")
    assert both.returncode != 0 and "exclude each other" in both.stderr


def test_the_llm_settings_group_exports_every_setting_it_defines():
    # portal/settings.py takes them with `import *`: one left out of __all__ would vanish.
    import portal.settings_llm as group

    defined = {name for name in vars(group) if name.isupper()}
    assert defined == set(group.__all__)
