"""``/v1/videos``: upload a video once, reference it by id in comparisons."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from viddiff.serve.errors import ApiError
from viddiff.serve.models import Video
from viddiff.serve.routes.common import FILE, KEYED, WRITES, errors, form_schema, owner_dependency
from viddiff.serve.service import Service, video_model
from viddiff.serve.uploads import read_form


def router(service: Service) -> APIRouter:
    routes = APIRouter(prefix="/v1/videos", tags=["videos"])
    owner = owner_dependency(service)

    @routes.post("", status_code=201, response_model=Video, responses=errors(*KEYED, *WRITES, 400, 413, 415, 422),
                 openapi_extra=form_schema({"video": FILE}, ["video"]))
    async def upload_video(request: Request, who: str = Depends(owner)) -> Video:
        form = await read_form(dict(request.headers), request.stream(), service.tmp_dir,
                               max_bytes=service.limits.max_upload_bytes, file_fields=frozenset({"video"}))
        try:
            upload = form.files.get("video")
            if upload is None:
                raise ApiError(422, "video is missing: send the file in the field 'video' (curl: -F video=@a.mp4)")
            return video_model(await service.add_video(who, upload, "video"))
        finally:
            form.discard_files()

    @routes.get("/{video_id}", response_model=Video, responses=errors(*KEYED, 404))
    async def get_video(video_id: str, who: str = Depends(owner)) -> Video:
        return video_model(await service.video(who, video_id))

    @routes.delete("/{video_id}", status_code=204, responses=errors(*KEYED, *WRITES, 404, 409))
    async def delete_video(video_id: str, who: str = Depends(owner)) -> Response:
        await service.delete_video(who, video_id)
        return Response(status_code=204)

    return routes
