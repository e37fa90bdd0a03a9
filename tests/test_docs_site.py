"""The documentation site builds offline without warnings, and its pages work in a real browser.

The site is built as ``make docs`` builds it (Sphinx, ``-W``), served over HTTP from this process and
opened in headless Chromium. A harness page loads each checked page in a same-origin frame, makes
every image load eagerly, waits until the images have settled and MathJax has typeset every formula,
and writes what it found into its own DOM, which ``chromium --dump-dom`` prints. The test then
requires: the index links the manual and the published notebooks; the notebook page has figures and
every one of them decoded (``naturalWidth > 0``); its and the API page's formulas were typeset by the MathJax
bundled with the site (no request leaves the machine), with no MathJax error.

The build is checked everywhere; the browser checks are skipped only when no Chromium is installed
(Debian: ``apt-get install chromium``).
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
NOTEBOOK_PAGE = "notebooks/05_msa_rich_vs_lazy.html"
API_PAGE = "api/generated/hgutils.verdicts.html"
PAGES = ("index.html", NOTEBOOK_PAGE, API_PAGE)

HARNESS = """<!doctype html><html><body><pre id="result">pending</pre><script>
const pages = %(pages)s, out = {};
function inspect(doc) {
  const imgs = [...doc.images];
  // Sphinx's formula containers; once MathJax has typeset one it holds the TeX as a math/tex script
  // and the rendered .MathJax / .MathJax_Display element (whose own spans also carry class "math")
  const boxes = [...doc.querySelectorAll(".math.notranslate")];
  const maths = boxes.length;
  const typeset = boxes.filter(b =>
    b.querySelector('script[type^="math/tex"]') && b.querySelector(".MathJax, .MathJax_Display")).length;
  const mathjax = [...doc.scripts].map(s => s.src).filter(s => /mathjax/i.test(s));
  return {
    title: doc.title,
    links: [...doc.querySelectorAll("a[href]")].map(a => a.getAttribute("href")),
    images: imgs.length,
    settled: imgs.every(i => i.complete),
    broken: imgs.filter(i => i.complete && i.naturalWidth === 0).map(i => i.getAttribute("src")),
    maths: maths, typeset: typeset,
    mathjax_errors: doc.querySelectorAll(".MathJax_Error, merror").length,
    mathjax_src: mathjax,
  };
}
function next(i) {
  if (i >= pages.length) { document.getElementById("result").textContent = JSON.stringify(out); return; }
  const frame = document.createElement("iframe"), t0 = Date.now();
  frame.width = 1200; frame.height = 900;
  frame.onload = () => {
    const doc = frame.contentDocument;
    for (const img of doc.images) img.loading = "eager";
    const poll = () => {
      const r = inspect(doc);
      const done = r.settled && r.typeset >= r.maths;
      if (done || Date.now() - t0 > %(wait_ms)d) { r.timed_out = !done; out[pages[i]] = r; next(i + 1); }
      else setTimeout(poll, 200);
    };
    poll();
  };
  frame.src = pages[i];
  document.body.appendChild(frame);
}
next(0);
</script></body></html>
"""


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if path := shutil.which(name):
            return path
    return None


def build_site(out: Path) -> subprocess.CompletedProcess:
    """``make docs``'s build: from scratch, warnings as errors."""
    shutil.rmtree(DOCS / "api" / "generated", ignore_errors=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT), HGUTILS_PROGRESS="0", MPLBACKEND="Agg")
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-W", "--keep-going", str(DOCS), str(out)]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=900)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site as ``make docs`` builds it; built with or without Chromium, so that a docstring Sphinx warns
    about fails here too (only the browser checks need Chromium)."""
    out = tmp_path_factory.mktemp("site") / "html"
    proc = build_site(out)
    assert proc.returncode == 0, f"the docs build failed or warned:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    return out


def test_site_builds_without_warnings(site: Path) -> None:
    assert (site / "index.html").is_file() and (site / API_PAGE).is_file()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    requested: list[str] = []

    def log_message(self, *args) -> None:  # keep pytest's output clean
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        _Quiet.requested.append(self.path)
        if self.path == "/__harness__.html":
            body = self.server.harness.encode()  # type: ignore[attr-defined]
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()


def browse(site: Path, pages: tuple[str, ...], wait_ms: int = 30_000) -> dict:
    """Open ``pages`` of the built ``site`` in headless Chromium; what the harness found on each (``wait_ms``
    per page for the images and formulas to settle)."""
    browser = chromium()
    if browser is None:
        pytest.skip("no Chromium installed (Debian: apt-get install chromium)")
    handler = functools.partial(_Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.harness = HARNESS % {"pages": json.dumps(list(pages)), "wait_ms": wait_ms}  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/__harness__.html"
        with tempfile.TemporaryDirectory() as profile:  # a fresh profile: no state, no lock shared with others
            cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
            cmd += ["--no-first-run", f"--user-data-dir={profile}", "--dump-dom", url]
            cmd += [f"--virtual-time-budget={len(pages) * wait_ms + 15_000}"]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    finally:
        server.shutdown()
        server.server_close()
    found = re.search(r'<pre id="result">(.*?)</pre>', proc.stdout, re.S)
    assert found, f"Chromium printed no harness result (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    text = found.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    assert text != "pending", "the harness did not finish within Chromium's time budget"
    return json.loads(text)


def test_site_pages_load_their_figures_and_formulas(site):
    _Quiet.requested.clear()
    found = browse(site, PAGES, wait_ms=30_000)

    index = found["index.html"]
    assert index["title"].startswith("hgutils"), index["title"]
    for target in ("running.html", "architecture.html", NOTEBOOK_PAGE, "api.html"):
        assert target in index["links"], f"the index does not link {target}"

    nb = found[NOTEBOOK_PAGE]
    assert not nb["timed_out"], f"{NOTEBOOK_PAGE}: images or formulas not settled after the wait: {nb}"
    assert nb["images"] >= 3, f"{NOTEBOOK_PAGE}: expected the notebook's figures, found {nb['images']} images"
    assert not nb["broken"], f"{NOTEBOOK_PAGE}: images that did not load: {nb['broken']}"
    assert nb["maths"] > 0 and nb["typeset"] == nb["maths"] and nb["mathjax_errors"] == 0, (
        f"{NOTEBOOK_PAGE}: MathJax typeset {nb['typeset']} of the markdown cells' {nb['maths']} formulas"
    )

    api = found[API_PAGE]
    assert api["maths"] > 0, f"{API_PAGE} has no formulas to render"
    assert not api["timed_out"] and api["typeset"] >= api["maths"], (
        f"{API_PAGE}: MathJax typeset {api['typeset']} of {api['maths']} formulas"
    )
    assert api["mathjax_errors"] == 0
    assert api["mathjax_src"] and all(s.startswith("http://127.0.0.1:") for s in api["mathjax_src"]), (
        f"MathJax must come from the site itself, not a CDN: {api['mathjax_src']}"
    )
    assert any("/_static/mathjax/" in p for p in _Quiet.requested), "no MathJax file was served by the site"


def test_a_broken_figure_is_caught(site, tmp_path):
    """The check bites: the same notebook page with one figure's file missing fails it."""
    broken = tmp_path / "html"
    shutil.copytree(site, broken)
    page = (broken / NOTEBOOK_PAGE).read_text(encoding="utf-8")
    first = re.search(r'<img[^>]*src="\.\./(_images/[^"]+)"', page)
    assert first, "no figure on the notebook page"
    (broken / first.group(1)).unlink()
    nb = browse(broken, (NOTEBOOK_PAGE,), wait_ms=20_000)[NOTEBOOK_PAGE]
    assert nb["broken"] == [f"../{first.group(1)}"]
