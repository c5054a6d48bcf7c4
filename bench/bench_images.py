"""Image tools: listing 10,000 images page by page, loading a 24-megapixel JPEG and a 500-frame GIF.

Goals (issue 11): a kb_list_images page under 20 ms warm; a load within 2x of pillow's own
decode + encode of the same file, measured here in the same run; peak memory of a load bounded
by the 25 MiB cap plus one decoded frame.

* Listing goes through the dispatcher (argument validation, engine, result model), page after
  page with the default pageSize 50 and with 200, over one folder of 10,000 images; the
  baseline is the bare ``os.scandir`` of that folder plus a sort (what any listing must pay).
* A load is timed through the dispatcher too (read, SHA-256, signature check, GIF preview)
  plus the base64 encoding the MCP layer adds. Baselines: pillow decoding the file and
  encoding it again in its own format (JPEG), or decoding the first frame and writing the
  PNG preview (GIF); for the GIF also pillow decoding all 500 frames.
* Peak memory is measured in a fresh process per load: the peak resident set (``VmHWM``,
  reset through ``/proc/self/clear_refs``) minus the resident set just before the call.

Run: ``python bench/bench_images.py``.
"""

from __future__ import annotations

import base64
import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from PIL import Image

MIB = 1024 * 1024


def workspace(root: Path):  # type: ignore[no-untyped-def]
    from local_vector_search_mcp.config import CliOptions, load_settings
    from local_vector_search_mcp.workspace import Workspace

    settings = load_settings(CliOptions(root=str(root), embedding_provider="none"), cwd=root, environ={})
    return Workspace(settings)


def best_of(runs: int, fn) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def make_jpeg(path: Path) -> None:
    """6000 x 4000 = 24 MP: a gradient with fine noise, so the JPEG has a photo-like size."""
    width, height = 6000, 4000
    gradient = Image.linear_gradient("L").resize((width, height))
    noise = Image.effect_noise((width, height), 40)
    image = Image.merge("RGB", (gradient, noise, gradient.transpose(Image.Transpose.FLIP_LEFT_RIGHT)))
    image.save(path, format="JPEG", quality=90)


def make_gif(path: Path, frames: int = 500, size: tuple[int, int] = (640, 480)) -> None:
    """A 640 x 480 animation: a gradient with a moving noisy square (a few MiB, like a screen capture)."""
    from PIL import ImageDraw

    base = Image.linear_gradient("L").resize(size).convert("RGB")
    patch = Image.effect_noise((80, 80), 60).convert("RGB")
    images = []
    for i in range(frames):
        frame = base.copy()
        frame.paste(patch, ((i * 7) % (size[0] - 80), (i * 3) % (size[1] - 80)))
        ImageDraw.Draw(frame).text((10, 10), f"frame {i}", fill=(255, 0, 0))
        images.append(frame.convert("P", palette=Image.Palette.ADAPTIVE))
    images[0].save(path, format="GIF", save_all=True, append_images=images[1:], duration=40, loop=0)


def listing(root: Path) -> list[str]:
    from local_vector_search_mcp.dispatch import invoke

    folder = root / "images"
    folder.mkdir()
    png = io.BytesIO()
    Image.new("RGB", (2, 2)).save(png, format="PNG")
    for n in range(10_000):
        (folder / f"img-{n:05d}.png").write_bytes(png.getvalue())
    ws = workspace(root)
    lines = []
    baseline = best_of(5, lambda: sorted(e.name.lower() for e in os.scandir(folder)))
    for page_size in (50, 200):

        def pages(page_size: int = page_size) -> list[float]:
            times, cursor, seen = [], None, 0
            while True:
                args: dict[str, object] = {"pageSize": page_size}
                if cursor:
                    args["cursor"] = cursor
                start = time.perf_counter()
                result = invoke(ws, "kb_list_images", args)
                times.append(time.perf_counter() - start)
                assert isinstance(result, dict)
                seen += len(result["images"])
                cursor = result["nextCursor"]
                if cursor is None:
                    assert seen == 10_000, seen
                    return times

        pages()  # cold: fills the OS caches
        times = pages()
        worst, mid = max(times), median(times)
        lines.append(
            f"list 10,000 images, pageSize {page_size:<3} ({len(times)} pages): median {mid * 1000:6.1f} ms/page, "
            f"max {worst * 1000:6.1f} ms; baseline scandir+sort {baseline * 1000:5.1f} ms, "
            f"ratio {mid / baseline:4.2f}; goal < 20 ms warm: {_verdict(worst, mid)}"
        )
    return lines


