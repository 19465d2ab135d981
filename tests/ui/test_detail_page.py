"""The download page: 404s, recognition, choosing, apply with overrides, confirmations, errors."""

from __future__ import annotations

import pytest
from nicegui import ui
from nicegui.testing import User

from jellybit.ident import new_id
from tests.ui.responder import FakeWorker, download, review
from tests.ui.support import eventually

pytestmark = pytest.mark.nicegui_main_file("ui/app.py")


def in_review(worker: FakeWorker, name: str = "Matrix.1999.1080p") -> str:
    d = download(name=name, state="review", progress=1.0)
    worker.put(d, review(d))
    return d.id


def enabled(user: User, marker: str) -> bool:
    return marked(user, marker).enabled


def marked(user: User, marker: str) -> ui.element:
    """The one element with this marker, shown or hidden (`user.find` sees only the shown ones)."""
    (element,) = [e for e in user.client.elements.values() if marker in e._markers]
    return element


def labelled(user: User, label: str) -> ui.element:
    """The one field with this aria-label."""
    (element,) = [e for e in user.client.elements.values() if e.props.get("aria-label") == label]
    return element


def shown(user: User, marker: str) -> bool:
    """The action bar shows the button (and it works): only what the state allows is there."""
    button = marked(user, marker)
    return button.visible and button.enabled


def texts(element: ui.element) -> list[str]:
    return [e.text for e in element.descendants() if isinstance(e, ui.label)]


async def test_malformed_and_unknown_ids_are_404_pages(worker: FakeWorker, user: User) -> None:
    reply = await user.http_client.get("/download/not-an-id")
    assert reply.status_code == 404
    assert "is not a download id" in reply.text
    unknown = new_id()
    reply = await user.http_client.get(f"/download/{unknown}")
    assert reply.status_code == 404
    assert f"There is no download {unknown}" in reply.text


async def test_review_shows_the_verdict_reasons_candidates_and_files(worker: FakeWorker, user: User) -> None:
    download_id = in_review(worker)
    await user.open(f"/download/{download_id}")
    await user.should_see("Needs your decision", retries=50)
    (decision,) = [e for e in user.find(ui.card).elements if e.props.get("data-section") == "Decision"]
    words = texts(decision)
    # The verdict first (the kind of doubt), then every reason as a sentence, the blocking one first.
    assert words[:2] == ["Needs your decision", "The runner-up is nearly as good as the best candidate"]
    reasons = [w for w in words
               if w in ("Two candidates are close to each other", "The release gives no year")]
    assert reasons == ["Two candidates are close to each other", "The release gives no year"]
    assert words.count("The runner-up is nearly as good as the best candidate") == 1
    assert "The release gives no year to tell films of one title apart" in words
    assert not any("_" in w for w in words)                   # no codes
    await user.should_see("The Matrix Reloaded (2003)")
    await user.should_see("Recommended")
    await user.should_see("country US (from your context)")
    await user.should_see("Apply: The Matrix (1999)")        # next to the recommended, preselected one
    await user.should_see("Matrix.1999.1080p/movie.en.srt")
    await user.should_see("→ movies/The Matrix (1999) [tmdbid-603]/The Matrix (1999) [tmdbid-603].mkv")
    marks = [b.props.get("data-mark") for b in user.find(ui.badge).elements if b.props.get("data-mark")]
    assert marks == ["collision"]
    actions = ("apply", "reject", "defer", "undo", "retry", "relink", "cancel")
    assert {m: shown(user, m) for m in actions} == {
        "apply": True, "reject": True, "defer": True, "undo": False, "retry": False, "relink": False,
        "cancel": True}


async def test_corrections_in_the_file_table_go_into_apply(worker: FakeWorker, user: User) -> None:
    download_id = in_review(worker)
    await user.open(f"/download/{download_id}")
    await user.should_see(marker="file-language", retries=50)
    labelled(user, "Language of movie.en.srt").value = "pt-BR"
    labelled(user, "Season of movie.mkv").value = 2
    labelled(user, "Episodes of movie.mkv").value = "1-2"
    user.find(marker="apply-candidate").click()
    await eventually(lambda: any(c == "apply" for c, _ in worker.requests))
    (body,) = [b for c, b in worker.requests if c == "apply"]
    assert body == {"id": download_id, "candidate_id": "c1", "overrides": {"files": {
        "Matrix.1999.1080p/movie.mkv": {"season": 2, "episodes": [1, 2]},
        "Matrix.1999.1080p/movie.en.srt": {"language": "pt-BR", "episodes": []}}}}   # [] = the default
    await user.should_see("Laid out as you decided", retries=50)


