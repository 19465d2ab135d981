"""A recognizer that never decides: every download goes to a human (a safe stand-in)."""

from __future__ import annotations

from jellybit.core.plan import Plan, PlanItem, RecognitionDraft, Role
from jellybit.core.ports import RecognitionRequest
from jellybit.core.reasons import reason


class ReviewOnlyRecognizer:
    """Recognizer port without any recognition: all files listed as ignored, one blocking reason."""

    async def recognize(self, request: RecognitionRequest) -> RecognitionDraft:
        """Hand the download to review, keeping what a human pinned."""
        overrides = request.overrides
        items = tuple(PlanItem(f.path, f.size, Role.IGNORED) for f in request.files)
        return RecognitionDraft(
            media_type=None, title=overrides.get("title"), year=overrides.get("year"), plan=Plan(items),
            reasons=(reason("no_recognizer", "automatic recognition is not installed"),),
        )
