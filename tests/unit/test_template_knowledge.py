"""template.yaml's knowledge pipeline against the code: a private, encrypted, versioned documents bucket whose
`documents/` uploads notify the ingest queue (with a DLQ), the ingest function on that queue reporting partial
batch failures, the permissions each side needs, and an API layer without the embedder or the parsers."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from personal_agent.knowledge.objects import KEY_PREFIX
from personal_agent.local.lambda_registry import load_template

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = load_template(ROOT / "template.yaml")
RESOURCES: dict[str, Any] = TEMPLATE["Resources"]


def _props(name: str) -> dict[str, Any]:
    return dict(RESOURCES[name]["Properties"])


def _statements(function: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for policy in _props(function).get("Policies", []):
        if isinstance(policy, dict) and "Statement" in policy:
            found += policy["Statement"]
    return found


def test_the_documents_bucket_is_private_encrypted_versioned_and_accepts_browser_posts() -> None:
    bucket = _props("DocumentsBucket")
    assert bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]["ServerSideEncryptionByDefault"]
    assert all(bucket["PublicAccessBlockConfiguration"].values())
    assert bucket["VersioningConfiguration"] == {"Status": "Enabled"}  # events name the version ingested
    (rule,) = bucket["CorsConfiguration"]["CorsRules"]
    assert rule["AllowedMethods"] == ["GET", "POST"]  # presigned uploads; attachments' presigned downloads
    assert RESOURCES["DocumentsBucket"]["DeletionPolicy"] == "Retain"


def test_documents_uploads_notify_the_ingest_queue_which_has_a_dead_letter_queue() -> None:
    (notification,) = _props("DocumentsBucket")["NotificationConfiguration"]["QueueConfigurations"]
    assert notification["Event"] == "s3:ObjectCreated:*"
    assert notification["Queue"] == {"Fn::GetAtt": "IngestQueue.Arn"}
    assert notification["Filter"]["S3Key"]["Rules"] == [{"Name": "prefix", "Value": KEY_PREFIX}]
    assert RESOURCES["DocumentsBucket"]["DependsOn"] == "IngestQueuePolicy"  # S3 checks it may send first
    (statement,) = _props("IngestQueuePolicy")["PolicyDocument"]["Statement"]
    assert statement["Principal"] == {"Service": "s3.amazonaws.com"} and statement["Action"] == "sqs:SendMessage"
    queue = _props("IngestQueue")
    assert queue["RedrivePolicy"]["deadLetterTargetArn"] == {"Fn::GetAtt": "IngestDeadLetterQueue.Arn"}
    assert queue["SqsManagedSseEnabled"] and _props("IngestDeadLetterQueue")["SqsManagedSseEnabled"]
    # AWS's advice: the visibility timeout is at least six times the consuming function's timeout.
    assert queue["VisibilityTimeout"] >= 6 * _props("IngestFunction")["Timeout"]
    alarm = _props("IngestDeadLetterAlarm")
    assert alarm["Dimensions"] == [{"Name": "QueueName", "Value": {"Fn::GetAtt": "IngestDeadLetterQueue.QueueName"}}]


def test_the_ingest_function_consumes_the_queue_with_partial_batch_failures_on_the_worker_layer() -> None:
    ingest = _props("IngestFunction")
    assert ingest["CodeUri"] == "functions/ingest/" and ingest["Layers"] == [{"Ref": "WorkerLayer"}]
    (event,) = ingest["Events"].values()
    assert event["Type"] == "SQS"
    assert event["Properties"]["Queue"] == {"Fn::GetAtt": "IngestQueue.Arn"}
    assert event["Properties"]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    reads = next(s for s in _statements("IngestFunction") if s["Sid"] == "ReadAndDropDocuments")
    assert "s3:GetObject" in reads["Action"] and reads["Resource"] == {"Fn::Sub": "${DocumentsBucket.Arn}/documents/*"}


def test_the_api_presigns_queues_jobs_and_asks_the_ingest_function_to_embed_queries() -> None:
    api = _props("ApiFunction")
    env = api["Environment"]["Variables"]
    assert env["PA_KNOWLEDGE_FUNCTION"] == {"Ref": "IngestFunction"}
    globals_env = TEMPLATE["Globals"]["Function"]["Environment"]["Variables"]
    assert globals_env["PA_DOCUMENTS_BUCKET"] == {"Ref": "DocumentsBucket"}
    assert globals_env["PA_INGEST_QUEUE_URL"] == {"Ref": "IngestQueue"}
    uploads = next(s for s in _statements("ApiFunction") if s["Sid"] == "DocumentUploadsAndDeletes")
    assert set(uploads["Action"]) == {"s3:PutObject", "s3:DeleteObject"}
    policies = api["Policies"]
    assert {"SQSSendMessagePolicy": {"QueueName": {"Fn::GetAtt": "IngestQueue.QueueName"}}} in policies
    assert {"LambdaInvokePolicy": {"FunctionName": {"Ref": "IngestFunction"}}} in policies


def test_the_api_layer_leaves_out_the_embedder_and_the_parsers() -> None:
    prune = re.search(r"^API_LAYER_PRUNE := (.+)$", (ROOT / "Makefile").read_text(), re.M)
    assert prune is not None
    assert {"wordllama", "numpy", "tokenizers", "pgvector", "pypdf", "python-docx"} <= set(prune.group(1).split())


def test_the_ingest_function_reads_scans_with_textract() -> None:
    """The layer has no RapidOCR (docs/knowledge.md): OCR goes to Textract, which the function may call."""
    from personal_agent.settings import Settings

    env = _props("IngestFunction")["Environment"]["Variables"]
    assert env["PA_OCR_BACKEND"] == "textract"
    assert Settings(PA_OCR_BACKEND=env["PA_OCR_BACKEND"]).ocr_backend == "textract"
    (ocr,) = [s for s in _statements("IngestFunction") if s.get("Sid") == "TextractOcr"]
    assert (ocr["Effect"], ocr["Action"], ocr["Resource"]) == ("Allow", "textract:DetectDocumentText", "*")


SEARCHING_FUNCTIONS = (
    "ApiFunction",
    "StreamFunction",
    "RunWorkerFunction",
    "StepsFunction",
    "ActivityPollerFunction",
    "PlatformMcpFunction",
)
"""Every function that runs `knowledge.search` (the search endpoint, search_knowledge in a run, the MCP server)."""


def test_the_reranker_is_a_parameter_every_search_reads_and_bedrock_rerank_is_granted_only_when_on() -> None:
    """AWS runs no `auto` (that is none where WordLlama is missing): the stack names the variant it runs."""
    from personal_agent.knowledge.rerank import BEDROCK_MODELS, reranker

    parameter = TEMPLATE["Parameters"]["KnowledgeReranker"]
    assert set(parameter["AllowedValues"]) == {"none", *BEDROCK_MODELS}
    assert parameter["Default"] == "none"
    for value in parameter["AllowedValues"]:  # each one a choice the code accepts
        assert (reranker(value) is None) == (value == "none")
    env = TEMPLATE["Globals"]["Function"]["Environment"]["Variables"]
    assert env["PA_KNOWLEDGE_RERANKER"] == {"Ref": "KnowledgeReranker"}
    assert TEMPLATE["Conditions"]["UsesBedrockReranker"] == {
        "Fn::Not": [{"Fn::Equals": [{"Ref": "KnowledgeReranker"}, "none"]}]
    }
    policy = RESOURCES["BedrockRerankPolicy"]
    assert policy["Condition"] == "UsesBedrockReranker"
    rerank, invoke = policy["Properties"]["PolicyDocument"]["Statement"]
    assert (rerank["Action"], rerank["Resource"]) == ("bedrock:Rerank", "*")
    assert invoke["Action"] == "bedrock:InvokeModel"
    assert invoke["Resource"] == {
        "Fn::Sub": "arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/${KnowledgeReranker}"
    }
    attached = {"Fn::If": ["UsesBedrockReranker", {"Ref": "BedrockRerankPolicy"}, {"Ref": "AWS::NoValue"}]}
    for name in SEARCHING_FUNCTIONS:
        assert attached in _props(name)["Policies"], name
    for name, resource in RESOURCES.items():  # nowhere else
        if name not in SEARCHING_FUNCTIONS and resource["Type"] == "AWS::Serverless::Function":
            assert attached not in resource["Properties"].get("Policies", []), name