async def test_a_correction_typed_before_choose_and_a_refetch_stays_in_its_input(
        worker: FakeWorker, user: User) -> None:
    """Choose and a refetch that leaves the plan alone do not rebuild the file table: the input being
    typed in stays the same element (a value sent to a replaced input would be lost), and Apply pins it."""
    download_id = in_review(worker)
    await user.open(f"/download/{download_id}")
    await user.should_see(marker="file-episodes", retries=50)
    episodes = labelled(user, "Episodes of movie.mkv")
    episodes.value = "1-2"
    user.find(marker="choose-c2").click()
    await user.should_see("Chosen")
    asked = sum(c == "get" for c, _ in worker.requests)
    d = worker.downloads[download_id]
    worker.put(d, review(d, requested_at="2026-01-02T04:00:00.000000Z"))   # asked again: the page refetches
    await eventually(lambda: sum(c == "get" for c, _ in worker.requests) > asked)
    await user.should_see(marker="apply-candidate")
    assert labelled(user, "Episodes of movie.mkv") is episodes
    assert not episodes.is_deleted
    assert episodes.value == "1-2"
    user.find(marker="apply-candidate").click()
    await eventually(lambda: any(c == "apply" for c, _ in worker.requests))
    (body,) = [b for c, b in worker.requests if c == "apply"]
    assert body == {"id": download_id, "candidate_id": "c2",
                    "overrides": {"files": {"Matrix.1999.1080p/movie.mkv": {"episodes": [1, 2]}}}}


async def test_a_wrong_correction_is_said_and_nothing_is_sent(worker: FakeWorker, user: User) -> None:
    download_id = in_review(worker)
    await user.open(f"/download/{download_id}")
    await user.should_see(marker="file-episodes", retries=50)
    labelled(user, "Episodes of movie.mkv").value = "first"
    user.find(marker="apply").click()
    await eventually(lambda: user.notify.contains("movie.mkv: episodes are numbers like 3, 3-4 or 1, 2"))
    assert not any(c == "apply" for c, _ in worker.requests)


async def test_choose_candidate_and_overrides_go_into_apply(worker: FakeWorker, user: User) -> None:
    download_id = in_review(worker)
    await user.open(f"/download/{download_id}")
    await user.should_see(marker="choose-c2", retries=50)
    user.find(marker="choose-c2").click()
    await user.should_see("Chosen")
    user.find(marker="override-title").type("Матрица: Перезагрузка")
    user.find(marker="override-year").elements.pop().value = 2003
    user.find(marker="apply").click()
    await eventually(lambda: any(c == "apply" for c, _ in worker.requests))
    (body,) = [b for c, b in worker.requests if c == "apply"]
    assert body == {"id": download_id, "candidate_id": "c2",
                    "overrides": {"title": "Матрица: Перезагрузка", "year": 2003}}
    await user.should_see("Done", retries=50)
    assert shown(user, "undo")
    assert not shown(user, "apply")
    await user.should_see("Laid out as you decided")


async def test_action_buttons_survive_live_updates(worker: FakeWorker, user: User) -> None:
    """A live update re-renders the header around the buttons, never the buttons themselves.

    A click on a button that a refresh replaced would reach the server for an element that
    no longer exists and be dropped; the same element must still be there and still work.
    """
    download_id = in_review(worker)
    await user.open(f"/download/{download_id}")
    await user.should_see(marker="apply", retries=50)
    (apply,) = user.find(marker="apply").elements
    undo = marked(user, "undo")             # hidden while in review
    (choose,) = user.find(marker="choose-c2").elements
    for n in range(3):
        renamed = worker.downloads[download_id].model_copy(update={"name": f"Matrix.1999.Remux.{n}"})
        worker.put(renamed, worker.reviews[download_id])
        await user.should_see(f"Matrix.1999.Remux.{n}", retries=50)
    assert user.find(marker="apply").elements == {apply}
    assert not apply.is_deleted
    assert not choose.is_deleted      # same state: the body (candidates, plan) was left alone
    user.find(marker="apply").click()
    await eventually(lambda: any(c == "apply" for c, _ in worker.requests))
    await eventually(lambda: undo.enabled, within=10)     # the same Undo button followed the state
    assert not apply.enabled
    assert marked(user, "undo") is undo


