"""The web client's generated and packaged files: current with the code, and complete."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from fangcheng.tiles.notation import tile_name

ROOT = Path(__file__).resolve().parent.parent
STATIC = ROOT / "src/fangcheng/server/static"


def _tool(name: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_rules_module_is_current_with_the_fan_tables() -> None:
    assert (STATIC / "js/rules.js").read_text(encoding="utf-8") == _tool("gen_web_rules").text()


def test_every_tile_face_and_the_back_has_its_svg() -> None:
    faces = {tile_name(t) for t in range(34)} | {"back"}
    assert {p.stem for p in (STATIC / "tiles").glob("*.svg")} == faces
    for face in faces:
        svg = (STATIC / "tiles" / f"{face}.svg").read_text(encoding="utf-8")
        assert svg.startswith("<svg") and "<title>" in svg
        assert "http" not in svg.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_the_page_loads_nothing_from_elsewhere() -> None:
    """No CDN, no font or script fetched at run time: every address is the app's own."""
    for path in [STATIC / "index.html", STATIC / "app.css", *STATIC.glob("js/*.js")]:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", text), path.name
        assert "@import" not in text and "url(http" not in text, path.name
