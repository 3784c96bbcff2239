"""Start and stop the local stack: each embedded part unless its env var points at a real service."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from personal_agent.aws_clients import aws_client_at
from personal_agent.db.migrate import apply_migrations
from personal_agent.errors import ConfigurationError
from personal_agent.local.aws import (
    ACCOUNT_ID,
    STATE_MACHINES_DIR,
    LocalAws,
    ensure_state_machine,
    function_arn,
    local_substitutions,
    render_asl,
    start_moto,
)
from personal_agent.local.lambda_registry import LambdaRegistry
from personal_agent.local.ports import ensure_port_free, ensure_reachable
from personal_agent.local.supervisor import Part, Supervisor, popen_exit
from personal_agent.settings import Settings, get_settings

# Durable-run settings that the template passes as DefinitionSubstitutions besides function ARNs.
LOCAL_ASL_PARAMETERS = {
    "ApprovalTimeoutSeconds": "86400",
    "StepTimeoutSeconds": "300",
    # How Tasks run a step: lambda:invoke (moto, and AWS by default) or an Activity (`activity_substitutions`).
    "StepsTaskResource": "arn:aws:states:::lambda:invoke",
    "StepsCallbackResource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
    "TaskTokenKey": "task_token.$",
}


@dataclass
class LocalStack:
    """The running parts and the env vars that point the app at them."""

    settings: Settings
    env: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    _postgres: Any = None
    _valkey: Any = None
    aws: LocalAws | None = None
    registry: LambdaRegistry | None = None
    localstack: Any = None  # a LocalStackServer with PA_AWS=localstack
    activity_worker: Any = None  # its steps' ActivityWorker
    ingest_poller: Any = None
    output_poller: Any = None

    def _time(self, name: str, start: float) -> None:
        self.timings[name] = round(time.perf_counter() - start, 3)

    def start(self, *, with_aws: bool = True) -> LocalStack:
        data_dir = Path(self.settings.data_dir).resolve()
        data_dir.mkdir(parents=True, exist_ok=True)
        self._start_postgres(data_dir)
        self._start_redis(data_dir)
        if with_aws:
            self._start_aws()
        os.environ.update(self.env)
        get_settings.cache_clear()
        return self

    def _start_postgres(self, data_dir: Path) -> None:
        s, t = self.settings, time.perf_counter()
        if s.database_url:
            ensure_reachable(s.database_url, "Postgres", "DATABASE_URL")
            admin_url = s.database_admin_url or s.database_url
            app_url = s.database_url
        else:
            from personal_agent.local.postgres import start_embedded_postgres

            try:
                self._postgres, urls = start_embedded_postgres(data_dir, s.database_app_role)
            except Exception as exc:
                raise ConfigurationError(
                    f"embedded Postgres failed to start ({type(exc).__name__}: {exc}); "
                    f"see {data_dir / 'pgdata' / 'log'} or set DATABASE_URL"
                ) from None
            admin_url, app_url = urls.admin_url, urls.app_url
        apply_migrations(admin_url, app_role=s.database_app_role, app_password=s.database_app_password)
        self.env.update(DATABASE_URL=app_url, DATABASE_ADMIN_URL=admin_url)
        self._time("postgres", t)

    def _start_redis(self, data_dir: Path) -> None:
        s, t = self.settings, time.perf_counter()
        if s.upstash_url:
            ensure_reachable(s.upstash_url, "Upstash REST", "UPSTASH_REDIS_REST_URL")
        elif s.redis_url:
            ensure_reachable(s.redis_url, "Redis", "REDIS_URL")
        else:
            from personal_agent.local.valkey import start_embedded_valkey, stop_orphaned_valkey

            stop_orphaned_valkey(data_dir, s.valkey_port)
            ensure_port_free("127.0.0.1", s.valkey_port, "embedded Valkey", "PA_VALKEY_PORT")
            self._valkey, redis_url = start_embedded_valkey(data_dir, s.valkey_port)
            self.env["REDIS_URL"] = redis_url
        self._time("redis", t)

    def _start_aws(self) -> None:
        s, t = self.settings, time.perf_counter()
        self.registry = LambdaRegistry.from_template()
        if s.aws_endpoint_url:
            ensure_reachable(s.aws_endpoint_url, "AWS endpoint", "AWS_ENDPOINT_URL")
            endpoint = s.aws_endpoint_url
        elif s.aws_emulator == "localstack":
            from personal_agent.local.localstack import LocalStackServer

            ensure_port_free("127.0.0.1", s.localstack_port, "LocalStack", "PA_LOCALSTACK_PORT")
            data_dir = Path(s.data_dir).resolve() / "localstack"
            self.localstack = LocalStackServer(s.localstack_port, data_dir).start()
            endpoint = self.localstack.endpoint_url
            # LocalStack takes a 12-digit access key id as the account, so the ARNs the local stack builds (moto's
            # ACCOUNT_ID) name what it creates; LocalStack checks them where moto does not (S3 -> SQS notifications).
            os.environ.update(AWS_ACCESS_KEY_ID=ACCOUNT_ID, AWS_SECRET_ACCESS_KEY="localstack")
        else:
            ensure_port_free("127.0.0.1", s.moto_port, "moto (local AWS)", "PA_MOTO_PORT")
            self.aws = start_moto(s.moto_port, self.registry, s.aws_region)
            endpoint = self.aws.endpoint_url
        self.env["AWS_ENDPOINT_URL"] = endpoint
        os.environ.update(self.env)
        arns = self.provision_state_machines(endpoint, activities=self.localstack is not None)
        if not s.kms_key_id:
            self.env["PA_KMS_KEY_ID"] = self.provision_kms_key(endpoint)
        if "agent_run" in arns:
            self.env["PA_STATE_MACHINE_ARN"] = arns["agent_run"]
        self._start_knowledge(endpoint)
        self._start_outputs(endpoint)
        # Workflow schedules target the local triggers function, as the template wires the real one.
        if not s.schedule_target_arn:
            self.env["PA_SCHEDULE_TARGET_ARN"] = function_arn("pa-triggers", s.aws_region)
        if not s.scheduler_role_arn:
            self.env["PA_SCHEDULER_ROLE_ARN"] = f"arn:aws:iam::{ACCOUNT_ID}:role/pa-local-scheduler"
        # Data exports go to the data jobs function as on AWS (moto's Lambda runs its handler in this process).
        if not s.export_function and self.aws is not None:
            self.env["PA_EXPORT_FUNCTION"] = "pa-data-jobs"
        self._time("aws", t)

    def _start_knowledge(self, endpoint: str) -> None:
        """The documents bucket, the ingest queue and its DLQ; on moto or LocalStack, the queue's poller too."""
        from personal_agent.local.aws import LambdaDispatcher
        from personal_agent.local.knowledge_queue import FUNCTION, provision_knowledge
        from personal_agent.local.sqs_event_source import SqsEventSource

        s = self.settings
        if not s.documents_bucket:
            origins = [f"http://{host}:{s.port}" for host in ("127.0.0.1", "localhost")]
            self.env.update(provision_knowledge(endpoint, s.aws_region, origins))
        queue_url = self.env.get("PA_INGEST_QUEUE_URL") or s.ingest_queue_url
        if queue_url and (self.aws is not None or self.localstack is not None):
            assert self.registry is not None  # LocalStack runs no Lambda here: the handler runs in this process too
            dispatcher = self.aws.dispatcher if self.aws is not None else LambdaDispatcher(self.registry, s.aws_region)
            self.ingest_poller = SqsEventSource(dispatcher, endpoint, s.aws_region, queue_url, FUNCTION).start()

    def _start_outputs(self, endpoint: str) -> None:
        """The workflow outputs queue and SES sender; with moto in-process, the queue's poller (`pa-deliver`) too."""
        from personal_agent.local.output_queue import FUNCTION, provision_outputs
        from personal_agent.local.sqs_event_source import SqsEventSource

        s = self.settings
        if not s.output_queue_url:
            self.env.update(provision_outputs(endpoint, s.aws_region, s.output_email_from))
        if not s.vapid_public_key:  # web push for approvals: the data dir keeps one key pair, so subscriptions last
            from personal_agent.local.vapid_keys import local_vapid_keys

            self.env.update(local_vapid_keys(Path(s.data_dir).resolve()))
        queue_url = self.env.get("PA_OUTPUT_QUEUE_URL") or s.output_queue_url
        if self.aws is not None and queue_url:
            self.output_poller = SqsEventSource(
                self.aws.dispatcher, endpoint, s.aws_region, queue_url, FUNCTION
            ).start()

    def provision_state_machines(self, endpoint: str, activities: bool = False) -> dict[str, str]:
        """Create every `infra/statemachines/*.asl.json` with local substitutions; return name -> ARN. With
        `activities`, Tasks run behind the `pa-steps` activity, polled by a worker this stack starts."""
        assert self.registry is not None
        region = self.settings.aws_region
        sfn = aws_client_at("stepfunctions", endpoint, region)
        subs = local_substitutions(self.registry, region, LOCAL_ASL_PARAMETERS)
        if activities:
            from personal_agent.local.localstack import activity_substitutions, ensure_activity, start_activity_worker

            activity = ensure_activity(sfn, "pa-steps")
            subs |= activity_substitutions(activity)
            if self.activity_worker is None:
                self.activity_worker = start_activity_worker(endpoint, region, activity, self.registry)
        arns: dict[str, str] = {}
        for path in sorted(STATE_MACHINES_DIR.glob("*.asl.json")):
            name = path.name.removesuffix(".asl.json")
            arns[name] = ensure_state_machine(sfn, f"pa-{name}", render_asl(path, subs))
        return arns

    def provision_kms_key(self, endpoint: str) -> str:
        """The KMS key that wraps provider-key data keys (moto's KMS keeps keys in memory only, so
        locally stored BYOK keys must be entered again after a restart of the dev server)."""
        kms = aws_client_at("kms", endpoint, self.settings.aws_region)
        alias = "alias/pa-provider-keys"
        if not any(a["AliasName"] == alias for a in kms.list_aliases()["Aliases"]):
            key = kms.create_key(Description="Personal Agent provider keys (local)")["KeyMetadata"]["KeyId"]
            kms.create_alias(AliasName=alias, TargetKeyId=key)
        return alias

    def supervisor(self, extra_pids: dict[str, object] | None = None) -> Supervisor:
        """A watcher (not yet started) that restarts each part this stack started when it dies."""
        parts: list[Part] = []
        if self._postgres is not None:
            from personal_agent.local.postgres import PostmasterWatch, restart_embedded_postgres

            pg, watch = self._postgres, PostmasterWatch(self._postgres)
            parts.append(Part("postgres", watch.exited, lambda: restart_embedded_postgres(pg), watch.pid))
        if self._valkey is not None:
            from personal_agent.local.valkey import restart_embedded_valkey, valkey_exit, valkey_pid

            vk = self._valkey
            parts.append(
                Part("valkey", lambda: valkey_exit(vk), lambda: restart_embedded_valkey(vk), lambda: valkey_pid(vk))
            )
        if self.aws is not None:
            parts.append(Part("moto", self.aws.exited, self.aws.restart))
        if self.localstack is not None:
            ls = self.localstack
            parts.append(
                Part("localstack", lambda: popen_exit(ls.process), self._restart_localstack, lambda: ls.process.pid)
            )
        path = Path(self.settings.data_dir).resolve() / "pids.json"
        return Supervisor(parts, path, extra_pids=dict(extra_pids or {}))

    def _restart_localstack(self) -> None:
        """LocalStack keeps nothing across a restart: start it again and create what the stack created in it (the
        same names, so the same ARNs and queue URLs the processes hold)."""
        from personal_agent.local.knowledge_queue import provision_knowledge
        from personal_agent.local.output_queue import provision_outputs

        s, server = self.settings, self.localstack
        server.stop()
        server.start()
        self.provision_state_machines(server.endpoint_url, activities=True)
        if not s.kms_key_id:
            self.provision_kms_key(server.endpoint_url)
        if not s.documents_bucket:
            origins = [f"http://{host}:{s.port}" for host in ("127.0.0.1", "localhost")]
            provision_knowledge(server.endpoint_url, s.aws_region, origins)
        if not s.output_queue_url:
            provision_outputs(server.endpoint_url, s.aws_region, s.output_email_from)

    def stop(self) -> None:
        """Stop what this stack started; data stays under the data dir."""
        if self.ingest_poller is not None:
            self.ingest_poller.stop()
        if self.output_poller is not None:
            self.output_poller.stop()
        if self.aws is not None:
            self.aws.stop()
        if self.activity_worker is not None:
            self.activity_worker.stop()
        if self.localstack is not None:
            self.localstack.stop()
        if self._valkey is not None:
            self._valkey.stop()
        if self._postgres is not None:
            from personal_agent.local.postgres import stop_embedded_postgres

            stop_embedded_postgres(self._postgres)
