"""Everyday comfort and joining in real Chromium: dark mode, folded steps, history search, invitations."""

from __future__ import annotations

import pytest

from tests.agent.test_browser_ui import (  # noqa: F401
    browser_type_launch_args,
    console_errors,
    log_in,
    low_contrast,
    screenshot,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

BODY_BACKGROUND_JS = "getComputedStyle(document.body).backgroundColor"


def _answered_run(collection, alice, **overrides):
    from agent.steps import AuditStep, PlanStep, RetrieveStep, SourceBrief
    from agent.types import FactAudit, SupportingSentence, SupportLabel, Verdict
    from tests.factories import make_chunk, make_citation, make_document, make_run, make_step

    document = make_document(collection=collection, title="Okapi at TREC-3", media_type="application/pdf")
    chunk = make_chunk(document=document, section_title="2 The weighting function", page_start=4, page_end=4,
                       text="BM25 saturates term frequency with the constant k1, set to 1.2 in the experiments.")
    run = make_run(collection=collection, user=alice, question="How does BM25 treat repeated terms?",
                   answer="BM25 saturates repeated terms through k1 [1].", latency_ms=850, **overrides)
    query = "bm25 term frequency saturation"
    # Each audit quotes the sentence it chose for the need (shown under the need, with its source).
    facts = [FactAudit(fact="how BM25 treats repeated terms", label=SupportLabel.SUPPORTED, sentences=[
        SupportingSentence(chunk_id=chunk.pk, quote=chunk.text, label=SupportLabel.SUPPORTED, quote_start=0)])]
    make_step(run=run, step=PlanStep(question=run.question, sub_queries=[query]))
    # Enough steps that, unfolded, they would push a phone's first screen full.
    for attempt in range(4):
        make_step(run=run, step=RetrieveStep(queries=[query, f"{query} {attempt}"], k=5,
                                             per_query={query: [SourceBrief(chunk_id=chunk.pk)]}), attempt=attempt)
        make_step(run=run, step=AuditStep(sources=[chunk.pk], can_retry=True, verdict=Verdict.SUFFICIENT,
                                          facts=facts), attempt=attempt)
    make_citation(run=run, chunk=chunk, marker=1, quote="saturates term frequency with the constant k1")
    return run


def test_dark_mode_follows_the_system_and_keeps_every_text_readable(
    page, live_server, collection, alice, password, console_errors, settings  # noqa: F811
):
    from agent.types import Outcome
    from knowledge.invitations import invitation_create
    from tests.factories import make_run

    settings.OPEN_SIGNUP = True
    _, invitation_token = invitation_create(collection=collection, inviter=alice, email="dana@example.org",
                                            role="editor")
    run = _answered_run(collection, alice)
    make_run(collection=collection, user=alice, question="What was the price of tea in 1850?",
             outcome=Outcome.REFUSAL, answer="", missing_evidence="Nothing is about tea.")
    log_in(page, live_server, alice, password)
    page.goto(f"{live_server.url}/runs/{run.pk}/")
    light = page.evaluate(BODY_BACKGROUND_JS)

    page.emulate_media(color_scheme="dark")
    assert page.evaluate(BODY_BACKGROUND_JS) != light
    # The page really is dark: its background is darker than its text.
    assert page.evaluate("""() => {
      const lum = (s) => s.match(/\\d+/g).slice(0, 3).map(Number).reduce((a, b) => a + b);
      return lum(getComputedStyle(document.body).backgroundColor) < lum(getComputedStyle(document.body).color);
    }""")
    assert low_contrast(page) == []
    page.locator(".answer-text button.cite").click()
    page.locator("#citation-panel mark").wait_for()
    assert low_contrast(page) == []
    screenshot(page, "dark-mode-run-page")
    page.locator("details.stages-card > summary").click()
    assert page.locator(".audit-quotes").first.inner_text() == (
        "BM25 saturates term frequency with the constant k1, set to 1.2 in the experiments. "
        "Okapi at TREC-3, p. 4")
    assert low_contrast(page) == []
    page.emulate_media(color_scheme="light")
    assert low_contrast(page) == []
    page.emulate_media(color_scheme="dark")

    for path in (f"/collections/{collection.slug}/", f"/collections/{collection.slug}/questions/",
                 f"/collections/{collection.slug}/questions/?outcome=REFUSAL", "/collections/",
                 "/ask/", "/settings/tokens/"):
        page.goto(f"{live_server.url}{path}")
        assert low_contrast(page) == [], path
    page.fill("#id_token_name", "notebook")
    page.get_by_role("button", name="Create token").click()
    page.locator("#id_new_token").wait_for()
    assert low_contrast(page) == []
    assert console_errors == []
    page.context.clear_cookies()
    # The joining pages are new: checked in both schemes.
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        for path in ("/accounts/login/", "/accounts/signup/", "/invitations/x/", f"/invitations/{invitation_token}/"):
            page.goto(f"{live_server.url}{path}")
            assert low_contrast(page) == [], (scheme, path)
    page.fill("#id_username", "dana")
    page.get_by_role("button", name="Create my account and join").click()
    page.locator("#err_password2").wait_for()
    assert low_contrast(page) == []
    # Only the answers meant to fail: the unknown link (404, once per scheme) and the incomplete form (400).
    assert [e.split("status of ")[-1] for e in console_errors] == ["404 (Not Found)"] * 2 + ["400 (Bad Request)"]


def test_a_done_runs_answer_shows_on_the_first_screen_of_a_phone_with_the_steps_folded(
    page, live_server, collection, alice, password, console_errors  # noqa: F811
):
    from agent.models import Run
    from agent.types import Outcome

    run = _answered_run(collection, alice)
    page.set_viewport_size({"width": 360, "height": 740})
    log_in(page, live_server, alice, password)
    page.goto(f"{live_server.url}/runs/{run.pk}/")
    steps = page.locator("details.stages-card")
    assert steps.evaluate("d => d.open") is False
    answer = page.locator(".answer-text")
    assert answer.bounding_box()["y"] + answer.bounding_box()["height"] <= 740
    assert page.locator("[data-stage=audit]").first.is_hidden()
    page.locator("details.stages-card > summary").click()
    assert page.locator("[data-stage=audit]").first.is_visible()
    # Unfolded, the audits' quotes wrap within the screen.
    assert page.locator(".audit-quotes q").first.is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 360

    # A run that is still going shows its steps, and folds them when it is done.
    Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING, outcome="")
    page.goto(f"{live_server.url}/runs/{run.pk}/")
    assert steps.evaluate("d => d.open") is True
    run.refresh_from_db()
    run.status, run.outcome = Run.Status.DONE, Outcome.ANSWER
    run.save()
    page.locator("#run[data-final='1']").wait_for()
    page.wait_for_function("() => !document.querySelector('details.stages-card').open")
    assert answer.is_visible()
    assert console_errors == []


