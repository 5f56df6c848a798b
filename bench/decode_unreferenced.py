"""CPU time of reading every ``--stride``-th frame with viddiff's PyAV reader, against decoding every frame and
keeping the wanted ones (what the reader did before it let the decoder skip unreferenced H.264 frames).

Both ways use the same number of decoder threads (``viddiff.video.sources.decoder_threads``); each video is
read ``--repeat`` times per way, alternating, and the best CPU time of each way is kept. The frames are
compared pixel for pixel. Without arguments a 10-s 960x720 clip is generated as ``bench/stages.py`` writes
them (x264's defaults: B-frames); pass real videos as arguments to measure those.

    python bench/decode_unreferenced.py [VIDEO ...] [--stride 8] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stages import write_pair  # noqa: E402

from viddiff.video.sources import PyAVSource, decoder_threads, probe_file  # noqa: E402


def every_frame(path: Path, wanted: set[int]) -> list[np.ndarray]:
    """Decode every frame of the file and keep the wanted ones, numbered as the decoder puts them out."""
    import av

    kept = []
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        stream.codec_context.thread_count = decoder_threads()
        for index, frame in enumerate(container.decode(stream)):
            if index in wanted:
                kept.append(frame.to_ndarray(format="rgb24"))
    return kept


def timed(read) -> tuple[float, list[np.ndarray]]:
    start = time.process_time()
    frames = read()
    return time.process_time() - start, frames


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("videos", type=Path, nargs="*")
    parser.add_argument("--stride", type=int, default=8, help="read every stride-th frame (8: 30 fps read at 3.75)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        videos = list(args.videos)
        if not videos:
            videos = [write_pair(Path(tmp))[0]]
        print(f"every {args.stride}th frame, {decoder_threads()} decoder thread(s), best CPU time of {args.repeat}")
        print(f"{'video':<32} {'codec':<6} {'size':>10} {'frames':>7} {'every frame':>12} {'viddiff':>9} {'ratio':>6}"
              f" {'decoded':>8}  identical")
        for path in videos:
            probe = probe_file(path)
            wanted = np.arange(0, probe.n_frames, args.stride)
            source = PyAVSource(probe)
            baseline, ours = [], []
            for _ in range(args.repeat):
                baseline.append(timed(lambda: every_frame(path, set(wanted.tolist()))))
                source.frames_decoded = 0
                ours.append(timed(lambda: list(source.iter_frames(wanted))))
            decoded = source.frames_decoded
            old_s, new_s = min(t for t, _ in baseline), min(t for t, _ in ours)
            same = len(baseline[0][1]) == len(ours[0][1]) == len(wanted) and all(
                np.array_equal(a, b) for a, b in zip(baseline[0][1], ours[0][1])
            )
            size = f"{probe.coded_width}x{probe.coded_height}"
            print(f"{path.name[:32]:<32} {probe.codec:<6} {size:>10} {probe.n_frames:>7} {old_s * 1000:>9.0f} ms "
                  f"{new_s * 1000:>6.0f} ms {new_s / old_s:>5.2f}x {decoded:>8}  {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
