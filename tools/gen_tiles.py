"""Generate the web client's tile faces: ``src/fangcheng/server/static/tiles/*.svg``.

One SVG per face, named by its notation (``5m.svg``, ``E.svg``, ``C.svg``) and
``back.svg`` for a tile face down. Characters (万 numerals, 萬, winds, 中 發) are glyph
outlines taken from AR PL UKai (Debian's ``fonts-arphic-ukai``, a Kai script like the
brushed faces of real tiles) and written as paths, so a browser draws them the same with
or without a Chinese font. Dots and bamboo are drawn here. Run ``python tools/gen_tiles.py``
once after changing it (needs ``fonttools`` and the font); the output is committed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from fontTools.pens.boundsPen import BoundsPen
from fontTools.pens.svgPathPen import SVGPathPen
from fontTools.pens.transformPen import TransformPen
from fontTools.ttLib import TTCollection

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src/fangcheng/server/static/tiles"
FONT = Path("/usr/share/fonts/truetype/arphic/ukai.ttc")

W, H = 60, 80  # the tile; the face is the top 74, the rest its edge
FACE_H = 74
NAVY, RED, GREEN, BLUE = "#1d2a5c", "#c0262d", "#17784a", "#1f5fa8"
NUMERALS: Final = "一二三四五六七八九"


class Glyphs:
    """Glyph outlines of one font, as SVG paths fitted into a box."""

    def __init__(self, path: Path) -> None:
        self.font = TTCollection(str(path)).fonts[0]
        self.cmap = self.font.getBestCmap()
        self.glyphs = self.font.getGlyphSet()

    def path(self, char: str, x: float, y: float, w: float, h: float) -> str:
        """The outline of ``char`` scaled to fit the box (x, y, w, h), centred in it."""
        glyph = self.glyphs[self.cmap[ord(char)]]
        bounds = BoundsPen(self.glyphs)
        glyph.draw(bounds)
        assert bounds.bounds is not None, char
        x0, y0, x1, y1 = bounds.bounds
        scale = min(w / (x1 - x0), h / (y1 - y0))
        dx = x + (w - (x1 - x0) * scale) / 2 - x0 * scale
        dy = y + (h - (y1 - y0) * scale) / 2 + y1 * scale  # the font's y grows upwards
        pen = SVGPathPen(self.glyphs, ntos=lambda v: f"{v:.1f}".rstrip("0").rstrip("."))
        glyph.draw(TransformPen(pen, (scale, 0, 0, -scale, dx, dy)))
        return pen.getCommands()


def tile(body: str, title: str, back: bool = False) -> str:
    face = "url(#b)" if back else "url(#f)"
    stops = (
        '<stop offset="0" stop-color="#2f9c6e"/><stop offset="1" stop-color="#1d6b4a"/>'
        if back
        else '<stop offset="0" stop-color="#fffdf6"/><stop offset="1" stop-color="#efe7d2"/>'
    )
    grad = "b" if back else "f"
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}">'
        f"<title>{title}</title>"
        f'<defs><linearGradient id="{grad}" x1="0" y1="0" x2="0.3" y2="1">{stops}'
        "</linearGradient></defs>"
        f'<rect x="0.5" y="0.5" width="{W - 1}" height="{H - 1}" rx="7" fill="#c9b98f"'
        ' stroke="#8a7a55"/>'
        f'<rect x="1.5" y="1.5" width="{W - 3}" height="{FACE_H - 2}" rx="6" fill="{face}"/>'
        f"{body}</svg>\n"
    )


def dot(cx: float, cy: float, r: float, color: str) -> str:
    """One 筒 pip: a ring, a band, a centre."""
    return (
        f'<circle cx="{cx}" cy="{cy}" r="{r}" fill="{color}"/>'
        f'<circle cx="{cx}" cy="{cy}" r="{r * 0.72:.2f}" fill="#fffdf6"/>'
        f'<circle cx="{cx}" cy="{cy}" r="{r * 0.52:.2f}" fill="{color}"/>'
        f'<circle cx="{cx}" cy="{cy}" r="{r * 0.18:.2f}" fill="#fffdf6"/>'
    )


def stick(cx: float, cy: float, h: float, color: str) -> str:
    """One 条 pip: a bamboo stick with a node in the middle."""
    w = 7.6
    x, y = cx - w / 2, cy - h / 2
    return (
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{w}" height="{h:.1f}" rx="3" fill="{color}"/>'
        f'<rect x="{x - 0.8:.1f}" y="{cy - 1.1:.1f}" width="{w + 1.6:.1f}" height="2.2" rx="1"'
        f' fill="{color}"/>'
        f'<line x1="{cx}" y1="{y + 2:.1f}" x2="{cx}" y2="{y + h - 2:.1f}" stroke="#fffdf6"'
        ' stroke-width="1.1" stroke-linecap="round" opacity="0.8"/>'
    )


# Pip positions on the face (x, y) and their colours, by number: the usual layouts.
_C, _L, _R = 30.0, 17.0, 43.0
_DOTS: Final[dict[int, list[tuple[float, float, str]]]] = {
    2: [(_C, 20, GREEN), (_C, 54, BLUE)],
    3: [(14, 14, BLUE), (_C, 37, RED), (46, 60, GREEN)],
    4: [(_L, 19, BLUE), (_R, 19, GREEN), (_L, 55, GREEN), (_R, 55, BLUE)],
    5: [(16, 16, BLUE), (44, 16, GREEN), (_C, 37, RED), (16, 58, GREEN), (44, 58, BLUE)],
    6: [(_L, 13, GREEN), (_R, 13, GREEN)] + [(x, y, RED) for y in (39, 60) for x in (_L, _R)],
    7: [(13, 11, GREEN), (_C, 19, GREEN), (47, 27, GREEN)]
    + [(x, y, RED) for y in (44, 62) for x in (_L, _R)],
    8: [(x, y, BLUE) for y in (11, 28, 45, 62) for x in (_L, _R)],
    9: [(x, y, c) for y, c in ((13, BLUE), (37, RED), (61, GREEN)) for x in (12.5, _C, 47.5)],
}
_DOT_R: Final = {2: 11, 3: 9, 4: 10, 5: 9, 6: 8.5, 7: 7.5, 8: 7.5, 9: 8}

_STICKS: Final[dict[int, list[tuple[float, float, str]]]] = {
    2: [(_C, 20, GREEN), (_C, 54, BLUE)],
    3: [(_C, 20, GREEN), (19, 54, BLUE), (41, 54, BLUE)],
    4: [(19, 20, BLUE), (41, 20, GREEN), (19, 54, GREEN), (41, 54, BLUE)],
    5: [(15, 20, GREEN), (45, 20, BLUE), (_C, 37, RED), (15, 54, BLUE), (45, 54, GREEN)],
    6: [(x, y, c) for y, c in ((20, GREEN), (54, BLUE)) for x in (14, _C, 46)],
    7: [(_C, 12, RED)] + [(x, y, c) for y, c in ((38, GREEN), (62, BLUE)) for x in (14, _C, 46)],
    8: [(x, y, c) for y, c in ((20, GREEN), (54, BLUE)) for x in (10, 23, 37, 50)],
    9: [(x, y, RED if x == _C else c) for y, c in ((13, GREEN), (37, BLUE), (61, GREEN))
        for x in (14, _C, 46)],
}  # fmt: skip
_STICK_H: Final = {2: 28, 3: 28, 4: 28, 5: 26, 6: 28, 7: 20, 8: 28, 9: 20}


def one_dot() -> str:
    """一筒: one large ornate circle."""
    c, y = 30, 37
    rings = [(25, BLUE), (21.5, "#fffdf6"), (19, GREEN), (15, "#fffdf6"), (12.5, RED)]
    body = "".join(f'<circle cx="{c}" cy="{y}" r="{r}" fill="{col}"/>' for r, col in rings)
    petals = "".join(
        f'<ellipse cx="{c}" cy="{y - 8}" rx="2.6" ry="4.6" fill="#fffdf6"'
        f' transform="rotate({a} {c} {y})"/>'
        for a in range(0, 360, 45)
    )
    return body + petals + f'<circle cx="{c}" cy="{y}" r="3.2" fill="{NAVY}"/>'


def one_bamboo() -> str:
    """幺鸡: a bird standing on a bamboo twig."""
    return (
        # tail feathers
        f'<path d="M31 40 C 40 30, 50 22, 52 10 C 49 22, 44 32, 34 43 Z" fill="{GREEN}"/>'
        f'<path d="M31 42 C 43 38, 52 33, 55 22 C 53 35, 45 42, 34 46 Z" fill="{BLUE}"/>'
        f'<path d="M30 44 C 42 45, 50 44, 54 38 C 51 47, 42 50, 32 49 Z" fill="{RED}"/>'
        # body, wing, head
        f'<ellipse cx="25" cy="43" rx="11" ry="8.5" fill="{GREEN}"/>'
        f'<path d="M18 41 C 24 36, 32 38, 33 45 C 27 42, 22 43, 18 41 Z" fill="{BLUE}"/>'
        f'<circle cx="16" cy="31" r="6.5" fill="{RED}"/>'
        '<circle cx="14.5" cy="29.5" r="1.4" fill="#fffdf6"/>'
        f'<circle cx="14.5" cy="29.5" r="0.7" fill="{NAVY}"/>'
        '<path d="M10 31 L 5 33.5 L 10 34 Z" fill="#d9a21b"/>'
        f'<path d="M15 24.5 C 15 21, 18 19, 20 20 C 18 21, 17.5 23, 18 25 Z" fill="{RED}"/>'
        # legs and the twig
        f'<path d="M22 50 L 20 60 M 28 50 L 29 60" stroke="{RED}" stroke-width="1.6"/>'
        f'<rect x="8" y="59.5" width="42" height="4" rx="2" fill="{GREEN}"/>'
    )


def white_dragon() -> str:
    """白板: an empty face with a blue frame."""
    return (
        f'<rect x="11" y="10" width="38" height="54" rx="3" fill="none" stroke="{BLUE}"'
        ' stroke-width="3"/>'
        f'<rect x="16" y="15" width="28" height="44" rx="2" fill="none" stroke="{BLUE}"'
        ' stroke-width="1.2"/>'
    )


def back() -> str:
    """A tile face down: a lattice on green."""
    lines = "".join(
        f'<path d="M{x} 6 L {x + 24} 68" stroke="#fff" stroke-width="0.8" opacity="0.18"/>'
        f'<path d="M{x + 24} 6 L {x} 68" stroke="#fff" stroke-width="0.8" opacity="0.18"/>'
        for x in range(-12, 60, 10)
    )
    frame = (
        '<rect x="7" y="7" width="46" height="60" rx="4" fill="none" stroke="#fff"'
        ' stroke-width="1" opacity="0.35"/>'
    )
    clip = '<clipPath id="k"><rect x="1.5" y="1.5" width="57" height="72" rx="6"/></clipPath>'
    return f'{clip}<g clip-path="url(#k)">{lines}</g>{frame}'


def path(d: str, color: str) -> str:
    return f'<path d="{d}" fill="{color}"/>'


NAMES: Final = {  # Chinese and English, for the <title> a browser shows
    "m": ("万", "characters"),
    "p": ("筒", "dots"),
    "s": ("条", "bamboo"),
}
HONOURS: Final = {
    "E": ("東", "东风 East wind", NAVY),
    "S": ("南", "南风 South wind", NAVY),
    "W": ("西", "西风 West wind", NAVY),
    "N": ("北", "北风 North wind", NAVY),
    "C": ("中", "红中 Red dragon", RED),
    "F": ("發", "发财 Green dragon", GREEN),
}


def faces(glyphs: Glyphs) -> dict[str, str]:
    out: dict[str, str] = {}
    for n in range(1, 10):
        numeral = NUMERALS[n - 1]
        out[f"{n}m"] = tile(
            path(glyphs.path(numeral, 12, 6, 36, 28), NAVY)
            + path(glyphs.path("萬", 11, 36, 38, 34), RED),
            f"{numeral}万 {n} of characters",
        )
        dots = one_dot() if n == 1 else "".join(dot(x, y, _DOT_R[n], c) for x, y, c in _DOTS[n])
        out[f"{n}p"] = tile(dots, f"{numeral}筒 {n} of dots")
        sticks = (
            one_bamboo()
            if n == 1
            else "".join(stick(x, y, _STICK_H[n], c) for x, y, c in _STICKS[n])
        )
        out[f"{n}s"] = tile(sticks, ("幺鸡" if n == 1 else f"{numeral}条") + f" {n} of bamboo")
    for key, (char, title, color) in HONOURS.items():
        out[key] = tile(path(glyphs.path(char, 9, 10, 42, 54), color), title)
    out["P"] = tile(white_dragon(), "白板 White dragon")
    out["back"] = tile(back(), "a tile face down", back=True)
    return out


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, svg in faces(Glyphs(FONT)).items():
        (OUT / f"{name}.svg").write_text(svg, encoding="utf-8")
    print(f"wrote {len(list(OUT.glob('*.svg')))} tiles to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