async def test_undo_confirmation_lists_the_links_then_undoes(worker: FakeWorker, user: User) -> None:
    download_id = in_review(worker)
    await user.open(f"/download/{download_id}")
    await user.should_see(marker="apply", retries=50)
    user.find(marker="apply").click()
    await eventually(lambda: worker.downloads[download_id].state == "done")
    await eventually(lambda: enabled(user, "undo"), within=10)
    user.find(marker="undo").click()
    await user.should_see("These 1 file(s) will be removed from the library:")
    await user.should_see("/lib/movies/The Matrix (1999) [tmdbid-603]/The Matrix (1999) [tmdbid-603].mkv")
    assert not any(c == "undo" for c, _ in worker.requests)  # nothing happens before the confirmation
    user.find(marker="confirm").click()
    await eventually(lambda: worker.downloads[download_id].state == "reverted")
    await eventually(lambda: user.notify.contains("Undone: 1 file(s) removed from the library."))


async def test_cancel_with_data_deletion_is_explicit(worker: FakeWorker, user: User) -> None:
    d = worker.put(download(name="Big.Pack", state="downloading", progress=0.5))
    await user.open(f"/download/{d.id}")
    await user.should_see(marker="cancel", retries=50)
    user.find(marker="cancel").click()
    await user.should_see("Jellybit stops handling it; nothing more is laid out.")
    await user.should_not_see("This cannot be undone.")
    user.find("Also remove the torrent and delete its downloaded files").click()
    await user.should_see("This cannot be undone.")
    user.find(marker="confirm").click()
    await eventually(lambda: any(c == "cancel" for c, _ in worker.requests))
    (body,) = [b for c, b in worker.requests if c == "cancel"]
    assert body == {"id": d.id, "delete_data": True, "confirm": True}


async def test_refine_sends_the_hint(worker: FakeWorker, user: User) -> None:
    download_id = in_review(worker)
    await user.open(f"/download/{download_id}")
    await user.should_see(marker="hint", retries=50)
    user.find(marker="hint").type("это фильм 1999 года")
    user.find(marker="refine").click()
    await eventually(lambda: any(c == "refine" for c, _ in worker.requests))
    refines = [b for c, b in worker.requests if c == "refine"]
    assert refines == [{"id": download_id, "hint": "это фильм 1999 года"}]
    await user.should_see("“это фильм 1999 года”", retries=50)


async def test_error_response_and_no_answer_are_shown(worker: FakeWorker, user: User) -> None:
    download_id = in_review(worker)
    await user.open(f"/download/{download_id}")
    await user.should_see(marker="apply", retries=50)
    worker.errors["apply"] = ("conflict", "another active download owns this torrent")
    user.find(marker="apply").click()
    await eventually(lambda: user.notify.contains("another active download owns this torrent"))
    worker.silent.add("reject")
    user.find(marker="reject").click()
    user.find(marker="confirm").click()
    await eventually(lambda: user.notify.contains("no answer from the Jellybit worker within 2 s"), within=15)
    assert worker.downloads[download_id].state == "review"


async def test_retry_a_failed_download_and_defer_a_review(worker: FakeWorker, user: User) -> None:
    failed = worker.put(download(name="Broken", state="failed",
                                 error={"code": "stalled", "message": "no progress for 6 hours"}))
    await user.open(f"/download/{failed.id}")
    await user.should_see("Failed: no progress for 6 hours", retries=50)
    user.find(marker="retry").click()
    await eventually(lambda: worker.downloads[failed.id].state == "queued")
    assert [b for c, b in worker.requests if c == "retry"] == [{"id": failed.id}]
    download_id = in_review(worker)
    await user.open(f"/download/{download_id}")
    await user.should_see("Defer for 1 day", retries=50)
    user.find(marker="defer-24").click()
    await eventually(lambda: any(c == "defer" for c, _ in worker.requests))
    assert [b for c, b in worker.requests if c == "defer"] == [{"id": download_id, "hours": 24.0}]
    await user.should_see("Deferred until 2026-01-03 03:04 UTC", retries=50)
