"""The report's evidence numbers come from the values, whatever the model named the stage."""

from viddiff.report.evidence import evidence_view
from viddiff.schema import Evidence, MeasurementSpec

SPEC = MeasurementSpec(quantity="knee_angle", statistic="min", stage=0, direction="smaller")


def test_a_stage_name_with_commas_and_colons_leaves_the_values_whole():
    stage = "phase 2: bend, then rise"
    evidence = Evidence(
        key="0", measurement=SPEC, label=f"minimum knee angle during '{stage}'", unit="°", status="measured",
        value_a=92.14, value_b=104.0, stage=stage,
    )
    view = evidence_view(evidence, [stage])
    assert (view.value_a, view.value_b) == ("92.1°", "104°")


def test_an_uncertain_measurement_shows_no_values():
    evidence = Evidence(key="0", measurement=SPEC, label="minimum knee angle", unit="°", status="uncertain", reason="too few frames")
    view = evidence_view(evidence, ["descent"])
    assert (view.value_a, view.value_b, view.measured) == ("", "", False)
