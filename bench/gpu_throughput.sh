#!/usr/bin/env bash
# bench/serve_throughput.py on a lent GPU machine (the `device` tool's nvidia-h100-x1): the paper's CLIP
# (ViT-bigG-14, random weights) in fp16, micro-batched vs serialised, at concurrency 1, 4, 16 and 64.
#
# That machine has no network; Python 3.12 and torch 2.11 (with torchvision, numpy, Pillow, PyYAML, timm...)
# are preinstalled. The rest travels as wheels in .whl/ (git-ignored; see bench/GPU.md for the download
# command): open_clip_torch, openai and its HTTP stack, pydantic, av (PyAV reads and writes the clips).
# Extra arguments go to the bench, e.g. --concurrency 16 --rounds 1.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1 OPENAI_API_KEY=dummy
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import torch, torchvision, open_clip; print('torch', torch.__version__, 'torchvision', torchvision.__version__, 'open_clip', open_clip.__version__, 'cuda', torch.cuda.is_available())"
python3 bench/serve_throughput.py --config configs/paper.yaml --device cuda --clip ViT-bigG-14 --precision fp16 \
    --concurrency 1 4 16 64 --rounds 1.5 --threads 64 "$@" 2>&1 | tee "${OUT:-/tmp}/serve_throughput.txt"
