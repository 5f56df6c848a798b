"""Where each VidDiffBench domain's videos come from, and what to tell a user who does not have them.

Fitness and surgery videos ship as ``videos_<domain>.zip`` archives in the
benchmark's Hugging Face repo (``viddiff data download`` fetches them).
Ballsports and music videos are Ego-Exo4D takes and diving videos are
FineDiving clips: both are licensed by their owners and not redistributed,
so viddiff can only say exactly what to request and where to put it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

ARCHIVE_DOMAINS = ("fitness", "surgery")
EGOEXO_DOMAINS = ("ballsports", "music")
FINEDIVING_DOMAINS = ("diving",)
EGOEXO_LICENCE_URL = "https://ego-exo4d-data.org/#download"
EGOEXO_CLI_DOCS = "https://docs.ego-exo4d-data.org/download/"
FINEDIVING_URL = "https://github.com/xujinglin/FineDiving"


def archive_name(domain: str) -> str:
    """File name of a domain's video archive in the dataset repo."""
    return f"videos_{domain}.zip"


def check_advice(domain: str, hf_repo: str, root: Path) -> Optional[str]:
    """One line for ``viddiff data check``: how to get a missing video of ``domain`` (``None``: unknown domain)."""
    if domain in ARCHIVE_DOMAINS:
        return (
            f"{domain} videos ship as data/{archive_name(domain)} in the Hugging Face dataset repo {hf_repo}: "
            f"run `viddiff data download --domain {domain}` to fetch and unpack them into {root}"
        )
    if domain in EGOEXO_DOMAINS:
        return (
            "this video comes from Ego-Exo4D, which is not redistributed: request access from its owners "
            f"({EGOEXO_LICENCE_URL}) under their licence; `viddiff data download --domain {domain}` prints the "
            "take uids to download and where each video goes (the path shown)"
        )
    if domain in FINEDIVING_DOMAINS:
        return (
            f"this video comes from FineDiving, which is not redistributed: request it from its owners ({FINEDIVING_URL}) "
            "under their licence and place the frames at the path shown"
        )
    return None


def egoexo_steps(domains: Sequence[str], uids: Sequence[str], uids_file: Optional[Path], root: Path) -> list[str]:
    """The numbered steps that get the Ego-Exo4D takes of ``domains`` into ``root``."""
    which = " and ".join(domains)
    if uids:
        source = f" ({len(uids)} take uids, from {uids_file})" if uids_file else f" ({len(uids)} take uids)"
        uid_args = " ".join(uids)
        step = f"   egoexo -o EGOEXO_DIR --parts takes --uids {uid_args}{source}"
    else:
        step = (
            "   egoexo -o EGOEXO_DIR --parts takes --uids UID ...  (this dataset revision ships no egoexo4d_uids.json: "
            "take the uids from the Ego-Exo4D takes named in the missing paths)"
        )
    return [
        f"{which}: Ego-Exo4D videos (licensed by their owners, not redistributed):",
        f" 1. sign the Ego-Exo4D licence at {EGOEXO_LICENCE_URL} (approval takes about two days; it comes with "
        "download credentials)",
        f" 2. install the downloader (`pip install ego4d`, set up as {EGOEXO_CLI_DOCS} describes) and fetch the takes:",
        step,
        f" 3. put each take's video at the path the dataset expects under {root}; "
        "`viddiff data check` lists every missing path",
    ]


def finediving_steps(root: Path) -> list[str]:
    """The numbered steps that get the FineDiving clips into ``root``."""
    return [
        "diving: FineDiving videos (licensed by their owners, not redistributed):",
        f" 1. request FineDiving from its authors as {FINEDIVING_URL} describes, under their licence",
        f" 2. unpack it and put each clip's frame folder at the path the dataset expects under {root}; "
        "`viddiff data check` lists every missing path",
    ]
