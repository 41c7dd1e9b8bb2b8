"""The social preview image (static/social.png, 1200x630), drawn with Pillow.

The PNG is committed as package data; Pillow (the dev extra) is needed only to redraw it:
`python -m leaderboard.social_image`. A test redraws it and compares the bytes.
"""

from __future__ import annotations

import io
from importlib import resources
from pathlib import Path

SIZE = (1200, 630)
INK, PAPER, GREEN, PALE = (31, 35, 40), (255, 255, 255), (45, 164, 78), (143, 217, 162)
BARS = ((0.92, PALE), (0.6, PALE), (0.78, GREEN), (0.35, (255, 171, 168)), (1.0, GREEN), (0.5, PALE))


def social_png() -> bytes:
    """The image as PNG bytes (the same bytes for the same Pillow version)."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", SIZE, INK)
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle((80, 80, 176, 176), radius=20, fill=PAPER)
    for index, (height, colour) in enumerate(((0.45, PALE), (0.7, GREEN), (0.95, INK))):
        x = 96 + index * 26
        draw.rounded_rectangle((x, 160 - 64 * height, x + 16, 160), radius=3, fill=colour)
    draw.text((204, 88), "PostTrain Arena", font=ImageFont.load_default(72), fill=PAPER)
    draw.text((82, 230), "RL environments ranked by how much they improve a model\non a private held-out suite, "
              "with every number's uncertainty.", font=ImageFont.load_default(38), fill=(201, 209, 217), spacing=14)
    for index, (height, colour) in enumerate(BARS):
        x = 82 + index * 176
        draw.rounded_rectangle((x, 560 - 190 * height, x + 140, 560), radius=10, fill=colour)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


def packaged_png() -> bytes:
    """The committed image."""
    return resources.files("leaderboard").joinpath("static", "social.png").read_bytes()


if __name__ == "__main__":
    target = Path(__file__).resolve().parent / "static" / "social.png"
    target.write_bytes(social_png())
    print(f"wrote {target}")
