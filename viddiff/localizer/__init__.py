"""Stage 2 of VidDiff: find where each proposed stage happens in each video.

Frames and retrieval strings are embedded with CLIP; per-stage frame scores
(``scores``) are decoded into a monotone stage segmentation (``viterbi``, or an
ablation from ``segment``), and each difference gets keyframes from its linked
stages (``keyframes``). The algorithm modules are pure numpy, no I/O.
"""
