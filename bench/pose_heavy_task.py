"""Make the BlazePose Heavy ``.task`` that ``bench/pose_3d.py --heavy-model`` takes as a third truth.

Google ships BlazePose Heavy for the Tasks API only as a download from its model storage; the npm package
``@mediapipe/pose`` (``npm pack @mediapipe/pose``, version 0.5.1675469404) carries the same network's landmark
model, ``pose_landmark_heavy.tflite``. A Tasks ``.task`` is a zip of a pose detector and a landmark model, each
with TFLite metadata saying its input normalisation; this packs the npm landmark model with the detector that the
``mediapipe`` wheel bundles. Only the bench uses it: nothing in viddiff's runtime or tests needs it.

Usage: python bench/pose_heavy_task.py mediapipe-pose-0.5.1675469404.tgz --out pose_landmarker_heavy_npm.task
"""

from __future__ import annotations

import argparse
import sys
import tarfile
import zipfile
from pathlib import Path


def with_metadata(model: bytes, name: str, mean: float, std: float) -> bytes:
    """``model`` with the metadata the Tasks API reads: a name, an image input normalised as (x - mean) / std,
    and one feature output per output tensor."""
    from mediapipe.tasks.python.metadata.metadata_writers import metadata_writer, writer_utils

    writer = metadata_writer.MetadataWriter.create(bytearray(model)).add_general_info(name)
    writer = writer.add_image_input(norm_mean=[mean], norm_std=[std])
    for _ in writer_utils.get_output_tensor_names(bytearray(model)):
        writer = writer.add_feature_output()
    return bytes(writer.populate()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("tarball", type=Path, help="the npm package @mediapipe/pose as a .tgz")
    parser.add_argument("--variant", choices=("lite", "full", "heavy"), default="heavy")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    import mediapipe

    detector = Path(mediapipe.__file__).parent / "modules" / "pose_detection" / "pose_detection.tflite"
    if not detector.is_file():
        sys.exit(f"error: {detector} missing: this needs the mediapipe wheel that bundles its pose detector")
    with tarfile.open(args.tarball) as tar:
        member = f"package/pose_landmark_{args.variant}.tflite"
        try:
            landmarks = tar.extractfile(member).read()
        except KeyError:
            sys.exit(f"error: {args.tarball} has no {member}: give the npm package @mediapipe/pose")
    parts = {"pose_detector.tflite": with_metadata(detector.read_bytes(), "pose_detector", 127.5, 127.5),
             "pose_landmarks_detector.tflite": with_metadata(landmarks, "pose_landmarks_detector", 0.0, 255.0)}
    with zipfile.ZipFile(args.out, "w", zipfile.ZIP_STORED) as task:
        for name, data in parts.items():  # a fixed date: the same inputs give the same file (and pose cache key)
            task.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)
    print(args.out)


if __name__ == "__main__":
    main()
