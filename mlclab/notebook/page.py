"""The viewer without a kernel: one self-contained HTML file, and the ``text/html`` fallback
of every viewer display (as treescope does it: plain HTML with its script inline).

Both carry the viewer's front end (``bundle.bundle(standalone=True)``), its CSS and its state
(the drawn view models) inside the page; nothing is fetched, so a file opened from disk, an
``nbconvert --to html`` export or a page with no network shows the same interactive picture:
pan, zoom, select, search, hover links, overlays. Folding needs a kernel to lay the graph out
again, so there the fold controls say so. Without script (an untrusted notebook, GitHub) the
static drawing inside shows instead.

The state is packed as treescope packs its payload: JSON, zlib-compressed, base64-encoded
(:func:`packed`; a ResNet-50 viewer's 184 kB of JSON become 23 kB), and unpacked in the page by
the browser's ``DecompressionStream`` (``static/unpack.js``); a browser without one keeps the
static drawing under a note that says so.
"""
from __future__ import annotations

import base64
import html
import json
import uuid
import zlib

from .browser_layout import graphviz_module, needs_module
from .bundle import ENTRY, STATIC, bundle

# The traits a page needs to draw the viewer as it is now.
STATE = ("views", "view", "source", "highlight", "annotations", "selected_node", "search",
         "unfolded", "open_modules", "folded", "uid", "scrub", "graphviz_wasm")


def script_json(value) -> str:
    """``value`` as JSON that cannot end the ``<script>`` element holding it."""
    text = json.dumps(value, ensure_ascii=False)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def packed(value) -> str:
    """``value`` as JSON, zlib-compressed and base64-encoded (``static/unpack.js`` reads it
    back); base64 cannot end the ``<script>`` element holding it."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return base64.b64encode(zlib.compress(text.encode("utf-8"), 9)).decode("ascii")


def unpacked_state(html: str) -> dict:
    """The state a page or twin carries (``packed``), read back from its HTML: what a saved
    file holds, for tools and tests that open one without a browser."""
    import re

    found = re.search(r'class="mlclab-state"[^>]*>(.*?)</script>', html, re.S)
    if found is None:
        raise ValueError("html: no mlclab viewer state in this page")
    return json.loads(zlib.decompress(base64.b64decode(found.group(1).strip())))


def state_of(viewer) -> dict:
    """The viewer's traits a page draws from; views not drawn yet are left out."""
    # A viewer kind's own traits (the scrubber's passes) travel too: ``page_state``.
    names = STATE + tuple(getattr(viewer, "page_state", ()))
    state = {name: getattr(viewer, name) for name in names}
    state["views"] = {name: v for name, v in viewer.views.items() if not v.get("pending")}
    if state["view"] not in state["views"]:
        state["view"] = next(iter(state["views"]), "")
    # A page has no kernel to ask for the WebAssembly Graphviz: it carries it when a view
    # needs it, whether or not the live widget has asked for it yet.
    if needs_module(state["views"]):
        state["graphviz_wasm"] = graphviz_module()
    return state


def fragment(viewer) -> str:
    """The viewer as an HTML fragment: its static drawing, replaced by the interactive viewer
    where scripts run. Every instance runs in its own function scope."""
    return standalone_fragment(state_of(viewer), viewer.static_html())


def standalone_fragment(state: dict, static: str, entry: str = ENTRY) -> str:
    """A display as an HTML fragment: ``static`` (its drawing without script), replaced where
    scripts run by the front end of ``entry`` (``viewer.js``, ``compare.js``, ``layout.js``)
    drawing ``state`` (its traits) over a local model. A ``graphviz_wasm`` in ``state`` (the
    WebAssembly Graphviz, where no ``dot`` drew the views) travels beside the packed state as
    plain text (:func:`graphviz_element`), once: packing it would make it larger."""
    state = dict(state)
    module = state.pop("graphviz_wasm", "")
    uid = html.escape(state.get("uid") or uuid.uuid4().hex, quote=True)
    css = (STATIC / "viewer.css").read_text(encoding="utf-8").replace("</", "<\\/")
    # One function scope per display; the boot (static/boot.js) reads the state and draws.
    boot = ("(function () {\n" + bundle(standalone=True, entry=entry) + "\n"
            "bootPage(document.currentScript.parentElement, mlclabViewer.render);\n"
            "})();\n")
    boot = boot.replace("</script", "<\\/script")
    return (f'<div class="mlclab-fallback" data-mlclab-for="{uid}">'
            f"<style>{css}</style>"
            f'<div class="mlclab-mount">{static}</div>'
            '<script type="application/octet-stream" class="mlclab-state" '
            f'data-encoding="zlib+base64">{packed(state)}</script>'
            f"{graphviz_element(module)}"
            f"<script>{boot}</script></div>")


def graphviz_element(module: str) -> str:
    """The WebAssembly Graphviz's ES module text as a page carries it (``layout.js``'s
    ``moduleOnPage`` reads it): a script element the browser never runs. Its text is put in
    as it is, so one that could end the element is refused rather than broken."""
    if not module:
        return ""
    lowered = module.lower()
    if "</script" in lowered or "<!--" in lowered:
        raise ValueError("graphviz_wasm: the module's text holds '</script' or '<!--' and "
                         "cannot be carried in a page as it is")
    return f'<script type="text/plain" class="mlclab-graphviz">{module}</script>'


def carried_graphviz(html_text: str) -> str:
    """The WebAssembly Graphviz a page or twin carries ("" for none): for tools and tests."""
    import re

    found = re.findall(r'<script[^>]*\bclass="mlclab-graphviz"[^>]*>(.*?)</script>',
                       html_text, re.S)
    return found[0] if found else ""


def twin_fragment(uid: str, static: str) -> str:
    """``static`` (a display's HTML, which may hold pictures that lay themselves out) as the
    ``text/html`` twin of the live widget whose graph viewer has ``uid``: that viewer hides it
    where it draws, and a twin drawn after it stands down (``static/twin.js``)."""
    uid = html.escape(uid, quote=True)
    check = ("(function () {\n" + bundle(entry="twin.js") + "\n"
             "var root = document.currentScript.parentElement;\n"
             "if (drawnLive(root)) root.hidden = true;\n})();\n").replace("</script", "<\\/script")
    return (f'<div class="mlclab-fallback" data-mlclab-for="{uid}">{static}'
            f"<script>{check}</script></div>")


def page(viewer, title: str = "mlclab graph") -> str:
    """A complete HTML document of the viewer: opens from disk, no server, no network."""
    return document(fragment(viewer), title)


def document(body: str, title: str) -> str:
    """A complete HTML document around a display's ``fragment``."""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title>"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<style>body{margin:16px;font-family:system-ui,sans-serif}</style></head><body>"
            f"{body}</body></html>\n")
