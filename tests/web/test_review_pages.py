"""The review core with Django's test client: role gating, JavaScript-off forms, htmx fragments, conflicts.

Every form here is posted the way a browser without JavaScript posts it (no ``HX-Request`` header) and must
redirect; the htmx fragments are asked for with the header and must come back without the page around them.
Steps are real: the strategy engine's output on the frontend's translation of a built-in workload.
"""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from curation.models import AuditEvent, Review, ReviewStatus, Step, VerificationStatus
from curation.services.roles import Role
from curation.views.step_display import pretty_after
from tests.backend.fixtures import builtin, engine_step, user

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def step() -> Step:
    return engine_step(builtin(), strategy="loop_unrolling")


def client_for(name: str, role: Role) -> Client:
    account = user(name, role)
    client = Client()
    client.force_login(account)
    client.account = account  # type: ignore[attr-defined]
    return client


@pytest.fixture
def ann() -> Client:
    return client_for("ann", Role.REVIEWER)


@pytest.fixture
def vic() -> Client:
    return client_for("vic", Role.VIEWER)


def test_anonymous_visitors_are_sent_to_the_login_form(step):
    for url in (reverse("queue"), reverse("step", args=[step.pk])):
        response = Client().get(url)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_a_viewer_sees_the_step_but_no_action_and_is_refused_when_posting(step, vic):
    page = vic.get(reverse("step", args=[step.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Before → after" in html and step.trace_text[:40] in html
    assert 'value="approve"' not in html and "Re-run verification" not in html and 'id="leir-text"' not in html
    refused = vic.post(reverse("review-decide", args=[step.pk]), {"decision": "approve", "version": step.version})
    assert refused.status_code == 403
    assert vic.post(reverse("review-trace", args=[step.pk]), {"trace_text": "x", "version": 1}).status_code == 403
    assert vic.post(reverse("review-verify", args=[step.pk])).status_code == 403
    assert vic.get(reverse("queue")).status_code == 403
    assert not Review.objects.exists()
    step.refresh_from_db()
    assert step.trace_text != "x"


def test_the_step_page_shows_the_structural_diff_with_token_highlights_and_the_site(step, ann):
    html = ann.get(reverse("step", args=[step.pk])).content.decode()
    # loop_unrolling turns block 1's serial L^{16}_{a=0} into U^{16}_{a=0}: one token changes
    assert '<del class="diff-del">L</del>^{16}_{a=0}' in html
    assert '<ins class="diff-ins">U</ins>^{16}_{a=0}' in html
    assert "Block 1 — changed, holds the strategy's site" in html
    assert "Block 2 — unchanged" in html
    assert step.site["where"] in html and "Exactness" in html


def test_the_queue_hands_out_the_next_step_and_assigns_it(step, ann):
    page = ann.get(reverse("queue"))
    assert page.status_code == 200 and '<strong id="queue-count">1</strong>' in page.content.decode()
    response = ann.post(reverse("review-next"))
    assert response.status_code == 302 and response["Location"] == reverse("step", args=[step.pk])
    assert list(step.assigned_to.all()) == [ann.account]
    assert "<td>to you</td>" in ann.get(reverse("queue")).content.decode()


def test_the_queue_filters_by_strategy(step, ann):
    page = ann.get(reverse("queue"), {"strategy": "no_such_strategy"}).content.decode()
    assert '<strong id="queue-count">0</strong>' in page
    empty = ann.post(reverse("review-next"), {"strategy": "no_such_strategy"})
    assert empty.status_code == 302 and empty["Location"] == reverse("queue") + "?strategy=no_such_strategy"


def test_approve_posts_and_redirects_and_undo_takes_it_back(step, ann):
    response = ann.post(reverse("review-decide", args=[step.pk]), {"decision": "approve", "version": step.version})
    assert response.status_code == 302 and response["Location"] == reverse("queue")
    review = Review.objects.get()
    assert (review.reviewer, review.decision) == (ann.account, "approve")
    step.refresh_from_db()
    assert step.review_status == ReviewStatus.IN_REVIEW
    undone = ann.post(reverse("review-undo"))
    assert undone.status_code == 302 and undone["Location"] == reverse("step", args=[step.pk])
    assert not Review.objects.exists()
    step.refresh_from_db()
    assert step.review_status == ReviewStatus.UNREVIEWED


def test_a_rejection_needs_a_typed_reason(step, ann):
    url = reverse("review-decide", args=[step.pk])
    refused = ann.post(url, {"decision": "reject", "version": step.version}, follow=True)
    assert "a rejection needs a typed reason" in refused.content.decode()
    assert not Review.objects.exists()
    ann.post(url, {"decision": "reject", "reason": "trivial_or_shortcut", "version": step.version})
    assert Review.objects.get().reason == "trivial_or_shortcut"


def test_approval_is_disabled_and_refused_until_the_step_verified():
    step = engine_step(builtin(), verified=VerificationStatus.QUEUED)
    client = client_for("ann", Role.REVIEWER)
    html = client.get(reverse("step", args=[step.pk])).content.decode()
    assert 'id="approve" disabled' in html and "Approval needs an equal pass" in html
    refused = client.post(reverse("review-decide", args=[step.pk]), {"decision": "approve", "version": 1},
                          follow=True)
    assert "has not verified yet" in refused.content.decode() and not Review.objects.exists()


def test_a_stale_review_is_refused(step, ann):
    refused = ann.post(reverse("review-decide", args=[step.pk]), {"decision": "approve", "version": 99},
                       follow=True)
    assert "the step changed" in refused.content.decode() and not Review.objects.exists()


def test_editing_the_trace_posts_and_redirects(step, ann):
    response = ann.post(reverse("review-trace", args=[step.pk]),
                        {"trace_text": "A better trace.", "version": step.version})
    assert response.status_code == 302 and response["Location"] == reverse("step", args=[step.pk])
    step.refresh_from_db()
    assert (step.trace_text, step.version) == ("A better trace.", 2)
    assert AuditEvent.objects.filter(step=step, field="trace_text", new="A better trace.").exists()


def test_a_stale_trace_edit_shows_both_versions_and_keeping_theirs_files_the_draft(step, ann):
    bob = client_for("bob", Role.REVIEWER)
    bob.post(reverse("review-trace", args=[step.pk]), {"trace_text": "Bob's trace.", "version": 1})
    refused = ann.post(reverse("review-trace", args=[step.pk]), {"trace_text": "Ann's trace.", "version": 1})
    # redirect-after-POST: a reload of the conflict screen is a GET, never the POST URL (405)
    conflict_url = reverse("review-conflict", args=[step.pk, "trace_text"])
    assert refused.status_code == 303 and refused["Location"] == conflict_url
    conflict = ann.get(conflict_url)
    assert conflict.status_code == 200
    html = conflict.content.decode()
    assert "Bob&#x27;s trace." in html and "Ann&#x27;s trace." in html and "now at version 2" in html
    assert 'name="version" value="2"' in html  # saving "mine" from here is based on their version
    step.refresh_from_db()
    assert step.trace_text == "Bob's trace."
    kept = ann.post(reverse("review-discard", args=[step.pk]), {"field": "trace_text", "draft": "Ann's trace."})
    assert kept.status_code == 302
    assert AuditEvent.objects.filter(step=step, field="discarded_draft:trace_text", old="Ann's trace.").exists()
    assert ann.get(conflict_url).status_code == 302  # resolved: the draft is no longer waiting
    assert ann.post(reverse("review-discard", args=[step.pk]), {"field": "version", "draft": "x"}).status_code == 400


def test_the_live_check_answers_a_fragment_with_line_column_and_caret(step, ann):
    text = pretty_after(step).replace("F^{f32,g}_{tx}+A", "F^{f32,g}_{tx}+*A", 1)
    fragment = ann.post(reverse("review-leir-check", args=[step.pk]), {"leir_text": text}, **HTMX)
    html = fragment.content.decode()
    assert fragment.status_code == 200 and "<html" not in html
    assert "line 2, column" in html and 'class="caret"' in html and "^" in html
    good = ann.post(reverse("review-leir-check", args=[step.pk]), {"leir_text": pretty_after(step)}, **HTMX)
    assert "The program parses and checks." in good.content.decode()


def test_the_check_button_without_javascript_renders_the_whole_page_with_the_problems(step, ann):
    text = "B^{4}_{tx=0}[\n  G^{f32,g}_{tx} = Q^{f32,g}_{tx};\n];\n"
    posted = ann.post(reverse("review-leir-check", args=[step.pk]), {"leir_text": text, "version": 1})
    assert posted.status_code == 303 and "?draft=after_leir" in posted["Location"]
    page = ann.get(posted["Location"])
    html = page.content.decode()
    assert "<html" in html and "problem" in html and "Q^{f32,g}_{tx}" in html


def test_saving_invalid_leir_is_refused_with_the_problems_and_the_text_kept(step, ann):
    text = pretty_after(step).replace("];", "]", 1)
    posted = ann.post(reverse("review-leir", args=[step.pk]), {"leir_text": text, "version": 1})
    assert posted.status_code == 303
    page = ann.get(posted["Location"])
    html = page.content.decode()
    assert page.status_code == 200 and "Not saved" in html and "column" in html
    assert f">{text}</textarea>" in html  # the text is kept, and a reload shows it again
    assert f">{text}</textarea>" in ann.get(posted["Location"]).content.decode()
    step.refresh_from_db()
    assert step.version == 1


def test_saving_leir_queues_reverification_and_disables_approval(step, ann, django_capture_on_commit_callbacks):
    edited = pretty_after(step).replace("L^{16}_{a=0}L^{64}_{c=0}[\n  H", "U^{16}_{a=0}L^{64}_{c=0}[\n  H", 1)
    assert edited != pretty_after(step)
    with django_capture_on_commit_callbacks() as callbacks:
        response = ann.post(reverse("review-leir", args=[step.pk]), {"leir_text": edited, "version": 1})
    assert response.status_code == 302
    assert len(callbacks) == 1  # the verification task, sent once the edit committed
    step.refresh_from_db()
    assert step.verification_status == VerificationStatus.QUEUED and step.version == 2
    page = ann.get(reverse("step", args=[step.pk])).content.decode()
    assert 'id="approve" disabled' in page and 'hx-trigger="every 2s"' in page


def test_rerun_queues_the_verification_task(step, ann, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        response = ann.post(reverse("review-verify", args=[step.pk]))
    assert response.status_code == 302 and len(callbacks) == 1
    step.refresh_from_db()
    assert step.verification_status == VerificationStatus.QUEUED
    assert AuditEvent.objects.filter(step=step, field="verification_status", new="queued").exists()


def test_the_verdict_fragment_polls_only_while_waiting(step, ann):
    url = reverse("review-verdict", args=[step.pk])
    done = ann.get(url, **HTMX).content.decode()
    assert done.lstrip().startswith('<section id="verdict"') and "every 2s" not in done
    Step.objects.filter(pk=step.pk).update(verification_status=VerificationStatus.QUEUED)
    waiting = ann.get(url, **HTMX).content.decode()
    assert 'hx-trigger="every 2s"' in waiting and "<html" not in waiting


def test_history_panel_lists_the_changes(step, ann):
    ann.post(reverse("review-trace", args=[step.pk]), {"trace_text": "Edited.", "version": 1})
    html = ann.get(reverse("step", args=[step.pk])).content.decode()
    assert "History" in html and "trace_text" in html and "Edited." in html


def _history(html: str) -> str:
    return html[html.index('id="history-title"'):]


def test_history_shows_a_compact_escaped_diff_of_a_trace_edit_not_two_copies(step, ann):
    filler = " ".join(f"Sentence {i} stays as it was." for i in range(40))
    ann.post(reverse("review-trace", args=[step.pk]), {"trace_text": filler, "version": 1})
    edited = filler.replace("Sentence 20 stays as it was.", "Sentence 20 now says <b>more</b>.")
    ann.post(reverse("review-trace", args=[step.pk]), {"trace_text": edited, "version": 2})
    history = _history(ann.get(reverse("step", args=[step.pk])).content.decode())
    assert '<span class="diff-del">-Sentence 20 stays as it was.</span>' in history
    assert '<span class="diff-add">+Sentence 20 now says &lt;b&gt;more&lt;/b&gt;.</span>' in history
    assert "<b>more</b>" not in history
    # one line of context either side of the changed sentence, not the 600-character copies
    assert '<span class="diff-same"> Sentence 19 stays as it was.</span>' in history
    assert "Sentence 30 stays" not in history.split("diff-hunk")[-1]


def test_history_diffs_a_leir_edit_line_by_line_in_the_pretty_form(step, ann, django_capture_on_commit_callbacks):
    original = pretty_after(step)
    edited = original.replace("L^{16}_{a=0}L^{64}_{c=0}[\n  H", "U^{16}_{a=0}L^{64}_{c=0}[\n  H", 1)
    with django_capture_on_commit_callbacks():
        ann.post(reverse("review-leir", args=[step.pk]), {"leir_text": edited, "version": 1})
    history = _history(ann.get(reverse("step", args=[step.pk])).content.decode())
    removed = [old for old, new in zip(original.splitlines(), edited.splitlines(), strict=True) if old != new]
    assert len(removed) == 1
    assert f'<span class="diff-del">-{escape(removed[0])}</span>' in history
    assert f'<span class="diff-add">+{escape(removed[0].replace("L^{16}", "U^{16}", 1))}</span>' in history
    assert history.count('class="diff-add"') == 1  # only the changed line, not the program


def escape(text: str) -> str:
    from django.utils.html import escape as html_escape

    return html_escape(text)


def test_every_block_is_also_given_as_math_for_katex(step, ann):
    from django.utils.html import escape

    from leir.latex import program_latex
    from leir.program import program_from_json

    html = ann.get(reverse("step", args=[step.pk])).content.decode()
    after = program_latex(program_from_json(step.after.as_program_json()))
    assert html.count("data-math>") == 2 * len(after)
    assert escape(after[0]) in html


def test_a_stale_leir_edit_shows_both_programs_and_saving_mine_from_there_works(
        step, ann, django_capture_on_commit_callbacks):
    bob = client_for("bob", Role.REVIEWER)
    original = pretty_after(step)
    bobs = original.replace("L^{16}_{a=0}L^{64}_{c=0}[\n  H", "U^{16}_{a=0}L^{64}_{c=0}[\n  H", 1)
    anns = original.replace("L^{16}_{a=0}L^{64}_{c=0}[\n  J", "U^{16}_{a=0}L^{64}_{c=0}[\n  J", 1)
    assert len({original, bobs, anns}) == 3
    url = reverse("review-leir", args=[step.pk])
    with django_capture_on_commit_callbacks():
        assert bob.post(url, {"leir_text": bobs, "version": 1}).status_code == 302
    refused = ann.post(url, {"leir_text": anns, "version": 1})
    assert refused.status_code == 303
    conflict = ann.get(refused["Location"])
    html = conflict.content.decode()
    assert "Edit conflict on the transformed LEIR" in html
    assert f'<pre class="code theirs" id="theirs">{bobs}' in html and f">{anns}</textarea>" in html
    with django_capture_on_commit_callbacks() as callbacks:
        assert ann.post(url, {"leir_text": anns, "version": 2}).status_code == 302
    assert len(callbacks) == 1
    step.refresh_from_db()
    assert step.version == 3 and pretty_after(step) == anns
    # Bob's program is not lost: it is the "from" of Ann's change in the audit trail
    from leir.printer import canonical
    from leir.program import program_from_json

    bobs_canonical = canonical(program_from_json({"tensors": step.after.tensors, "leir": bobs}))
    assert AuditEvent.objects.filter(step=step, field="after_leir", step_version=3).get().old == bobs_canonical


def test_skipping_the_last_step_goes_back_to_the_queue_not_to_the_same_step(step, ann):
    response = ann.post(reverse("review-decide", args=[step.pk]), {"decision": "skip", "version": 1})
    assert response.status_code == 302 and response["Location"] == reverse("queue")


def test_a_disputed_step_tells_a_curator_their_decision_settles_it(step, ann):
    bob = client_for("bob", Role.REVIEWER)
    cat = client_for("cat", Role.CURATOR)
    url = reverse("review-decide", args=[step.pk])
    ann.post(url, {"decision": "approve", "version": 1})
    bob.post(url, {"decision": "reject", "reason": "not_equivalent", "version": 1})
    step.refresh_from_db()
    assert step.review_status == ReviewStatus.DISPUTED
    assert "Your decision as a curator settles it." in cat.get(reverse("step", args=[step.pk])).content.decode()
    assert "A curator settles it." in ann.get(reverse("step", args=[step.pk])).content.decode()
    assert cat.post(reverse("review-next")).headers["Location"] == reverse("step", args=[step.pk])
    cat.post(url, {"decision": "reject", "reason": "not_equivalent", "version": 1})
    step.refresh_from_db()
    assert step.review_status == ReviewStatus.REJECTED
    assert "cat: reject (not equivalent) on v1 — adjudication" in ann.get(
        reverse("step", args=[step.pk])).content.decode()


def test_the_site_loop_is_marked_inside_its_line(step, ann):
    html = ann.get(reverse("step", args=[step.pk])).content.decode()
    # the site is "the loop over a in block 1": that loop's text is marked, the changed L/U inside it
    assert '<mark class="site-token"><del class="diff-del">L</del>^{16}_{a=0}</mark>' in html
    assert '<mark class="site-token"><ins class="diff-ins">U</ins>^{16}_{a=0}</mark>' in html


def test_the_page_routes_leave_the_api_route_names_to_the_api(step):
    # DRF names the step actions step-review / step-verify / step-history; the pages use review-* names
    for name in ("step-review", "step-verify", "step-history", "step-detail"):
        assert reverse(name, args=[step.pk]).startswith("/api/steps/")
    assert reverse("review-decide", args=[step.pk]) == f"/steps/{step.pk}/review/"


def test_rerun_verifies_again_on_the_next_seed_instead_of_reading_the_stored_outcome(
        step, ann, django_capture_on_commit_callbacks):
    from django.conf import settings

    from curation.models import Verification
    from curation.services import verification
    from tests.backend.workers import publisher, purge, run_queued

    broker = publisher(settings.CELERY_BROKER_URL)
    purge(broker, "verify.cpu")
    for seed in range(2):
        with django_capture_on_commit_callbacks(execute=True):
            verification.request_verification(ann.account, step)
        assert run_queued(broker, "verify.cpu") == [("curation.tasks.verify_step", [step.pk, "llvm", seed])]
    seeds = sorted(Verification.objects.filter(state=step.after, parent=step.before)
                   .values_list("seed", flat=True))
    assert seeds == [0, 1]
    step.refresh_from_db()
    assert step.verification_status in (VerificationStatus.EQUAL_PASS, VerificationStatus.PASS)


def test_block_labels_never_name_two_blocks_alike():
    from curation.views.step_display import block_label
    from leir.diff import diff_programs
    from leir.parser import parse_body

    before = parse_body("B^{4}_{tx=0}[C^{f32,g}_{tx}=A^{f32,g}_{tx};];B^{4}_{tx=0}[D^{f32,g}_{tx}=C^{f32,g}_{tx};];")
    after = parse_body("B^{4}_{tx=0}[E^{f32,g}_{tx}=A^{f32,g}_{tx}*2;];B^{4}_{tx=0}[C^{f32,g}_{tx}=A^{f32,g}_{tx};];"
                          "B^{4}_{tx=0}[D^{f32,g}_{tx}=C^{f32,g}_{tx};];")
    labels = [block_label(b.before_index, b.after_index) for b in diff_programs(before, after).blocks]
    assert len(labels) == len(set(labels)) == 3
    assert labels[0] == "1 of the after-state" and labels[1] == "1 → 2"
    assert block_label(3, None) == "4 of the before-state" and block_label(2, 2) == "3"


def test_the_editor_names_the_spot_inside_a_broken_loop_header(step, ann):
    text = pretty_after(step)
    at = text.index("=0}", text.index("\n") + 1)  # a header on a later line
    broken = text[:at] + "= )0}" + text[at + 3:]
    line = broken.count("\n", 0, at) + 1
    column = at - broken.rfind("\n", 0, at) + 2  # the ')' after "= "
    fragment = ann.post(reverse("review-leir-check", args=[step.pk]), {"leir_text": broken}, **HTMX)
    html = fragment.content.decode()
    assert f"line {line}, column {column}" in html and "in loop header" in html
    assert "every loop starts at 0" in html
    assert "line 1, column 1" not in html


def test_a_conflicting_leir_edit_redirects_to_a_get_page_with_the_message_the_draft_and_the_current_version(
        step, ann, django_capture_on_commit_callbacks):
    bob = client_for("bob", Role.REVIEWER)
    original = pretty_after(step)
    bobs = original.replace("L^{16}_{a=0}L^{64}_{c=0}[\n  H", "U^{16}_{a=0}L^{64}_{c=0}[\n  H", 1)
    anns = original.replace("L^{16}_{a=0}L^{64}_{c=0}[\n  J", "U^{16}_{a=0}L^{64}_{c=0}[\n  J", 1)
    url = reverse("review-leir", args=[step.pk])
    with django_capture_on_commit_callbacks():
        bob.post(url, {"leir_text": bobs, "version": 1})
    refused = ann.post(url, {"leir_text": anns, "version": 1})
    assert refused.status_code == 303
    location = refused["Location"]
    for _ in range(2):  # the first visit and a reload show the same
        page = ann.get(location)
        html = page.content.decode()
        assert page.status_code == 200
        assert "Someone changed this step" in html and "now at version 2" in html
        assert f">{anns}</textarea>" in html and f'id="theirs">{bobs}' in html
    assert bob.get(location).status_code == 302  # the draft is Ann's, kept in her session only
    assert ann.get(reverse("review-conflict", args=[step.pk, "version"])).status_code == 400


def test_a_refused_draft_keeps_the_version_it_was_written_against(step, ann):
    text = pretty_after(step).replace("];", "]", 1)
    posted = ann.post(reverse("review-leir", args=[step.pk]), {"leir_text": text, "version": 1})
    ann.post(reverse("review-trace", args=[step.pk]), {"trace_text": "Moved on.", "version": 1})
    html = ann.get(posted["Location"]).content.decode()
    assert 'name="version" value="1"' in html  # saving the draft now is a conflict, not an overwrite
    assert 'name="version" value="2"' in ann.get(reverse("step", args=[step.pk])).content.decode()
