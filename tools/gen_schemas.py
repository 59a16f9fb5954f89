"""Write ``docs/schemas/*.schema.json``, the JSON Schemas of the `score` input and of a
game record, generated from their msgspec shapes (`SituationInput`, `RecordInput`).

Run ``PYTHONPATH=src python tools/gen_schemas.py`` after changing a shape;
``tests/test_situation.py`` checks that the committed files are what this writes.
"""

from __future__ import annotations

import json
from pathlib import Path

from fangcheng.engine.record import record_schema
from fangcheng.scoring.situation import situation_schema

ROOT = Path(__file__).resolve().parent.parent
DIRECTORY = ROOT / "docs" / "schemas"


def render() -> dict[str, str]:
    """Each schema file's name and text."""
    schemas = {"situation.schema.json": situation_schema(), "record.schema.json": record_schema()}
    return {
        name: json.dumps(schema, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
        for name, schema in schemas.items()
    }


def main() -> None:
    for name, text in render().items():
        (DIRECTORY / name).write_text(text, encoding="utf-8")
        print(f"wrote {DIRECTORY / name}")


if __name__ == "__main__":
    main()
