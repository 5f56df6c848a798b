"""``/metrics`` for the operator: Prometheus text from a registry of this server's own (no global registry).

Latencies are histograms (job seconds by final state, seconds to a job's first verdict), so they can be summed
across servers; HTTP requests are counted by route template, method and status; the gauges (queue, running
jobs, jobs in the store by key name and state) are read when scraped. Key names appear as labels here only:
``/metrics`` is for operators, not for apps.
"""

from __future__ import annotations

import threading
import time
from typing import Iterator, Protocol

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, generate_latest

from viddiff.serve.jobs import JobRow, JobStore

CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
JOB_BUCKETS_S = (1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600)
FIRST_VERDICT_BUCKETS_S = (0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600)


class _Queue(Protocol):
    def queued(self) -> int: ...

    def running(self) -> int: ...


class ServiceMetrics:
    """What the service observes; :meth:`exposition` is the body of ``/metrics``."""

    def __init__(self, store: JobStore, executor: _Queue):
        self.registry = CollectorRegistry()
        self.job_seconds = Histogram(
            "viddiff_job_seconds", "Seconds from a worker taking a comparison to its end, by final state.",
            ["state"], buckets=JOB_BUCKETS_S, registry=self.registry,
        )
        self.first_verdict_seconds = Histogram(
            "viddiff_first_verdict_seconds", "Seconds from a worker taking a comparison to its first verdict.",
            buckets=FIRST_VERDICT_BUCKETS_S, registry=self.registry,
        )
        self.http_requests = Counter(
            "viddiff_http_requests", "HTTP requests by route template, method and status.",
            ["route", "method", "status"], registry=self.registry,
        )
        self.model_call_errors = Counter(
            "viddiff_model_call_errors", "Comparisons stopped by a model endpoint's error.", registry=self.registry
        )
        self.invalid_verdicts = Counter(
            "viddiff_invalid_verdicts", "Verdicts the model never answered validly.", registry=self.registry
        )
        self.registry.register(_StoreGauges(store, executor))
        self._lock = threading.Lock()
        self._started: dict[str, float] = {}
        self._done = [0, 0.0]  # count, seconds: the mean a 429's Retry-After is estimated from

    def job_started(self, job_id: str) -> None:
        with self._lock:
            self._started[job_id] = time.monotonic()

    def verdict(self, job_id: str) -> None:
        """A verdict of ``job_id``: the first one since the job started is timed."""
        with self._lock:
            started = self._started.pop(job_id, None)
        if started is not None:
            self.first_verdict_seconds.observe(time.monotonic() - started)

    def job_ended(self, row: JobRow) -> None:
        with self._lock:
            self._started.pop(row.id, None)
        if row.started_at is None or row.finished_at is None:
            return  # cancelled before a worker took it
        seconds = row.finished_at - row.started_at
        self.job_seconds.labels(state=row.status).observe(seconds)
        if row.status == "done":
            with self._lock:
                self._done = [self._done[0] + 1, self._done[1] + seconds]

    def mean_job_seconds(self) -> float | None:
        count, total = self._done
        return total / count if count else None

    def request(self, route: str, method: str, status: int) -> None:
        self.http_requests.labels(route=route, method=method, status=str(status)).inc()

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


class _StoreGauges:
    """The gauges read when scraped: the executor's queue and running jobs, the store's jobs by key and state."""

    def __init__(self, store: JobStore, executor: _Queue):
        self.store = store
        self.executor = executor

    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily("viddiff_queue_length", "Comparisons waiting for a worker.", value=self.executor.queued())
        yield GaugeMetricFamily("viddiff_running", "Comparisons being run now.", value=self.executor.running())
        jobs = GaugeMetricFamily("viddiff_jobs", "Comparisons in the store by key name and state.", labels=["key", "state"])
        for (key, state), count in sorted(self.store.counts_by_owner_and_status().items()):
            jobs.add_metric([key, state], count)
        yield jobs
