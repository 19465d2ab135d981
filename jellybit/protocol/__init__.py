"""The MQTT contract: every topic and every payload, both ways, shared by the worker, the panel and the CLI.

`docs/mqtt-api.md` documents exactly this package (a test checks it against the models).
Nothing else builds topic strings or declares a payload shape.
"""

from jellybit.protocol.published import (
    CandidatePayload,
    ComponentStatus,
    DownloadPayload,
    ErrorInfo,
    EventPayload,
    EvidencePayload,
    FilmPayload,
    InfoPayload,
    JellyfinPayload,
    LastCompleted,
    Payload,
    PlanItemPayload,
    QueueItem,
    ReasonPayload,
    ReconcileStatus,
    ReviewPayload,
    SummaryPayload,
    SystemStatus,
    UpgradePayload,
)
from jellybit.protocol.requests import (
    LANGUAGE_PATTERN,
    MAX_JSON_DEPTH,
    OVERRIDE_ROLES,
    REQUEST_MODELS,
    AddRequest,
    ApplyOverrides,
    ApplyRequest,
    CancelRequest,
    DeferRequest,
    DeleteTitleRequest,
    FileOverride,
    IdRequest,
    ListRequest,
    NotifyRequest,
    Overrides,
    RefineRequest,
    RejectRequest,
    Request,
    TitlesRequest,
    UpgradeRequest,
    json_depth,
    parse_request,
    validation_message,
)
from jellybit.protocol.responses import (
    RESPONSE_MODELS,
    AddResult,
    DeleteTitleResult,
    DownloadDetail,
    ErrorBody,
    LinkRow,
    ListPage,
    NotifyResult,
    RecognitionDetail,
    Refusal,
    Response,
    TitleGroup,
    TitleMember,
    TransitionRow,
    UndoResult,
    response_model,
)
from jellybit.protocol.topics import (
    AVAILABILITY_OFFLINE,
    AVAILABILITY_ONLINE,
    PROTOCOL_VERSION,
    READ_ONLY_COMMANDS,
    Command,
    EventType,
    Topics,
    private_response_topic,
    response_prefix,
)
from jellybit.protocol.vocabulary import *  # noqa: F403  (the enums and limits, listed in its __all__)
from jellybit.protocol.vocabulary import __all__ as _vocabulary

__all__ = [
    "AVAILABILITY_OFFLINE", "AVAILABILITY_ONLINE", "LANGUAGE_PATTERN", "MAX_JSON_DEPTH", "OVERRIDE_ROLES",
    "PROTOCOL_VERSION", "READ_ONLY_COMMANDS", "REQUEST_MODELS", "RESPONSE_MODELS", "AddRequest", "AddResult",
    "ApplyOverrides", "ApplyRequest", "CancelRequest", "CandidatePayload", "Command", "ComponentStatus",
    "FilmPayload",
    "DeferRequest", "DeleteTitleRequest", "DeleteTitleResult", "DownloadDetail", "DownloadPayload",
    "ErrorBody", "ErrorInfo", "EventPayload", "EventType", "EvidencePayload", "FileOverride", "IdRequest",
    "InfoPayload", "JellyfinPayload", "LastCompleted", "LinkRow", "ListPage", "ListRequest", "NotifyRequest",
    "NotifyResult",
    "Overrides", "Payload", "PlanItemPayload", "QueueItem", "ReasonPayload", "RecognitionDetail",
    "ReconcileStatus", "RefineRequest", "Refusal", "RejectRequest", "Request", "Response", "ReviewPayload",
    "SummaryPayload", "SystemStatus", "TitleGroup", "TitleMember", "TitlesRequest", "Topics",
    "TransitionRow", "UndoResult", "UpgradePayload", "UpgradeRequest", "json_depth", "parse_request",
    "private_response_topic", "response_model", "response_prefix", "validation_message", *_vocabulary,
]
