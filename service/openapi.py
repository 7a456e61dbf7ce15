"""The committed OpenAPI contract (``openapi/openapi.json``) and how it is rendered.

Rendering is deterministic (sorted keys, fixed indentation) so the committed file only
changes when the API does; ``make openapi`` rewrites it and a test fails on drift.
"""

from __future__ import annotations

import json
from pathlib import Path

from litestar.serialization import encode_json

from service.settings import Settings

CONTRACT_PATH = Path(__file__).resolve().parent.parent / "openapi" / "openapi.json"


def render_openapi() -> str:
    from service.app import create_app

    app = create_app(Settings())
    schema = json.loads(encode_json(app.openapi_schema.to_schema()))
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
