"""``/openapi.json`` as client generators read it: checked field by field, then used for real (a client made by
``openapi-python-client`` runs a comparison, and one with two views per side) and fuzzed (schemathesis, bounded
examples, every check)."""

from __future__ import annotations

import importlib
import io
import re
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from serve_helpers import calibration_toml, wait_until

EVENT_MODELS = ["ProposalEvent", "SegmentationEvent", "VerdictEvent", "ResultEvent", "FailedEvent", "CancelledEvent"]
KEYLESS = {("/healthz", "get"), ("/readyz", "get")}


@pytest.fixture(scope="module")
def schema(served) -> dict:
    return httpx.get(served.url + "/openapi.json").json()


def operations(schema: dict):
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            yield path, method, operation


def test_every_keyed_route_uses_the_bearer_scheme(schema):
    assert schema["components"]["securitySchemes"]["bearer"] == {
        "type": "http", "scheme": "bearer", "description": schema["components"]["securitySchemes"]["bearer"]["description"],
    }
    for path, method, operation in operations(schema):
        names = [p["name"].lower() for p in operation.get("parameters", [])]
        assert "authorization" not in names, (path, method)
        if (path, method) in KEYLESS:
            assert "security" not in operation and "401" not in operation["responses"]
        else:
            assert operation["security"] == [{"bearer": []}], (path, method)
            assert {"401", "403", "429"} <= set(operation["responses"]), (path, method)


