"""``/v1/calibrations``: upload a calibration once (the cameras of a two-view take), reference it by id in comparisons."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from viddiff.serve.errors import ApiError
from viddiff.serve.models import Calibration
from viddiff.serve.routes.common import FILE, KEYED, WRITES, errors, form_schema, owner_dependency
from viddiff.serve.service import Service, calibration_model
from viddiff.serve.uploads import read_form

FORM = form_schema(
    {"calibration": {**FILE, "description": "a Pose2Sim TOML (or viddiff calibrate's) or a Qualisys .qca.txt"}},
    ["calibration"],
)


def router(service: Service) -> APIRouter:
    routes = APIRouter(prefix="/v1/calibrations", tags=["calibrations"])
    owner = owner_dependency(service)

    @routes.post("", status_code=201, response_model=Calibration,
                 responses=errors(*KEYED, *WRITES, 400, 413, 415, 422), openapi_extra=FORM)
    async def upload_calibration(request: Request, who: str = Depends(owner)) -> Calibration:
        form = await read_form(
            dict(request.headers), request.stream(), service.tmp_dir, max_bytes=service.limits.max_upload_bytes,
            text_file_fields=frozenset({"calibration"}), max_text_bytes=service.limits.max_calibration_bytes,
        )
        try:
            upload = form.files.get("calibration")
            if upload is None:
                raise ApiError(422, "calibration is missing: send the file in the field 'calibration' "
                               "(curl: -F calibration=@Calib.qca.txt)")
            return calibration_model(await service.add_calibration(who, upload))
        finally:
            form.discard_files()

    @routes.get("/{calibration_id}", response_model=Calibration, responses=errors(*KEYED, 404))
    async def get_calibration(calibration_id: str, who: str = Depends(owner)) -> Calibration:
        return calibration_model(await service.calibration(who, calibration_id))

    @routes.delete("/{calibration_id}", status_code=204, responses=errors(*KEYED, *WRITES, 404, 409))
    async def delete_calibration(calibration_id: str, who: str = Depends(owner)) -> Response:
        await service.delete_calibration(who, calibration_id)
        return Response(status_code=204)

    return routes
