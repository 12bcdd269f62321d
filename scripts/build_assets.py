"""Copy the review app's front-end assets from ``node_modules`` (``npm ci``) into ``static/vendor``.

The assets come from the npm registry at set-up time, pinned by ``package-lock.json``; nothing vendored is
committed. The manifest below is the whole list the templates may load, so a missing file fails set-up
instead of a page.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NODE_MODULES = REPO / "node_modules"
VENDOR = REPO / "static" / "vendor"

#: (source under node_modules, destination under static/vendor); directories are copied whole.
MANIFEST: tuple[tuple[str, str], ...] = (
    ("htmx.org/dist/htmx.min.js", "htmx.min.js"),
    ("katex/dist/katex.min.js", "katex/katex.min.js"),
    ("katex/dist/katex.min.css", "katex/katex.min.css"),
    ("katex/dist/fonts", "katex/fonts"),
    ("chart.js/dist/chart.umd.min.js", "chart.umd.min.js"),
    ("@highlightjs/cdn-assets/highlight.min.js", "highlight/highlight.min.js"),
    ("@highlightjs/cdn-assets/styles/github.min.css", "highlight/github.min.css"),
    ("axe-core/axe.min.js", "axe.min.js"),
)


def build(node_modules: Path = NODE_MODULES, vendor: Path = VENDOR) -> list[Path]:
    """Copy every manifest entry; raise ``FileNotFoundError`` naming the first one missing."""
    missing = [src for src, _ in MANIFEST if not (node_modules / src).exists()]
    if missing:
        raise FileNotFoundError(f"not in {node_modules} (run `npm ci`): {', '.join(missing)}")
    if vendor.exists():
        shutil.rmtree(vendor)
    written = []
    for src, dest in MANIFEST:
        target = vendor / dest
        target.parent.mkdir(parents=True, exist_ok=True)
        if (node_modules / src).is_dir():
            shutil.copytree(node_modules / src, target)
        else:
            shutil.copyfile(node_modules / src, target)
        written.append(target)
    return written


def main() -> int:
    try:
        written = build()
    except FileNotFoundError as error:
        print(f"build_assets: {error}", file=sys.stderr)
        return 1
    print(f"build_assets: {len(written)} assets in {VENDOR.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