_WORKSPACES: dict[Path, object] = {}


def _verdict(worst: float, mid: float) -> str:
    if worst < 0.020:
        return "met"
    return "median met" if mid < 0.020 else "NOT met"


def load_once(root: Path, rel: str) -> None:
    from local_vector_search_mcp.dispatch import invoke

    ws = _WORKSPACES.setdefault(root, workspace(root))  # one server process serves many calls
    result = invoke(ws, "kb_load_image", {"path": rel})  # type: ignore[arg-type]
    block = result.blocks[0]  # type: ignore[union-attr]
    base64.b64encode(block.data)  # what the MCP layer sends


def pillow_jpeg(path: Path) -> None:
    with Image.open(path) as image:
        image.load()
        image.save(io.BytesIO(), format="JPEG", quality=90)


def pillow_gif_first(path: Path) -> None:
    with Image.open(path) as image:
        image.seek(0)
        image.convert("RGBA").save(io.BytesIO(), format="PNG")


def pillow_gif_all(path: Path) -> None:
    with Image.open(path) as image:
        for n in range(image.n_frames):
            image.seek(n)
            image.load()


def peak_memory(root: Path, rel: str) -> float:
    """Peak extra resident MiB during one load, in a fresh process."""
    code = f"""
import sys, gc
sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})
sys.path.insert(0, {str(Path(__file__).resolve().parent.parent / "src")!r})
from pathlib import Path
import bench_images as b
from local_vector_search_mcp.dispatch import invoke
import PIL.Image, PIL.PngImagePlugin, PIL.GifImagePlugin, hashlib, base64
b.load_once(Path({str(root)!r}), 'images/img-00000.png')  # warm imports and caches
gc.collect()
def status(key):
    for line in open('/proc/self/status'):
        if line.startswith(key):
            return int(line.split()[1]) / 1024
before = status('VmRSS:')
open('/proc/self/clear_refs', 'w').write('5')
b.load_once(Path({str(root)!r}), {rel!r})
print(status('VmHWM:') - before)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return float(out.split()[-1])


def loads(root: Path) -> list[str]:
    folder = root / "images"
    jpeg, gif = folder / "photo-24mp.jpg", folder / "anim-500.gif"
    make_jpeg(jpeg)
    make_gif(gif)
    lines = []
    with Image.open(gif) as image:
        frame_mib = image.size[0] * image.size[1] * 4 / MIB
    with Image.open(jpeg) as image:
        jpeg_frame_mib = image.size[0] * image.size[1] * 3 / MIB
    cases = [
        ("24 MP JPEG", jpeg, pillow_jpeg, "pillow decode + JPEG encode", jpeg_frame_mib),
        ("500-frame GIF", gif, pillow_gif_first, "pillow first frame + PNG encode", frame_mib),
    ]
    for label, path, baseline_fn, baseline_label, frame in cases:
        rel = f"images/{path.name}"
        ours = best_of(3, lambda rel=rel: load_once(root, rel))
        base = best_of(3, lambda path=path, fn=baseline_fn: fn(path))
        size = path.stat().st_size / MIB
        peak = peak_memory(root, rel)
        bound = 25 + frame
        lines.append(
            f"load {label} ({size:.1f} MiB): ours {ours * 1000:7.1f} ms; {baseline_label} {base * 1000:7.1f} ms; "
            f"ratio {ours / base:4.2f}; goal <= 2: {'met' if ours <= 2 * base else 'NOT met'}"
        )
        met = "met" if peak <= bound else "NOT met"
        lines.append(
            f"  peak memory of the load {peak:6.1f} MiB (file {size:.1f} MiB, base64 {size * 4 / 3:.1f} MiB, "
            f"one decoded frame {frame:.1f} MiB); bound 25 MiB + one frame = {bound:.1f} MiB: {met}"
        )
        if path is gif:
            every = best_of(1, lambda: pillow_gif_all(gif))
            lines.append(f"  (pillow decoding all 500 frames: {every * 1000:.0f} ms; ours decodes the first only)")
    return lines


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for line in listing(root):
            print(line, flush=True)
        for line in loads(root):
            print(line, flush=True)


if __name__ == "__main__":
    main()