def test_the_history_search_finds_my_questions_by_their_words(
    page, live_server, collection, alice, bob, password, console_errors  # noqa: F811
):
    from tests.factories import make_run

    make_run(collection=collection, user=alice, question="How does BM25 saturate term frequency?")
    make_run(collection=collection, user=alice, question="Which encoder does DPR use?")
    make_run(collection=collection, user=bob, question="Bob asks about BM25 too?")
    log_in(page, live_server, alice, password)
    page.goto(f"{live_server.url}/collections/{collection.slug}/questions/")
    rows = page.locator("table.history tbody tr")
    assert rows.count() == 2
    page.get_by_role("searchbox", name="Search my questions").fill("bm25")
    page.get_by_role("button", name="Search").click()
    page.wait_for_url("**/questions/?q=bm25")
    assert rows.count() == 1 and "saturate term frequency" in rows.first.inner_text()
    assert page.get_by_role("searchbox", name="Search my questions").input_value() == "bm25"
    screenshot(page, "history-search")
    assert console_errors == []


def test_an_owner_invites_by_email_and_the_invited_person_joins_through_the_link(
    page, browser, live_server, collection, alice, password, console_errors  # noqa: F811
):
    import re

    from django.core import mail

    log_in(page, live_server, alice, password)
    page.goto(f"{live_server.url}/collections/{collection.slug}/")
    page.fill("#id_invite_email", "dana@example.org")
    page.select_option("#id_invite_role", "editor")
    page.get_by_role("button", name="Send invitation").click()
    page.get_by_text("Invitation sent to dana@example.org as editor.").wait_for()
    assert "pending until" in page.locator("table.invitations").inner_text()
    link = re.search(r"http://\S+/invitations/\S+/", mail.outbox[-1].body).group(0)

    # The invited person, in a browser of their own.
    context = browser.new_context()
    invited = context.new_page()
    invited.goto(link)
    assert "Join " + collection.name in invited.locator("h1").inner_text()
    invited.fill("#id_username", "dana")
    invited.fill("#id_password1", "a-long-unusual-passphrase-42")
    invited.fill("#id_password2", "a-long-unusual-passphrase-42")
    screenshot(invited, "invitation-accept")
    invited.get_by_role("button", name="Create my account and join").click()
    invited.wait_for_url(f"{live_server.url}/collections/{collection.slug}/")
    assert "dana" in invited.locator(".who").inner_text()
    invited.goto(link)
    assert "already been used" in invited.locator("[role=alert]").inner_text()
    context.close()
    page.reload()
    assert "joined as dana" in page.locator("table.invitations").inner_text()
    assert console_errors == []
