"""The web client's first paint and bytes, cold and warm (issue 41): the start page and a
table page, in Debian's Chromium (Playwright, headless) against ``fangcheng serve`` on
loopback.

    .venv/bin/python benchmarks/bench_client.py [--src DIR] [--runs N]

``--src``: the source tree to serve (default this one's ``src``; an export of another
commit, ``git archive COMMIT src | tar -x -C DIR``, measures it the same way). Cold: a
new browser profile (empty cache); warm: a second visit in the same profile. For each:
first contentful paint (the browser's own ``paint`` entry), when the page is usable (the
start page's practice buttons; the table's own hand drawn), the bytes that came over the
network (the sum of the responses' encoded lengths, CDP ``Network.loadingFinished``)
and how many answers did. Medians of ``--runs``. Figures: benchmarks/history/.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(src: Path, tmp: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = _port()
    env = {**os.environ, "PYTHONPATH": str(src)}
    command = [sys.executable, "-m", "fangcheng", "serve", "--port", str(port)]
    command += ["--db", f"sqlite:///{tmp / 'bench.db'}", "--bot-ms", "300"]
    server = subprocess.Popen(command, env=env, cwd=tmp, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    for _ in range(200):
        try:
            urllib.request.urlopen(url, timeout=1).read()
            return server, url
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("the server did not start")


def _post(url: str, body: dict[str, Any], token: str | None = None) -> dict[str, Any]:
    headers = {"content-type": "application/json"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, json.dumps(body).encode(), headers)
    answer: dict[str, Any] = json.loads(urllib.request.urlopen(request, timeout=10).read())
    return answer


def _visit(context: Any, url: str, ready: str) -> dict[str, float]:
    """One visit: paint, usable, bytes and answers over the network."""
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    sizes: list[float] = []
    cdp.on("Network.loadingFinished", lambda e: sizes.append(e["encodedDataLength"]))
    start = time.perf_counter()
    page.goto(url)
    page.wait_for_selector(ready, timeout=30_000)
    usable = (time.perf_counter() - start) * 1000
    paint = page.evaluate(
        "() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1"
    )
    page.wait_for_timeout(300)  # the last answers (tiles) land
    page.close()
    return {"paint_ms": paint, "usable_ms": usable, "bytes": sum(sizes), "answers": len(sizes)}


def measure(src: Path, runs: int) -> dict[str, dict[str, float]]:
    results: dict[str, list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        server, url = _serve(src, Path(tmp))
        try:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            for _ in range(runs):
                session = _post(url + "api/session", {"name": "bench"})
                code = _post(url + "api/practice", {"rules": "sichuan"}, session["token"])["code"]
                saved = json.dumps(
                    {"token": session["token"], "name": "bench", "person": session["person"]}
                )
                for where, address, ready in (
                    ("start", url, ".practice"),
                    ("table", f"{url}#/t/{code}", ".hand.mine .tile[data-tile]"),
                ):
                    context = browser.new_context(viewport={"width": 1366, "height": 768})
                    context.add_init_script(
                        f"localStorage.setItem('fangcheng.session', {json.dumps(saved)})"
                    )
                    for visit in ("cold", "warm"):
                        results.setdefault(f"{where} {visit}", []).append(
                            _visit(context, address, ready)
                        )
                    context.close()
            browser.close()
        finally:
            server.terminate()
            server.wait(timeout=10)
    return {k: {m: statistics.median(r[m] for r in v) for m in v[0]} for k, v in results.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, default=ROOT / "src")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    figures = measure(args.src.resolve(), args.runs)
    print(f"{'page':12} {'paint ms':>9} {'usable ms':>10} {'KB':>8} {'answers':>8}")
    for name, f in figures.items():
        print(
            f"{name:12} {f['paint_ms']:9.0f} {f['usable_ms']:10.0f}"
            f" {f['bytes'] / 1024:8.1f} {f['answers']:8.0f}"
        )


if __name__ == "__main__":
    main()