def test_errors_are_declared_per_route_as_json_with_their_headers(schema):
    paths = schema["paths"]
    assert set(paths["/v1/comparisons/{job_id}"]["get"]["responses"]) == {"200", "401", "403", "404", "429"}
    assert set(paths["/v1/comparisons"]["post"]["responses"]) == {
        "202", "400", "401", "403", "404", "413", "415", "422", "429", "503",  # 503: the store locked too long
    }
    report = paths["/v1/comparisons/{job_id}/report"]["get"]["responses"]
    assert list(report["200"]["content"]) == ["text/html"]
    for path, method, operation in operations(schema):
        for status, response in operation["responses"].items():
            if status.startswith("4") or status == "503":
                assert response["content"] == {"application/json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
            if status in ("429", "503"):
                assert response["headers"]["Retry-After"]["schema"] == {"type": "integer"}
    assert "HTTPValidationError" not in schema["components"]["schemas"]


def test_the_event_models_are_components_of_the_event_stream(schema):
    stream = schema["paths"]["/v1/comparisons/{job_id}/events"]["get"]["responses"]["200"]["content"]
    assert list(stream) == ["text/event-stream"]
    refs = [one["$ref"] for one in stream["text/event-stream"]["schema"]["oneOf"]]
    assert refs == [f"#/components/schemas/{name}" for name in EVENT_MODELS]
    mapping = stream["text/event-stream"]["schema"]["discriminator"]["mapping"]
    assert set(mapping) == {"proposal", "segmentation", "verdict", "result", "failed", "cancelled"}
    for name in EVENT_MODELS:
        assert name in schema["components"]["schemas"]


def test_the_form_says_what_the_server_refuses_and_post_links_to_the_comparison(schema):
    post = schema["paths"]["/v1/comparisons"]["post"]
    form = post["requestBody"]["content"]["multipart/form-data"]["schema"]["properties"]
    assert form["action"]["minLength"] == 1 and form["action"]["maxLength"] == 2000
    assert form["n_differences"]["minimum"] == 1
    ids = {operation["operationId"] for _, _, operation in operations(schema)}
    links = post["responses"]["202"]["links"]
    assert {link["operationId"] for link in links.values()} == {
        "get_comparison", "get_comparison_events", "get_comparison_report", "delete_comparison",
    } <= ids
    assert all(link["parameters"] == {"job_id": "$response.body#/id"} for link in links.values())


def test_a_generated_client_runs_a_comparison(served, clips, tmp_path):
    generator = shutil.which("openapi-python-client")
    if generator is None:
        pytest.skip("openapi-python-client is not installed (pip install -e '.[dev]')")
    done = subprocess.run(
        [generator, "generate", "--url", served.url + "/openapi.json", "--meta", "none",
         "--output-path", str(tmp_path / "viddiff_client")],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    sys.path.insert(0, str(tmp_path))
    try:
        package = importlib.import_module("viddiff_client")
        api = importlib.import_module("viddiff_client.api.comparisons")
        models = importlib.import_module("viddiff_client.models")
        types = importlib.import_module("viddiff_client.types")
        for name in ("create_comparison", "get_comparison", "list_comparisons"):
            importlib.import_module(f"viddiff_client.api.comparisons.{name}")
        client = package.AuthenticatedClient(base_url=served.url, token=served.new_key("generated-client"))
        with client:
            body = models.CreateComparisonBody(
                action="a square crossing the frame", differences=["the square moves faster", "the square is brighter"],
                video_a=types.File(payload=io.BytesIO(clips["a"].read_bytes()), file_name="a.mp4"),
                video_b=types.File(payload=io.BytesIO(clips["b"].read_bytes()), file_name="b.mp4"),
            )
            created = api.create_comparison.sync(client=client, body=body)
            assert isinstance(created, models.ComparisonCreated), created
            job = wait_until(
                lambda: (got := api.get_comparison.sync(job_id=created.id, client=client)).status in ("done", "failed") and got,
                90, "the comparison to finish",
            )
            assert job.status == "done", job.error
            assert [d.description for d in job.result.differences] == ["the square moves faster", "the square is brighter"]
            assert {d.prediction for d in job.result.differences} <= {"a", "b", "c"}
            assert any(note.startswith("stand-in: ") for note in job.result.notes)
            page = api.list_comparisons.sync(client=client, limit=1)
            assert [c.id for c in page.comparisons] == [created.id]
            two_views = _two_view_comparison(client, models, types, clips, tmp_path)
            assert two_views.status == "done", two_views.error
            assert [d.description for d in two_views.result.differences] == ["the squat is deeper"]
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m == "viddiff_client" or m.startswith("viddiff_client.")]:
            del sys.modules[name]


def _two_view_comparison(client, models, types, clips, tmp_path):
    """A comparison with a second view per side and their calibration, through the generated client's calls."""
    upload_video = importlib.import_module("viddiff_client.api.videos.upload_video")
    upload_calibration = importlib.import_module("viddiff_client.api.calibrations.upload_calibration")
    get_comparison = importlib.import_module("viddiff_client.api.comparisons.get_comparison")
    create_comparison = importlib.import_module("viddiff_client.api.comparisons.create_comparison")

    def file(path):
        return types.File(payload=io.BytesIO(path.read_bytes()), file_name=path.name)

    views = [upload_video.sync(client=client, body=models.UploadVideoBody(video=file(clips[name]))) for name in ("webm", "avi")]
    assert all(isinstance(view, models.Video) for view in views), views
    calibration = upload_calibration.sync(client=client, body=models.UploadCalibrationBody(
        calibration=file(calibration_toml(tmp_path / "setup.toml"))))
    assert isinstance(calibration, models.Calibration) and calibration.cameras == 2, calibration
    created = create_comparison.sync(client=client, body=models.CreateComparisonBody(
        action="a square crossing the frame", differences=["the squat is deeper"], pose=True,
        video_a=file(clips["a"]), video_b=file(clips["b"]), views_a=[views[0].id], views_b=[views[1].id],
        calibration_a_id=calibration.id, calibration_b_id=calibration.id,
    ))
    assert isinstance(created, models.ComparisonCreated), created
    return wait_until(
        lambda: (got := get_comparison.sync(job_id=created.id, client=client)).status in ("done", "failed") and got,
        90, "the two-view comparison to finish",
    )


def test_schemathesis_finds_nothing(served, tmp_path):
    """Every check of schemathesis (status codes, content types, headers, response schemas, Allow, auth,
    positive and negative data, the links) over every operation, a few examples each (bounded: ~15 s)."""
    fuzzer = shutil.which("schemathesis")
    if fuzzer is None:
        pytest.skip("schemathesis is not installed (pip install -e '.[dev]')")
    key = served.new_key("schemathesis")
    done = subprocess.run(
        [fuzzer, "--config-file", str(Path(__file__).with_name("schemathesis.toml")), "run",
         served.url + "/openapi.json", "--header", f"Authorization: Bearer {key}", "--checks", "all",
         "--max-examples", "10", "--seed", "38", "--no-shrink", "--request-timeout", "30", "--warnings", "off"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,  # its cache goes to ./.schemathesis
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    tested = re.search(r"Tested: (\d+)", done.stdout)
    assert tested and int(tested[1]) == len(list(operations(httpx.get(served.url + "/openapi.json").json())))
    assert "No issues found" in done.stdout
